from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"

    def ready(self) -> None:
        from evaluation import tasks  # noqa: F401  registers the tasks the services fire by name (task_names)
