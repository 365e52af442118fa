from django.apps import AppConfig


class PoolingConfig(AppConfig):
    name = "pooling"

    def ready(self) -> None:
        from pooling import tasks  # noqa: F401  registers the tasks the services fire by name (pooling.task_names)
