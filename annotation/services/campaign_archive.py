"""Writes: archiving a campaign, the only way a campaign with people's labels leaves the database.

"Archive" means: a backup written and verified, then the campaign deleted, in one transaction that holds every
item's row lock (no judgment can slip in between the backup and the delete). The backup restores the campaign
exactly, here or elsewhere (``restore_campaign``). The pool, sample and KG stay (deletable afterwards when no
other campaign uses them). Evaluation runs of the campaign keep their results but lose the link; items of later
campaigns that reused its labels keep them (``reused_from`` cleared).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from annotation.models import Adjudication, Campaign, ExpertReview, Item, Judgment, LabelVersion
from annotation.services import backup_format as fmt
from annotation.services._locking import lock_waiting
from annotation.services.backup import BackupReport, TableWriter
from annotation.services.errors import AnnotationError


@dataclass
class ArchiveReport:
    backup: BackupReport
    deleted: dict[str, int]


def archive_campaign(campaign: Campaign, path: Path | str, *, confirm: str) -> ArchiveReport:
    """Back ``campaign`` up to ``path``, check the file reads back identical, then delete the campaign.
    ``confirm`` must repeat the campaign's name."""
    if confirm != campaign.name:
        raise AnnotationError(f"to archive (and delete) campaign {campaign.name!r}, confirm with its exact name")
    path = Path(path)
    with transaction.atomic():
        list(lock_waiting(Item.objects.filter(campaign=campaign).order_by("pk")).values_list("pk", flat=True))
        campaign = Campaign.objects.select_related("pool__sample__kg").get(pk=campaign.pk)
        members = TableWriter(campaign.pool, campaign).members()
        fmt.write_archive(path, members, {"campaign": campaign.name, "created_at": timezone.now().isoformat(),
                                          "archived": True})
        if fmt.Archive(path).members != members:
            raise fmt.BackupError(f"{path}: the backup did not read back identical; campaign kept")
        report = BackupReport(path, {name: data.count(b"\n") for name, data in members.items() if name.endswith(".jsonl")},
                              sum(1 for name in members if name.endswith(".npy")))
        deleted = purge_campaign(campaign)
    return ArchiveReport(report, deleted)


def purge_campaign(campaign: Campaign) -> dict[str, int]:
    """Delete the campaign with its labels and their history (PROTECTed everywhere else). Only for
    ``archive_campaign``, after its verified backup, inside its transaction."""
    deleted: dict[str, int] = {}
    for model in (LabelVersion, Judgment, Adjudication, ExpertReview):
        deleted[model._meta.label] = model.objects.filter(item__campaign=campaign).delete()[0]
    _total, by_model = campaign.delete()
    for label, count in by_model.items():
        deleted[label] = deleted.get(label, 0) + count
    return {label: count for label, count in deleted.items() if count}
