"""The evaluation's own error (shared by its service modules without import cycles)."""
from __future__ import annotations


class EvaluationError(Exception):
    """An evaluation could not run (no scores for an imported system, bad options...)."""
