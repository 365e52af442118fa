"""The evaluation app's part of the /api/v1/ API (evaluation runs)."""
