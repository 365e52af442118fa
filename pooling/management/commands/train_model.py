from __future__ import annotations

from django.core.management.base import CommandError, CommandParser
from django.db import transaction

from kgpool.commands import INT32_MAX, KgpoolCommand, bounded_float, bounded_int, device_name
from pooling.management.commands._pooling_common import embedded, get_kg
from pooling.management.progress import StageProgress


class Command(KgpoolCommand):
    help = (
        "Train a KGC model (a 'system') on a knowledge graph's train split with early stopping on validation "
        "filtered MRR, save its checkpoint and record its validation and test filtered MRR. Options left out use "
        "the architecture's recommended settings. In the embedded mode (no CELERY_BROKER_URL) training runs here "
        "with a progress bar; with a broker it is sent to the GPU queue (add --wait to wait for it). Running it again "
        "for a system whose training was interrupted (Ctrl-C, kill, a lost worker) or failed trains it again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kg", help="Name of the knowledge graph (see import_kg)")
        parser.add_argument("architecture", help="transe, rotate, distmult, complex, rescal, conve or tucker")
        parser.add_argument("--name", help="System name, unique per knowledge graph (default: the architecture)")
        parser.add_argument("--dim", type=bounded_int(1, 100_000),
                            help="Embedding dimension (entity dimension for TuckER)")
        parser.add_argument("--epochs", type=bounded_int(1, 1_000_000), help="Maximum number of training epochs")
        parser.add_argument("--lr", type=bounded_float(0, 1_000, above_low=True), help="Adam learning rate")
        parser.add_argument("--batch-size", type=bounded_int(1, INT32_MAX), help="Training questions per batch")
        parser.add_argument("--seed", type=bounded_int(0, INT32_MAX), default=0,
                            help="Random seed (default 0): same seed, same model")
        parser.add_argument("--patience", type=bounded_int(0, 1_000_000),
                            help="Stop after this many validations without improvement (0: never stop early)")
        parser.add_argument("--eval-every", type=bounded_int(1, 1_000_000), help="Validate every N epochs")
        parser.add_argument("--device", type=device_name, help="cpu, cuda or cuda:N (default: cuda when available)")
        parser.add_argument("--threads", type=bounded_int(1, 4096),
                            help="torch CPU threads while training (1 is often fastest)")
        parser.add_argument("--wait", action="store_true", help="With a broker: wait until the worker is done")
        parser.add_argument("--replace", action="store_true",
                            help="Train the named system again even if it is ready (not once it has rankings), queued "
                                 "or seen training elsewhere. Without it, a rerun after an interrupted or failed "
                                 "training starts it again by itself")

    def handle(self, *args: object, **options: object) -> None:
        name = options["name"] or options["architecture"]
        self.interrupted_message = (f"training {options['kg']}/{name} interrupted; run the same command again to "
                                    "train it from the start")
        self.train(options)

    def train(self, options: dict) -> None:
        from pooling.models import System
        from pooling.services.systems import SystemServiceError, prepare_training, train_system, training_config
        from pooling.services.trainers import TrainingBusyError

        kg = get_kg(options["kg"])
        try:
            config = training_config(
                options["architecture"], dim=options["dim"], epochs=options["epochs"], lr=options["lr"],
                batch_size=options["batch_size"], seed=options["seed"], patience=options["patience"],
                eval_every=options["eval_every"], device=options["device"], num_threads=options["threads"],
            )
            system, note = prepare_training(kg, options["architecture"], name=options["name"], config=config,
                                            replace=options["replace"], queued=not embedded())
        except SystemServiceError as exc:
            raise CommandError(str(exc)) from None
        if note:
            self.stdout.write(note[:1].upper() + note[1:] + ".")
        if embedded():
            with StageProgress(enabled=options["verbosity"] >= 1) as progress:
                try:
                    system = train_system(system, progress=progress)
                except TrainingBusyError as exc:
                    raise CommandError(f"{exc}; wait for it, or add --replace if that process is gone") from None
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

            self.interrupted_message = (f"waiting for {kg.name}/{system.name} interrupted: the training goes on in "
                                        "the worker")
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
