from __future__ import annotations

import secrets
from collections import Counter
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from pooling.management.progress import StageProgress
from pooling.models import KnowledgeGraph
from pooling.selectors.kg import kg_relation_categories
from pooling.services.kg_import import import_kg

BUNDLED_DATASET = Path(settings.BASE_DIR) / "datasets" / "umls"
DEMO_ACCOUNTS = (("admin", True), ("annotator1", False), ("annotator2", False), ("adjudicator", False))


class Command(BaseCommand):
    help = (
        "Set up a demo campaign on the bundled UMLS dataset (database, import, relation categories, demo accounts) "
        "and start the web site on localhost. Safe to run again: finished steps are kept."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", type=Path, default=BUNDLED_DATASET, help="Dataset folder (default: bundled UMLS)")
        parser.add_argument("--name", default="umls", help="Name of the knowledge graph (default: umls)")
        parser.add_argument("--addr", default="127.0.0.1:8000", help="Address for the web site (default 127.0.0.1:8000)")
        parser.add_argument("--no-serve", action="store_true", help="Set everything up but do not start the web site")

    def step(self, number: int, total: int, text: str) -> None:
        self.stdout.write(self.style.MIGRATE_HEADING(f"[{number}/{total}] {text}"))

    def handle(self, *args: object, **options: object) -> None:
        total = 4
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

        self.step(4, total, "Demo accounts (new passwords on every run)")
        credentials = self.reset_demo_accounts()
        for username, password in credentials:
            self.stdout.write(f"  {username:<12} {password}")

        url = f"http://{options['addr']}/"
        if options["no_serve"]:
            self.stdout.write(self.style.SUCCESS(f"Ready. Start the site with: python manage.py runserver {options['addr']}"))
            return
        self.stdout.write(self.style.SUCCESS(f"Serving kgpool at {url} (admin at {url}admin/); Ctrl-C stops it."))
        call_command("runserver", options["addr"], use_reloader=False, insecure_serving=True)

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
