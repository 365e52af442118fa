from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from pooling.management.commands._pooling_common import embedded, get_kg
from pooling.management.progress import StageProgress


class Command(BaseCommand):
    help = (
        "Train a KGC model (a 'system') on a knowledge graph's train split with early stopping on validation "
        "filtered MRR, save its checkpoint and record its validation and test filtered MRR. Options left out use "
        "the architecture's recommended settings. In the embedded mode (no CELERY_BROKER_URL) training runs here "
        "with a progress bar; with a broker it is sent to the GPU queue (add --wait to wait for it)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kg", help="Name of the knowledge graph (see import_kg)")
        parser.add_argument("architecture", help="transe, rotate, distmult, complex, rescal, conve or tucker")
        parser.add_argument("--name", help="System name, unique per knowledge graph (default: the architecture)")
        parser.add_argument("--dim", type=int, help="Embedding dimension (entity dimension for TuckER)")
        parser.add_argument("--epochs", type=int, help="Maximum number of training epochs")
        parser.add_argument("--lr", type=float, help="Adam learning rate")
        parser.add_argument("--batch-size", type=int, help="Training questions per batch")
        parser.add_argument("--seed", type=int, default=0, help="Random seed (default 0): same seed, same model")
        parser.add_argument("--patience", type=int,
                            help="Stop after this many validations without improvement (0: never stop early)")
        parser.add_argument("--eval-every", type=int, help="Validate every N epochs")
        parser.add_argument("--device", help="cpu, cuda or cuda:N (default: cuda when available)")
        parser.add_argument("--threads", type=int, help="torch CPU threads while training (1 is often fastest)")
        parser.add_argument("--wait", action="store_true", help="With a broker: wait until the worker is done")

    def handle(self, *args: object, **options: object) -> None:
        from pooling.models import System
        from pooling.services.systems import SystemServiceError, create_system, train_system, training_config

        kg = get_kg(options["kg"])
        try:
            config = training_config(
                options["architecture"], dim=options["dim"], epochs=options["epochs"], lr=options["lr"],
                batch_size=options["batch_size"], seed=options["seed"], patience=options["patience"],
                eval_every=options["eval_every"], device=options["device"], num_threads=options["threads"],
            )
            system = create_system(kg, options["architecture"], name=options["name"], config=config)
        except SystemServiceError as exc:
            raise CommandError(str(exc)) from None
        if embedded():
            with StageProgress(enabled=options["verbosity"] >= 1) as progress:
                try:
                    system = train_system(system, progress=progress)
                except Exception as exc:
                    raise CommandError(f"training {system.name} failed: {type(exc).__name__}: {exc}") from None
            self.report(system)
            return
        from pooling.tasks import train_system as train_task

        system_id = system.pk
        transaction.on_commit(lambda: train_task.delay(system_id))
        self.stdout.write(f"Training of {kg.name}/{system.name} sent to the GPU queue (system id {system.pk}).")
        if options["wait"]:
            import time

            while True:
                system.refresh_from_db()
                if system.status in (System.Status.READY, System.Status.FAILED):
                    break
                time.sleep(2)
            if system.status == System.Status.FAILED:
                raise CommandError(f"training {system.name} failed: {system.error}")
            self.report(system)

    def report(self, system) -> None:
        def fmt(value):
            return "-" if value is None else f"{value:.4f}"

        self.stdout.write(
            f"Trained {system.kg.name}/{system.name} ({system.architecture}): valid MRR {fmt(system.valid_mrr)}, "
            f"test MRR {fmt(system.test_mrr)}, {system.config.get('epochs_run')} epochs, checkpoint {system.checkpoint_file}"
        )
