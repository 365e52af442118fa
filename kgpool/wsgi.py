import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgpool.settings")
application = get_wsgi_application()
# Import the URLconf, and with it every view, at boot: otherwise each server worker pays ~300 ms of imports on
# its first request, which shows as the p95 of a freshly started server.
get_resolver().url_patterns
