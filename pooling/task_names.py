"""Names of the pooling Celery tasks (settings.CELERY_TASK_ROUTES routes ``train_*`` and ``rank_*`` to the GPU queue).

Services fire tasks by these names (``celery.signature(NAME, ...)``) and never import :mod:`pooling.tasks`: the
tasks load rows by id and call the services, so an import the other way would close an import cycle. The tasks
are registered when Django starts (:class:`pooling.apps.PoolingConfig`), so eager mode runs them by name too.
"""
TRAIN_SYSTEM = "pooling.tasks.train_system"
RANK_SYSTEM = "pooling.tasks.rank_system"
RANK_POOL_CHUNK = "pooling.tasks.rank_pool_chunk"
MERGE_POOL = "pooling.tasks.merge_pool"
POOL_BUILD_FAILED = "pooling.tasks.pool_build_failed"
IMPORT_KG_UPLOAD = "pooling.tasks.import_kg_upload"
RANK_SYSTEM_UPLOAD = "pooling.tasks.rank_system_upload"
TRAIN_REQUESTED_SYSTEM = "pooling.tasks.train_requested_system"
