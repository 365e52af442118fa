from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self) -> None:
        from annotation import tasks  # noqa: F401  registers the tasks the services fire by name (annotation.task_names)
