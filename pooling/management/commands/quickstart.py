from __future__ import annotations

import secrets
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError, CommandParser

from kgpool.cli import command_prefix
from kgpool.commands import KgpoolCommand
from pooling.management.progress import StageProgress
from pooling.selectors.kg import kg_relation_categories

# examples/ of the checkout, or of the installed package (pip install .: kgpool/examples, see setup.py). Both roots
# are tried: `kgpool` run inside a checkout imports kgpool from site-packages but this app from the checkout
# (Celery's Django fixup puts the working directory first on sys.path).
_ROOTS = (Path(settings.BASE_DIR), Path(__file__).resolve().parents[3])
CAMPAIGN_FILE = next((folder / "quickstart.toml" for root in _ROOTS for folder in (root / "examples", root / "kgpool" / "examples")
                      if (folder / "quickstart.toml").is_file()), Path(settings.BASE_DIR) / "examples" / "quickstart.toml")
DEMO_ACCOUNTS = (("admin", True), ("annotator1", False), ("annotator2", False), ("adjudicator", False))


class Command(KgpoolCommand):
    interrupted_message = "interrupted: the steps done are kept; run quickstart again to go on"

    help = (
        "Set up a demo campaign on the bundled UMLS dataset by applying examples/quickstart.toml (database, import, "
        "relation categories, three trained KGC models, a seeded sample of test triples, a depth-10 pool, the "
        "trivial filters, demo accounts) and start the web site on localhost. Safe to run again: finished steps "
        "are kept."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--file", type=Path, default=CAMPAIGN_FILE,
                            help="Campaign file to apply (default: examples/quickstart.toml)")
        parser.add_argument("--dataset", type=Path, help="Dataset folder (default: the file's, the bundled UMLS)")
        parser.add_argument("--name", help="Name of the knowledge graph (default: the file's, umls)")
        parser.add_argument("--addr", default="127.0.0.1:8000", help="Address for the web site (default 127.0.0.1:8000)")
        parser.add_argument("--no-serve", action="store_true", help="Set everything up but do not start the web site")

    def step(self, number: int, total: int, text: str) -> None:
        self.stdout.write(self.style.MIGRATE_HEADING(f"[{number}/{total}] {text}"))

    def handle(self, *args: object, **options: object) -> None:
        from annotation.lib.campaign_file import CampaignFileError, parse_campaign_file
        from annotation.selectors.campaigns import campaign_progress
        from annotation.services.campaign_apply import CampaignApplyError, apply_campaign

        total = 8
        try:
            spec = parse_campaign_file(options["file"])
        except CampaignFileError as exc:
            raise CommandError(str(exc)) from None
        if options["dataset"] or options["name"]:
            kg = replace(spec.kg, name=options["name"] or spec.kg.name,
                         path=str(options["dataset"].resolve()) if options["dataset"] else spec.kg.path)
            spec = replace(spec, kg=kg)
        engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        self.step(1, total, f"Database ({engine}) and migrations")
        call_command("migrate", verbosity=0, interactive=False)

        self.step(2, total, "Demo accounts (new passwords on every run)")
        credentials = self.reset_demo_accounts()
        for username, password in credentials:
            self.stdout.write(f"  {username:<12} {password}")

        self.step(3, total, f"Campaign file {options['file']}: knowledge graph, models, sample, pool, campaign")
        try:
            with StageProgress() as progress:
                apply_campaign(spec, path=str(Path(options["file"]).resolve()), progress=progress,
                               log=lambda line: self.stdout.write("  " + line))
        except CampaignApplyError as exc:
            raise CommandError(str(exc)) from None
        from annotation.models import Campaign

        campaign = Campaign.objects.select_related("pool__sample__kg").get(name=spec.name)
        pool = campaign.pool
        sample = pool.sample
        kg = sample.kg

        self.step(4, total, f"Knowledge graph {kg.name!r} from {kg.source}")
        self.stdout.write(
            f"  {kg.num_entities} entities, {kg.num_relations} relations, "
            f"{kg.num_train} / {kg.num_valid} / {kg.num_test} train / valid / test triples"
        )

        self.step(5, total, "Relation categories (train split, threshold 1.5)")
        counts = Counter(category for _key, category, _tph, _hpt in kg_relation_categories(kg))
        self.stdout.write("  " + ", ".join(f"{counts.get(c, 0)} {c}" for c in ("1-1", "1-N", "N-1", "N-N")))

        self.step(6, total, f"KGC models: {', '.join(s.name for s in spec.systems)}")
        for system in pool.systems.order_by("name"):
            self.stdout.write(f"  {system.name:<10} validation filtered MRR {system.valid_mrr:.3f}")

        self.step(7, total, f"Sample {sample.name} and pool of depth {pool.depth}")
        self.stdout.write(
            f"  {sample.name}: {sample.questions.count()} questions, relation KL divergence {sample.kl_divergence:.4f}"
        )
        self.stdout.write(f"  {pool.name}: {pool.entries.count()} candidate triples to judge")

        self.step(8, total, "Judging campaign: trivial filters, question templates, roles, gold checks")
        progress_counts = campaign_progress(campaign)
        self.stdout.write(
            f"  {campaign.name}: {progress_counts['auto_negative']} auto-negative (trivial filters), "
            f"{progress_counts['total'] - progress_counts['auto_negative']} for people to judge, "
            f"{progress_counts['gold']} gold checks"
        )

        url = f"http://{options['addr']}/"
        if options["no_serve"]:
            program = command_prefix(sys.argv[0], sys.executable, Path.cwd())
            self.stdout.write(self.style.SUCCESS(f"Ready. Start the site with: {program} runserver {options['addr']}"))
            return
        self.stdout.write(self.style.SUCCESS(
            f"Serving kgpool at {url} (judging at {url}campaigns/, admin at {url}admin/); Ctrl-C stops it."
        ))
        try:
            call_command("runserver", options["addr"], use_reloader=False, insecure_serving=True)
        except KeyboardInterrupt:  # Ctrl-C is how the site is stopped: not an error
            self.stdout.write("Stopped the web site.")

    def reset_demo_accounts(self) -> list[tuple[str, str]]:
        User = get_user_model()
        credentials = []
        for username, is_admin in DEMO_ACCOUNTS:
            password = secrets.token_urlsafe(9)
            user, _created = User.objects.get_or_create(username=username)
            user.is_staff = user.is_superuser = is_admin
            user.set_password(password)
            user.save()
            credentials.append((username, password))
        return credentials
