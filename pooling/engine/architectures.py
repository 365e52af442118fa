"""The KGC architectures kgpool trains (``pooling.kge.models.ARCHITECTURES``), named here without torch so that web
requests and the campaign-file reader can check a name."""
from __future__ import annotations

ARCHITECTURE_NAMES = ("transe", "rotate", "distmult", "complex", "rescal", "conve", "tucker")
