from django.apps import AppConfig


class KgpoolConfig(AppConfig):
    """The project itself as an app, so its system checks are registered (kgpool.checks)."""

    name = "kgpool"
    verbose_name = "kgpool"

    def ready(self) -> None:
        from kgpool import checks  # noqa: F401 - registers the checks
        from kgpool.rawrows import cache_long_statements

        cache_long_statements()
