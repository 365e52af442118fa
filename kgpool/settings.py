"""kgpool settings, read from the environment.

With nothing set, kgpool runs embedded: a SQLite file under var/ and Celery tasks executed in-process.
DATABASE_URL switches to PostgreSQL (psycopg 3); CELERY_BROKER_URL switches to real Celery workers.
"""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from kgpool.env import DEVELOPMENT_SECRET_KEY, env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG and env_bool("KGPOOL_REQUIRE_SECRET_KEY", False):
        raise ImproperlyConfigured("SECRET_KEY must be set in production (KGPOOL_REQUIRE_SECRET_KEY=true)")
    # Fine for the embedded default on localhost; production sets SECRET_KEY (see README, Security).
    SECRET_KEY = DEVELOPMENT_SECRET_KEY

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular_sidecar",
    "drf_spectacular",
    "axes",
    "kgpool.apps.KgpoolConfig",
    "pooling",
    "annotation",
    "evaluation",
]

MIDDLEWARE = [
    "kgpool.middleware.ContentSecurityPolicyMiddleware",  # outermost: every response gets the header
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last: turns a lockout raised during authentication into the 429 answer (see Security below).
    "axes.middleware.AxesMiddleware",
]
# The load benchmark's query count per response (bench/load_annotation.py); off in normal use.
KGPOOL_COUNT_QUERIES = env_bool("KGPOOL_COUNT_QUERIES", False)
if KGPOOL_COUNT_QUERIES:
    MIDDLEWARE.insert(0, "kgpool.middleware.QueryCountMiddleware")

# django-axes first: it refuses a locked-out (username, address) before the password is even checked.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]

ROOT_URLCONF = "kgpool.urls"
WSGI_APPLICATION = "kgpool.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Where kgpool keeps files: the embedded SQLite database and large arrays (rankings, scores, checkpoints).
VAR_DIR = Path(env_str("KGPOOL_VAR_DIR", str(BASE_DIR / "var")))
# Large arrays live here, referenced from the database by relative path; share it between hosts.
STORAGE_DIR = Path(env_str("KGPOOL_STORAGE_DIR", str(VAR_DIR / "storage")))

DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60))}
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"]["TEST"] = {"NAME": env_str("DATABASE_TEST_NAME") or None}
        # Server-side parameters + psycopg's automatic prepared statements: a query run DB_PREPARE_THRESHOLD
        # times on a (persistent, CONN_MAX_AGE) connection is parsed and planned once; PostgreSQL keeps a custom
        # plan where the generic one is worse (e.g. the partial queue index). Halves PostgreSQL's CPU per API
        # request. Not with a transaction-pooling pgbouncer (DB_SERVER_SIDE_BINDING=false there).
        if env_bool("DB_SERVER_SIDE_BINDING", True):  # added to the URL's own options (?sslmode=require ...)
            DATABASES["default"].setdefault("OPTIONS", {}).update(server_side_binding=True,
                                                                  prepare_threshold=env_int("DB_PREPARE_THRESHOLD", 5))
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "kgpool.sqlite3",
            # WAL lets the web server read while a worker or import writes; the timeout waits out writers.
            "OPTIONS": {
                "timeout": 30,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))  # filled by collectstatic in production
try:  # WhiteNoise warns on every start while the folder is missing
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)
except OSError:
    pass
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedStaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = True

# --- Celery -------------------------------------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
# No broker configured -> run tasks in-process (the embedded default).
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env_str(
    "CELERY_RESULT_BACKEND",
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith("redis") else ("cache+memory://" if not CELERY_BROKER_URL else "rpc://"),
)
CELERY_TASK_ACKS_LATE = True  # a task killed mid-way is redelivered; tasks are idempotent
# Redis redelivers the unacknowledged task of a killed worker after this many seconds (RabbitMQ does it as
# soon as the connection drops). Keep it above the longest task. kombu only looks for such tasks every
# unacked_restore_interval s x unacked_restore_throttle (10 x 10 by default, so up to 100 s late, whatever the
# timeout): look every min(10 s, timeout) instead.
_VISIBILITY_TIMEOUT = env_int("CELERY_VISIBILITY_TIMEOUT", 3600)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": _VISIBILITY_TIMEOUT,
    "unacked_restore_interval": max(1, min(10, _VISIBILITY_TIMEOUT)),
    "unacked_restore_throttle": 1,
}
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
# Model work (training, scoring, ranking) goes to GPU hosts: `celery -A kgpool worker -Q gpu`.
KGPOOL_GPU_QUEUE = env_str("KGPOOL_GPU_QUEUE", "gpu")
CELERY_TASK_ROUTES = {
    "pooling.tasks.train_*": {"queue": KGPOOL_GPU_QUEUE},
    "pooling.tasks.rank_*": {"queue": KGPOOL_GPU_QUEUE},
    "evaluation.tasks.score_*": {"queue": KGPOOL_GPU_QUEUE},  # fills the rank cache (torch); the rest is CPU work
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A training beats a heartbeat every TRAINING_HEARTBEAT_S seconds; on another host it is stale (its process is
# gone: train_model may start it again) after TRAINING_STALE_S seconds without one (pooling/services/trainers.py).
KGPOOL_TRAINING_HEARTBEAT_S = env_int("TRAINING_HEARTBEAT_S", 30)
KGPOOL_TRAINING_STALE_S = env_int("TRAINING_STALE_S", 300)
# The most memory one batch's (questions x entities) score tensor may take when ranking (pool builds, imports);
# above it the engine scores entity blocks that fit, with the same results (issue 18: millions of entities).
KGPOOL_RANK_MEMORY_BYTES = env_int("RANK_MEMORY_MB", 512) << 20

# --- REST API -----------------------------------------------------------------------------------------
# The judging API's code path (issue 21): "fast" (few statements per request, next-item and submit answered by the
# WSGI lane without the middleware chain and DRF: annotation/api/lane.py), "drf" (the same statements under DRF's
# views) or "legacy" (the path before issue 21), the last two kept for the load benchmark's comparison
# (bench/load_annotation.py --paths legacy drf fast).
KGPOOL_JUDGING_PATH = env_str("KGPOOL_JUDGING_PATH", "fast")
# The judge and adjudicate pages save an answer and show the next item without a page load (judge.js, fetch);
# JUDGING_IN_PLACE=0 keeps the full page load per item (the speed benchmark's "before": bench/judging_speed.py).
KGPOOL_JUDGING_IN_PLACE = env_bool("JUDGING_IN_PLACE", True)
REST_FRAMEWORK = {
    # The token first: DRF answers a request it could not authenticate with the first class's challenge, so a
    # missing or wrong token gets 401 with "WWW-Authenticate: Token" (the session has none: 403, the same as a
    # member who may not do it). A request without an Authorization header goes on to the session, as before.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "kgpool.security.RateLimitedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
# Swagger UI's scripts and styles come from our own static files (drf-spectacular-sidecar), not a CDN: nothing
# third-party runs on the API docs page and it works offline.
SPECTACULAR_SETTINGS = {
    "TITLE": "kgpool API",
    "VERSION": "0.1.0",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # no deep links: Swagger UI puts each operation's link inside its expand button (a link in a button is not
    # reachable by keyboard or screen readers; axe-core's nested-interactive)
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
}

# --- Security (production) ----------------------------------------------------------------------------
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("BEHIND_HTTPS_PROXY", False) else None
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Content-Security-Policy on every response (kgpool.middleware): only kgpool's own scripts, styles, images and
# fonts, no inline script, style or event handler anywhere (templates keep them in static files; tested), no
# plugins, no framing, forms post to kgpool only. data: images are for Swagger UI's icons. CONTENT_SECURITY_POLICY
# replaces it ("" turns the header off).
KGPOOL_CONTENT_SECURITY_POLICY = env_str("CONTENT_SECURITY_POLICY", "; ".join([
    "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "font-src 'self'",
    "connect-src 'self'", "object-src 'none'", "base-uri 'self'", "form-action 'self'", "frame-ancestors 'none'",
]))
# Reverse proxies in front of kgpool that append the client address to X-Forwarded-For (0: use REMOTE_ADDR).
KGPOOL_PROXY_COUNT = env_int("KGPOOL_PROXY_COUNT", 0)

# Login rate limiting (django-axes): after LOGIN_FAILURE_LIMIT failed logins of one username from one address,
# that pair is refused with 429 for LOGIN_COOLOFF_MINUTES (a success resets the count).
AXES_ENABLED = env_bool("LOGIN_RATE_LIMIT", True)
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "kgpool.security.client_ip"
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_TEMPLATE = "registration/lockout.html"  # a page with a way back, not bare text
AXES_VERBOSE = False
# API token guessing: after this many invalid tokens from one address within the window, every token request
# from it gets 429 until the window is over (0 disables). Counted in the cache: per process with the default
# local-memory cache (so up to workers x limit); configure a shared cache for an exact limit.
KGPOOL_TOKEN_FAILURE_LIMIT = env_int("API_TOKEN_FAILURE_LIMIT", 20)
KGPOOL_TOKEN_FAILURE_WINDOW_S = env_int("API_TOKEN_FAILURE_WINDOW_S", 900)

# Reference datasets shipped beside the project (../shared/data) and inside it (datasets/).
KGPOOL_SHARED_DATA = Path(env_str("KGPOOL_SHARED_DATA", str(BASE_DIR.parent / "shared" / "data")))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
}
