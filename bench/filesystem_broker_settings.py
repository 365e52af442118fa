"""Settings for bench/gpu_worker_e2e.sh: kgpool's settings plus Celery's filesystem broker, for a GPU host with no
Redis or RabbitMQ (the broker is a folder; one host only). Use: DJANGO_SETTINGS_MODULE=filesystem_broker_settings
with bench/ on PYTHONPATH and CELERY_BROKER_URL=filesystem://."""
import os

from kgpool.settings import *  # noqa: F401,F403

_BROKER_DIR = os.environ.get("KGPOOL_FILESYSTEM_BROKER_DIR", "/tmp/kgpool-broker")
CELERY_BROKER_TRANSPORT_OPTIONS = {"data_folder_in": f"{_BROKER_DIR}/queue", "data_folder_out": f"{_BROKER_DIR}/queue",
                                   "processed_folder": f"{_BROKER_DIR}/processed", "store_processed": False,
                                   "control_folder": f"{_BROKER_DIR}/control"}
