"""Builders for the campaign-file tests: a tiny UMLS campaign file (one or two quickly trained systems, a small
sample, a shallow pool). Not used at runtime."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

UMLS = Path(settings.BASE_DIR) / "datasets" / "umls"
TRAIN = 'train = {{ architecture = "{arch}", dim = 16, epochs = 2, lr = 0.05, batch_size = 512, seed = 0, ' \
        'eval_every = 2, device = "cpu", num_threads = 1 }}'


def campaign_toml(*, name: str = "cf", kg: str = "cf-umls", depth: int = 2, systems: tuple[str, ...] = ("distmult",),
                  pool_systems: tuple[str, ...] | None = None, size: int = 6, extra: str = "") -> str:
    blocks = "\n".join(f'[[systems]]\nname = "{arch}"\n' + TRAIN.format(arch=arch) + "\n" for arch in systems)
    pool = f"depth = {depth}" + (f"\nsystems = {list(pool_systems)!r}".replace("'", '"') if pool_systems else "")
    return f"""version = 1

[campaign]
name = "{name}"
description = "a tiny campaign"

[kg]
name = "{kg}"
path = "{UMLS}"

{blocks}
[sample]
size = {size}
seed = 3

[pool]
{pool}

[filters]
rules = ["cardinality"]

[judging]
gold_rate = 0.1

[members]
annotator = ["{name}-ann", "{name}-bob"]
adjudicator = ["{name}-ada"]
{extra}"""


def write_campaign(folder: Path, **options) -> Path:
    path = folder / f"{options.get('name', 'cf')}.toml"
    path.write_text(campaign_toml(**options), encoding="utf-8")
    return path
