from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from kgpool.commands import KgpoolCommand, device_name, refused
from pooling.management.commands._pooling_common import get_kg


class Command(KgpoolCommand):
    help = (
        "Import a model trained elsewhere from its checkpoint as a system of a knowledge graph. The weights are "
        "converted into kgpool's own architecture and saved as a kgpool checkpoint, so the system is ready like a "
        "trained one: it ranks any sample, pools and evaluates the same way, and its validation and test filtered "
        "MRR are recorded. PyKEEN 1.11 (--format pykeen): a save_to_directory folder (trained_model.pkl + "
        "training_triples/) or a training checkpoint (checkpoint_name=..., weights only: give --model and the "
        "--option values it does not record). Supported: TransE (p 1 or 2), RotatE, DistMult, ComplEx, RESCAL, "
        "and ConvE / TuckER trained with inverse triples; anything PyKEEN would score differently is refused with "
        "the reason. Entity and relation labels must be the KG's keys. Files are read without running code from "
        "them and without pykeen installed: only torch.save archives are read, by kgpool's own allow-list reader "
        "(TorchScript archives and plain pickles are refused unread). All or nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        from pooling.services.checkpoint_import import FORMATS  # no torch: --help stays fast

        parser.add_argument("kg", help="Name of the knowledge graph the model was trained on")
        parser.add_argument("checkpoint", type=Path,
                            help="PyKEEN: a save_to_directory folder, its trained_model.pkl, or a training checkpoint")
        parser.add_argument("--format", dest="fmt", choices=FORMATS, default="pykeen",
                            help="Checkpoint format (default pykeen; the only one supported)")
        parser.add_argument("--name", help="Name of the new system, a slug (default: pykeen-<architecture>)")
        parser.add_argument("--model", help="PyKEEN model class (TransE, RotatE, DistMult, ComplEx, RESCAL, ConvE, "
                                            "TuckER); required for a training checkpoint, checked against a pickled "
                                            "model")
        parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                            help="What a training checkpoint does not record (repeatable): scoring_fct_norm=1|2 "
                                 "(TransE, required: the norm it was trained with), power_norm=true|false (TransE, "
                                 "default false), embedding_height=N (ConvE, when its weight shapes fit several "
                                 "image heights)")
        parser.add_argument("--description", default="", help="Free text kept with the system")
        parser.add_argument("--device", type=device_name,
                            help="Device for the MRR computation: cpu, cuda or cuda:N (default: cuda when available)")

    def handle(self, *args: object, **options: object) -> None:
        from pooling.services.checkpoint_import import CheckpointImportError, import_checkpoint
        from pooling.services.rankings import RunImportError

        kg = get_kg(options["kg"])
        pairs = {}
        for item in options["option"]:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise CommandError(f"--option {item!r}: expected KEY=VALUE")
            pairs[key.strip()] = value.strip()
        self.interrupted_message = f"importing {options['checkpoint']} interrupted; nothing was imported"
        try:
            system = import_checkpoint(
                kg, options["checkpoint"], fmt=options["fmt"], name=options["name"], model=options["model"],
                options=pairs, description=options["description"], device=options["device"],
            )
        except (CheckpointImportError, RunImportError) as exc:
            raise refused(exc) from None

        def fmt(value):
            return "-" if value is None else f"{value:.4f}"

        source = system.config["imported"]
        self.stdout.write(
            f"Imported {source['pykeen_model']} ({source['kind']}) as system {kg.name}/{system.name} "
            f"({system.architecture}): valid MRR {fmt(system.valid_mrr)}, test MRR {fmt(system.test_mrr)}, "
            f"checkpoint {system.checkpoint_file}"
        )
