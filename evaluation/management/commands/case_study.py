"""python manage.py case_study fb15k237 [--profile quick|medium|full|tiny] [--systems a,b] [--device cpu|cuda]
[--out DIR] [--sample-size N] [--skip-training]

The FB15k-237 case study (issue 7) end to end: import, seed-42 sample, train systems, depth-10 pool, trivial
filters, coverage by the published judgments, evaluation on sparse vs completed labels. Every step is cached
(a second run reuses what exists and prints what it reused). See docs/case-study-fb15k237.md.
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from kgpool.commands import INT32_MAX, KgpoolCommand, bounded_int, device_name

STUDIES = {"fb15k237": ("fb15k-237", "fb15k-237", "fb15k-237-pooled")}


def shared_data_dir() -> Path:
    return Path(settings.KGPOOL_SHARED_DATA)


class Command(KgpoolCommand):
    help = "Run the FB15k-237 pooling case study end to end (cached steps; see docs/case-study-fb15k237.md)."
    interrupted_message = "interrupted: the steps done are kept (cached); run the same command again to go on"

    def add_arguments(self, parser):
        from evaluation.services.case_study import DEFAULT_SYSTEMS, PROFILES

        parser.add_argument("study", choices=sorted(STUDIES), help="which case study (fb15k237)")
        parser.add_argument("--profile", default="quick", choices=sorted(PROFILES),
                            help="training settings: quick (reduced dims/epochs for a CPU), full (README settings), "
                                 "tiny (tests)")
        parser.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS),
                            help=f"comma-separated architectures (default {','.join(DEFAULT_SYSTEMS)}; also tucker)")
        parser.add_argument("--device", type=device_name, help="cpu, cuda or cuda:N (default: cuda when available)")
        parser.add_argument("--threads", type=bounded_int(1, 4096), default=1,
                            help="torch CPU threads while training (default 1: fastest on a small shared CPU)")
        parser.add_argument("--out", help="output folder (default VAR_DIR/case-study/<study>-<profile>[-nN])")
        parser.add_argument("--sample-size", type=bounded_int(1, INT32_MAX),
                            help="use only the first N triples of the published sample (small version)")
        parser.add_argument("--skip-training", action="store_true",
                            help="train nothing: use the systems already trained with these settings")
        parser.add_argument("--data", help="dataset folder (default ../shared/data/fb15k-237)")
        parser.add_argument("--pooled", help="published campaign folder (default ../shared/data/fb15k-237-pooled)")
        parser.add_argument("--epochs", type=bounded_int(1, 1_000_000),
                            help="override the profile's epochs for every system")
        parser.add_argument("--no-analyses", action="store_true", help="skip discriminative power / data sensitivity")
        parser.add_argument("--no-figures", action="store_true")

    def handle(self, *args, **options):
        import sys

        from evaluation.services.case_study import CaseStudyConfig, CaseStudyError, run_case_study
        from pooling.management.progress import StageProgress

        # A fresh KGPOOL_VAR_DIR (the documented way to keep a study apart) starts with an empty database.
        call_command("migrate", verbosity=0, interactive=False)
        kg_name, data_name, pooled_name = STUDIES[options["study"]]
        data = shared_data_dir()
        suffix = f"-n{options['sample_size']}" if options["sample_size"] else ""
        out = Path(options["out"] or Path(settings.VAR_DIR) / "case-study" / f"{options['study']}-{options['profile']}{suffix}")
        systems = tuple(s.strip().lower() for s in options["systems"].split(",") if s.strip())
        config = CaseStudyConfig(
            data_dir=Path(options["data"] or data / data_name), pooled_dir=Path(options["pooled"] or data / pooled_name),
            out=out, kg_name=kg_name, profile=options["profile"], systems=systems, device=options["device"],
            threads=options["threads"], sample_size=options["sample_size"], skip_training=options["skip_training"],
            analyses=not options["no_analyses"], figures=not options["no_figures"],
            train_overrides={"epochs": options["epochs"]} if options["epochs"] else {},
        )

        def log(message: str) -> None:
            self.stdout.write(message)
            self.stdout.flush()

        quiet = options["verbosity"] < 1
        try:
            with StageProgress(enabled=not quiet and sys.stderr.isatty()) as bars:
                progress = bars if sys.stderr.isatty() or quiet else LineProgress()
                result = run_case_study(config, progress=progress, log=log)
        except CaseStudyError as exc:
            raise CommandError(str(exc)) from None
        reused = [name for name, was in result.reused().items() if was]
        self.stdout.write(f"reused: {', '.join(reused) or 'nothing'}")
        self.stdout.write(f"total {result.data['total_seconds']} s; wrote {out}/case_study.json, {out}/report.md, "
                          f"{out}/evaluation/")
        if options["verbosity"] >= 1:
            self.stdout.write((out / "report.md").read_text())


class LineProgress:
    """Progress as plain lines on stderr (for logs): on a new stage, at the end, and at most every 30 s."""

    def __init__(self, every: float = 30.0) -> None:
        import time

        self.clock = time.monotonic
        self.every = every
        self.stage: str | None = None
        self.last = 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        import sys

        now = self.clock()
        if stage != self.stage or done >= total or now - self.last >= self.every or stage.startswith("train"):
            sys.stderr.write(f"  {stage}: {done}/{total}\n")
            sys.stderr.flush()
            self.stage, self.last = stage, now
