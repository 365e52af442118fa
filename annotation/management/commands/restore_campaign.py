from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from annotation.services.errors import AnnotationError
from annotation.services.item_state import find_inconsistent_items
from annotation.services.restore import restore_campaign
from kgpool.commands import KgpoolCommand


class Command(KgpoolCommand):
    help = (
        "Restore a campaign from its backup (backup_campaign / archive_campaign), in one transaction. What already "
        "exists here (KG, sample, systems, rankings, pool, users) is matched by name and must be identical, else "
        "nothing is written. --as NAME restores the campaign under another name."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="Backup file (.tar.gz)")
        parser.add_argument("--as", dest="as_name", metavar="NAME", help="Name of the restored campaign")

    def handle(self, *args, **options) -> None:
        try:
            report = restore_campaign(options["file"], as_name=options["as_name"])
        except (AnnotationError, OSError) as exc:
            raise CommandError(str(exc)) from None
        rows = report.rows
        self.stdout.write(
            f"campaign {report.campaign.name} restored: {rows.get('items.jsonl', 0):,} items, "
            f"{rows.get('judgments.jsonl', 0):,} judgments, {rows.get('adjudications.jsonl', 0):,} adjudications, "
            f"{rows.get('label_versions.jsonl', 0):,} label versions"
        )
        if report.matched:
            self.stdout.write("already here, identical: " + ", ".join(report.matched))
        if report.created:
            self.stdout.write("created: " + ", ".join(report.created))
        mismatches = find_inconsistent_items(report.campaign)
        if mismatches:
            self.stdout.write(f"{len(mismatches)} item(s) whose stored state differs from their judgments "
                              f"(as in the backup): see repair_items {report.campaign.name} --dry-run")
