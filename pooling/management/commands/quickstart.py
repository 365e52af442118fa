from __future__ import annotations

import secrets
from collections import Counter
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from pooling.management.progress import StageProgress
from pooling.models import KnowledgeGraph, Pool, Sample, System
from pooling.selectors.kg import kg_relation_categories
from pooling.services.kg_import import import_kg

BUNDLED_DATASET = Path(settings.BASE_DIR) / "datasets" / "umls"
DEMO_ACCOUNTS = (("admin", True), ("annotator1", False), ("annotator2", False), ("adjudicator", False))
# Three diverse architectures (translational, bilinear, complex bilinear), small enough to train in seconds.
DEMO_SYSTEMS = ("transe", "distmult", "complex")
DEMO_TRAINING = dict(dim=64, epochs=30, lr=0.01, batch_size=256, seed=0, device="cpu", num_threads=1)
DEMO_SAMPLE_SIZE, DEMO_SEED, DEMO_DEPTH = 200, 42, 10
DEMO_CAMPAIGN = "umls-demo"
DEMO_ROLES = (("admin", "admin"), ("annotator1", "annotator"), ("annotator2", "annotator"), ("adjudicator", "adjudicator"))


class Command(BaseCommand):
    help = (
        "Set up a demo campaign on the bundled UMLS dataset (database, import, relation categories, three trained "
        "KGC models, a seeded sample of test triples, a depth-10 pool, demo accounts) and start the web site on "
        "localhost. Safe to run again: finished steps are kept."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", type=Path, default=BUNDLED_DATASET, help="Dataset folder (default: bundled UMLS)")
        parser.add_argument("--name", default="umls", help="Name of the knowledge graph (default: umls)")
        parser.add_argument("--addr", default="127.0.0.1:8000", help="Address for the web site (default 127.0.0.1:8000)")
        parser.add_argument("--no-serve", action="store_true", help="Set everything up but do not start the web site")

    def step(self, number: int, total: int, text: str) -> None:
        self.stdout.write(self.style.MIGRATE_HEADING(f"[{number}/{total}] {text}"))

    def handle(self, *args: object, **options: object) -> None:
        total = 8
        engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        self.step(1, total, f"Database ({engine}) and migrations")
        call_command("migrate", verbosity=0, interactive=False)

        self.step(2, total, f"Knowledge graph {options['name']!r} from {options['dataset']}")
        kg = KnowledgeGraph.objects.filter(name=options["name"]).first()
        if kg is None:
            with StageProgress() as progress:
                kg = import_kg(options["name"], options["dataset"], progress=progress)
        self.stdout.write(
            f"  {kg.num_entities} entities, {kg.num_relations} relations, "
            f"{kg.num_train} / {kg.num_valid} / {kg.num_test} train / valid / test triples"
        )

        self.step(3, total, "Relation categories (train split, threshold 1.5)")
        counts = Counter(category for _key, category, _tph, _hpt in kg_relation_categories(kg))
        self.stdout.write("  " + ", ".join(f"{counts.get(c, 0)} {c}" for c in ("1-1", "1-N", "N-1", "N-N")))

        self.step(4, total, f"KGC models: {', '.join(DEMO_SYSTEMS)} (CPU, a few seconds each)")
        systems = [self.trained_system(kg, architecture) for architecture in DEMO_SYSTEMS]
        for system in systems:
            self.stdout.write(f"  {system.name:<10} validation filtered MRR {system.valid_mrr:.3f}")

        self.step(5, total, f"Sample of {DEMO_SAMPLE_SIZE} test triples (seed {DEMO_SEED})")
        sample = self.demo_sample(kg)
        self.stdout.write(
            f"  {sample.name}: {sample.questions.count()} questions, relation KL divergence {sample.kl_divergence:.4f}"
        )

        self.step(6, total, f"Pool of depth {DEMO_DEPTH}")
        pool = self.demo_pool(sample, systems)
        self.stdout.write(f"  {pool.name}: {pool.entries.count()} candidate triples to judge")

        self.step(7, total, "Demo accounts (new passwords on every run)")
        credentials = self.reset_demo_accounts()
        for username, password in credentials:
            self.stdout.write(f"  {username:<12} {password}")

        self.step(8, total, "Judging campaign: trivial filters, question templates, roles")
        campaign, progress = self.demo_campaign(pool)
        self.stdout.write(
            f"  {campaign.name}: {progress['auto_negative']} auto-negative (trivial filters), "
            f"{progress['total'] - progress['auto_negative']} for people to judge"
        )

        url = f"http://{options['addr']}/"
        if options["no_serve"]:
            self.stdout.write(self.style.SUCCESS(f"Ready. Start the site with: python manage.py runserver {options['addr']}"))
            return
        self.stdout.write(self.style.SUCCESS(
            f"Serving kgpool at {url} (judging at {url}campaigns/, admin at {url}admin/); Ctrl-C stops it."
        ))
        call_command("runserver", options["addr"], use_reloader=False, insecure_serving=True)

    def trained_system(self, kg: KnowledgeGraph, architecture: str) -> System:
        from pooling.services.systems import train_new_system, train_system

        system = System.objects.filter(kg=kg, name=architecture).first()
        if system is not None and system.status == System.Status.READY:
            return system
        with StageProgress() as progress:
            if system is None:
                return train_new_system(kg, architecture, name=architecture, progress=progress, **DEMO_TRAINING)
            return train_system(system, progress=progress)  # an earlier run was interrupted

    def demo_sample(self, kg: KnowledgeGraph) -> Sample:
        from pooling.services.samples import draw_sample

        name = f"uniform-{DEMO_SAMPLE_SIZE}-seed{DEMO_SEED}"
        existing = Sample.objects.filter(kg=kg, name=name).first()
        return existing or draw_sample(kg, size=DEMO_SAMPLE_SIZE, seed=DEMO_SEED, name=name)

    def demo_pool(self, sample: Sample, systems: list[System]) -> Pool:
        from pooling.services.pools import build_pool_now, create_pool

        pool = create_pool(sample, systems, depth=DEMO_DEPTH)
        with StageProgress() as progress:
            build_pool_now(pool, progress=progress)
        pool.refresh_from_db()
        return pool

    def demo_campaign(self, pool: Pool) -> tuple["Campaign", dict[str, int]]:
        from annotation.models import Campaign
        from annotation.selectors.campaigns import campaign_progress
        from annotation.services.campaigns import add_member, create_campaign
        from annotation.services.filtering import apply_filter
        from annotation.services.templates import ensure_default_templates

        campaign = Campaign.objects.filter(name=DEMO_CAMPAIGN).first()
        if campaign is None:
            ensure_default_templates(pool.sample.kg)
            campaign = create_campaign(DEMO_CAMPAIGN, pool, description="Demo campaign made by the quickstart")
            apply_filter(campaign, ["type", "cardinality"])
        User = get_user_model()
        for username, role in DEMO_ROLES:
            add_member(campaign, User.objects.get(username=username), role)
        return campaign, campaign_progress(campaign)

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
