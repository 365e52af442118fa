"""Names of the evaluation Celery tasks (route ``evaluation.tasks.score_*`` to the GPU queue, see evaluation.tasks).

Services fire tasks by these names (``celery.signature(NAME, ...)``) and never import :mod:`evaluation.tasks`: the
tasks load the run by id and call the services, so an import the other way would close an import cycle. The
tasks are registered when Django starts (:class:`evaluation.apps.EvaluationConfig`), so eager mode runs them by
name too.
"""
SCORE_EVALUATION = "evaluation.tasks.score_evaluation"
RUN_EVALUATION = "evaluation.tasks.run_evaluation"
