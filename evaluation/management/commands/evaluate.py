"""python manage.py evaluate SAMPLE [--labels judgments.tsv | --campaign NAME] [--systems a,b] [--pool NAME] [--out DIR]
    [--protocols classification,pair_ranking,property [--negatives judged,dataset,corrupted-typed] [--pair-k 100]]

Evaluates the sample's systems on the sparse labels and, with --labels or --campaign (a judging campaign's final
labels, gold checks excluded, depths from the campaign's pool), on the completed labels and the completed labels at
each pool depth; prints the tables and writes CSV/JSON/PNG files to --out. --save also records an
EvaluationRun (its files under STORAGE_DIR, shown on the report page); --background queues it on Celery instead.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from django.core.management.base import CommandError

from evaluation.services.result import NEGATIVE_SOURCES, PROTOCOLS
from kgpool.commands import INT32_MAX, KgpoolCommand, bounded_int, bounded_int_list, device_name


def _choices(allowed: tuple[str, ...]):
    """argparse type: a comma-separated list of names from ``allowed``."""
    def parse(text: str) -> tuple[str, ...]:
        names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
        bad = [n for n in names if n not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown {bad[0]!r} (one of {', '.join(allowed)})")
        return names

    return parse


class Command(KgpoolCommand):
    help = "Evaluate a sample's systems on sparse, completed and completed-at-depth labels (micro, macro, PROBE, tau)."

    def add_arguments(self, parser):
        parser.add_argument("sample", help="sample name, KG/NAME or id")
        parser.add_argument("--labels", help="judgments file h<TAB>r<TAB>t<TAB>Y|N (completed labels)")
        parser.add_argument("--campaign", help="judging campaign whose final labels complete the sample")
        parser.add_argument("--systems", help="comma-separated system names (default: every evaluable system)")
        parser.add_argument("--pool", help="pool name giving the depths of judged triples (default: the only pool)")
        parser.add_argument("--out", help="folder for CSV/JSON/PNG outputs")
        parser.add_argument("--policy", default="realistic", choices=["realistic", "optimistic", "pessimistic"])
        parser.add_argument("--cutoff", type=bounded_int(1, INT32_MAX), default=10,
                            help="cut-off k of MAP@k, nDCG@k, P@k (default 10)")
        parser.add_argument("--depths", type=bounded_int_list(0, INT32_MAX),
                            help="comma-separated depths for completed@d (default 0..pool depth)")
        parser.add_argument("--no-figures", action="store_true")
        parser.add_argument("--no-analyses", action="store_true",
                            help="skip discriminative power / data sensitivity / open-world simulation")
        parser.add_argument("--dp-test", choices=["t", "bootstrap"], default="t",
                            help="discriminative power: paired t-test (default) or Sakai's paired bootstrap")
        parser.add_argument("--bootstrap-samples", type=bounded_int(1, 100_000), default=1000,
                            help="resamples of the bootstrap test (default 1000)")
        parser.add_argument("--no-open-world", action="store_true", help="skip the open-world simulation")
        parser.add_argument("--open-world-repeats", type=bounded_int(1, 10_000), default=10,
                            help="repeats per share of dropped answers (default 10)")
        parser.add_argument("--protocols", type=_choices(PROTOCOLS), default=(),
                            help="also evaluate, comma-separated: classification, pair_ranking, property (sparse and "
                                 "completed labels, with tau-b between the protocols' orderings)")
        parser.add_argument("--negatives", type=_choices(NEGATIVE_SOURCES), default=("corrupted-typed",),
                            help="classification negatives, comma-separated: judged, dataset, corrupted-typed, "
                                 "corrupted-random (default corrupted-typed)")
        parser.add_argument("--negatives-dir", default="",
                            help="folder with valid_negatives.txt / test_negatives.txt (default: the KG's source)")
        parser.add_argument("--negatives-seed", type=bounded_int(0, INT32_MAX), default=0,
                            help="seed of the corrupted negatives (default 0)")
        parser.add_argument("--pair-k", type=bounded_int(1, 100_000), default=100,
                            help="K of MAP@K / P@K in entity-pair ranking (default 100)")
        parser.add_argument("--device", type=device_name,
                            help="torch device for scoring trained systems (default: CUDA if available)")
        parser.add_argument("--save", action="store_true", help="also record an EvaluationRun (report page)")
        parser.add_argument("--background", action="store_true", help="queue an EvaluationRun on Celery and exit")

    def handle(self, *args, **options):
        from evaluation.services.evaluate import (
            EvaluationOptions, create_run, evaluable_systems, evaluate_sample, format_tables, start_evaluation,
            store_result, write_outputs,
        )
        from evaluation.services.labels import (
            CampaignLabels, JudgmentsFile, LabelError, campaign_by_name, check_campaign_sample,
        )
        from evaluation.services.ranks import EvaluationError
        from pooling.models import Pool, Sample, System
        from pooling.selectors.pools import sample_by_ref

        try:
            sample = sample_by_ref(options["sample"])
        except (Sample.DoesNotExist, Sample.MultipleObjectsReturned) as exc:
            raise CommandError(str(exc)) from None
        pool = None
        if options["pool"]:
            pool = Pool.objects.filter(sample=sample, name=options["pool"]).first()
            if pool is None:
                known = ", ".join(Pool.objects.filter(sample=sample).values_list("name", flat=True)) or "none"
                raise CommandError(f"no pool {options['pool']!r} on sample {sample.name} (known: {known})")
        if options["out"] and Path(options["out"]).exists() and not Path(options["out"]).is_dir():
            raise CommandError(f"--out {options['out']}: not a folder (the outputs are several files)")
        labels = options["labels"]
        if labels and options["campaign"]:
            raise CommandError("give --labels or --campaign, not both")
        if labels and not Path(labels).is_file():
            raise CommandError(f"labels file {labels} does not exist or is not a regular file")
        campaign = None
        if options["campaign"]:
            try:
                campaign = campaign_by_name(options["campaign"])
                check_campaign_sample(campaign, sample)
            except LabelError as exc:
                raise CommandError(str(exc)) from None
        evaluation_options = EvaluationOptions(policy=options["policy"], cutoff=options["cutoff"],
                                               depths=options["depths"] or None,
                                               analyses=not options["no_analyses"], device=options["device"],
                                               dp_test=options["dp_test"], n_bootstrap=options["bootstrap_samples"],
                                               open_world=not options["no_open_world"],
                                               open_world_repeats=options["open_world_repeats"],
                                               protocols=options["protocols"], negatives=options["negatives"],
                                               negatives_dir=options["negatives_dir"],
                                               negatives_seed=options["negatives_seed"], pair_k=options["pair_k"])
        names = [n.strip() for n in options["systems"].split(",") if n.strip()] if options["systems"] else None
        run = None
        try:
            systems = evaluable_systems(sample, names)
            if options["save"] or options["background"]:
                run = create_run(sample, systems=systems, labels_file=str(Path(labels).resolve()) if labels else "",
                                 pool=pool, options=evaluation_options, campaign=campaign)
                if options["background"]:
                    start_evaluation(run)
                    self.stdout.write(f"queued evaluation run {run.pk}")
                    return
            source = CampaignLabels(campaign) if campaign is not None else (JudgmentsFile(Path(labels)) if labels else None)
            progress = self._progress if options["verbosity"] >= 2 else None
            result = evaluate_sample(sample, systems=systems, source=source, pool=pool, options=evaluation_options,
                                     **({"progress": progress} if progress else {}))
            if run is not None:
                run = store_result(run, result, figures=not options["no_figures"])
        except (EvaluationError, LabelError, System.DoesNotExist) as exc:
            self._mark_failed(run, exc)
            raise CommandError(str(exc)) from None
        except KeyboardInterrupt:
            self._discard(run)  # interrupted: nothing is kept, not even the run row
            raise
        except Exception as exc:
            self._mark_failed(run, exc)
            raise
        self.stdout.write(format_tables(result))
        if run is not None:
            self.stdout.write(f"saved evaluation run {run.pk} ({run.result_dir})")
        if options["out"]:
            self.interrupted_message = f"interrupted while writing to {options['out']}: its files may be incomplete"
            try:
                files = write_outputs(result, options["out"], figures=not options["no_figures"])
            except OSError as exc:  # e.g. a folder that cannot be made: one line, the results are printed above
                raise CommandError(f"--out {options['out']}: cannot write: {exc.strerror or exc}") from None
            self.stdout.write(f"wrote {len(files)} files to {options['out']}: {', '.join(files)}")

    def _mark_failed(self, run, exc: Exception) -> None:
        if run is None:
            return
        from django.utils import timezone

        from evaluation.models import EvaluationRun

        EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.FAILED,
                                                       error=f"{type(exc).__name__}: {exc}"[:10000],
                                                       finished_at=timezone.now())

    def _discard(self, run) -> None:
        """Remove a run created by this command, with whatever files it had written."""
        if run is None:
            return
        import shutil

        from evaluation.models import EvaluationRun
        from evaluation.services.runs import result_dir
        from pooling.storage import storage_path

        shutil.rmtree(storage_path(result_dir(run)), ignore_errors=True)
        EvaluationRun.objects.filter(pk=run.pk).delete()

    def _progress(self, stage: str, done: int, total: int) -> None:
        sys.stderr.write(f"{stage}: {done}/{total}\n")
