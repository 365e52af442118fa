"""The Celery application. Without CELERY_BROKER_URL tasks run eagerly in-process (embedded default)."""
from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgpool.settings")

app = Celery("kgpool")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
