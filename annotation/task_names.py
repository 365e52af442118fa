"""Names of the annotation Celery tasks.

Services fire tasks by these names (``celery.signature(NAME, ...)``) and never import :mod:`annotation.tasks`:
the tasks load rows by id and call the services, so an import the other way would close an import cycle. The
tasks are registered when Django starts (:class:`annotation.apps.AnnotationConfig`), so eager mode runs them by
name too.
"""
REKEY_QUEUE = "annotation.tasks.rekey_queue"
EVALUATE_WHEN_DONE = "annotation.tasks.evaluate_when_done"
