"""kgpool: TREC-style pooling and judging campaigns for knowledge-graph completion."""
from kgpool.celery import app as celery_app

__all__ = ["celery_app"]
