"""Reads of the annotation app (one module per concept)."""
