"""Time on task measured on the server (issue 13): ``time_on_task_ms`` becomes the hand-out-to-answer time and
the figure the client sent moves to ``client_time_ms``, clamped to it. Judgments whose hand-out is gone keep
their old figure only as the client hint (the server's measure cannot be rebuilt for them)."""

from datetime import timedelta

from django.db import migrations, models

CHUNK = 2000


def measure_on_the_server(apps, schema_editor):
    Judgment = apps.get_model("annotation", "Judgment")
    rows = Judgment.objects.order_by("pk").values_list("pk", "time_on_task_ms", "given_at", "assignment__handed_out_at")
    last = 0
    while True:
        chunk = list(rows.filter(pk__gt=last)[:CHUNK])
        if not chunk:
            return
        last = chunk[-1][0]
        changed = []
        for pk, client, given_at, handed_out_at in chunk:
            server = None if handed_out_at is None else min(max(0, (given_at - handed_out_at) // timedelta(milliseconds=1)), 2**31 - 1)
            hint = None if client is None else (client if server is None else min(client, server))
            changed.append(Judgment(pk=pk, time_on_task_ms=server, client_time_ms=hint))
        Judgment.objects.bulk_update(changed, ["time_on_task_ms", "client_time_ms"])


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0003_item_queue_order'),
    ]

    operations = [
        migrations.AddField(
            model_name='judgment',
            name='client_time_ms',
            field=models.PositiveIntegerField(blank=True, help_text="The client's time on task (hint)", null=True),
        ),
        migrations.RunPython(measure_on_the_server, migrations.RunPython.noop),
    ]
