"""Start the label history: one ``initial`` version for every judgment, adjudication and answered expert review
recorded before the history existed (their earlier changes, if any, were never kept)."""
from django.db import migrations

BATCH = 2000


def backfill(apps, schema_editor):
    Judgment = apps.get_model("annotation", "Judgment")
    Adjudication = apps.get_model("annotation", "Adjudication")
    ExpertReview = apps.get_model("annotation", "ExpertReview")
    LabelVersion = apps.get_model("annotation", "LabelVersion")
    db = schema_editor.connection.alias

    def rows():
        for j in Judgment.objects.using(db).order_by("pk").iterator(chunk_size=BATCH):
            yield LabelVersion(item_id=j.item_id, kind="judgment", judgment_id=j.pk, author_id=j.user_id,
                               changed_by_id=j.user_id, changed_at=j.given_at, reason="initial",
                               new_answer=j.answer, new_source_url=j.source_url, new_text=j.quote)
        for a in Adjudication.objects.using(db).order_by("pk").iterator(chunk_size=BATCH):
            yield LabelVersion(item_id=a.item_id, kind="adjudication", adjudication_id=a.pk, author_id=a.adjudicator_id,
                               changed_by_id=a.adjudicator_id, changed_at=a.decided_at, reason="initial",
                               new_answer=a.label, new_text=a.reason)
        answered = ExpertReview.objects.using(db).exclude(label="").filter(given_at__isnull=False)
        for r in answered.order_by("pk").iterator(chunk_size=BATCH):
            yield LabelVersion(item_id=r.item_id, kind="expert", expert_review_id=r.pk, author_id=r.expert_id,
                               changed_by_id=r.expert_id, changed_at=r.given_at, reason="initial",
                               new_answer=r.label, new_text=r.comment)

    batch = []
    for version in rows():
        batch.append(version)
        if len(batch) == BATCH:
            LabelVersion.objects.using(db).bulk_create(batch)
            batch = []
    LabelVersion.objects.using(db).bulk_create(batch)


class Migration(migrations.Migration):

    dependencies = [("annotation", "0006_judgment_history_protect")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
