"""The pooling app's part of the /api/v1/ API (knowledge graphs, systems, samples, pools, uploads)."""
