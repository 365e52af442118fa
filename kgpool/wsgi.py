import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgpool.settings")
django_application = get_wsgi_application()
# The judging API's hot requests answered in front of Django (issue 21); everything else goes to Django.
from annotation.api.lane import JudgingLane  # noqa: E402 - needs the apps loaded by get_wsgi_application

application = JudgingLane(django_application)
# Import the URLconf, and with it every view, at boot: otherwise each server worker pays ~300 ms of imports on
# its first request, which shows as the p95 of a freshly started server.
get_resolver().url_patterns
