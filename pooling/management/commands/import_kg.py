from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandParser

from kgpool.commands import KgpoolCommand, refused
from pooling.engine.kgfiles import KGFormatError, MetadataFiles
from pooling.management.progress import StageProgress
from pooling.services.kg_import import KGImportError, import_kg


class Command(KgpoolCommand):
    help = (
        "Import a knowledge graph from DIR (train.txt, valid.txt, test.txt: `h r t`, tab or space separated) with "
        "the entity and relation metadata files found beside them. Everything is written in one transaction: "
        "on any error nothing is imported. Keys longer than the database holds (entities 255, relations 500 "
        "characters), lines over 1 MiB, JSON over 1 GiB or nested too deeply, and anything but regular files are "
        "refused with the file and line."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="Short name for the knowledge graph, e.g. fb15k-237: letters, digits, - and _ "
                                         "(at most 100)")
        parser.add_argument("dir", type=Path, help="Folder with train.txt, valid.txt and test.txt")
        parser.add_argument("--replace", action="store_true", help="Overwrite an existing knowledge graph of that name")
        parser.add_argument("--description", default="", help="Free text shown in the admin")
        files = parser.add_argument_group("metadata files (default: looked for in DIR by their usual names)")
        files.add_argument("--entity-names", type=Path, help="`id<TAB>name` (entity_names.tsv or entity2text.txt)")
        files.add_argument("--wikidata", type=Path, help="entity_wikidata.json: id -> label, description, wikipedia")
        files.add_argument("--relation-types", type=Path, help="`relation<TAB>domain_type<TAB>range_type`")
        files.add_argument("--relation-text", type=Path, help="`relation<TAB>readable words`")
        files.add_argument("--entity-types", type=Path, help="CoDEx entity2types.json: id -> [type ids]")
        files.add_argument("--type-labels", type=Path, help="CoDEx types.json: type id -> {label}")
        files.add_argument("--relation-labels", type=Path, help="CoDEx relations.json: relation -> {label, description}")
        files.add_argument("--entity-vocab", type=Path, help="Entity ids, one per line: triples with other entities are errors")
        files.add_argument("--relation-vocab", type=Path, help="Relation ids, one per line: triples with others are errors")

    def handle(self, *args: object, **options: object) -> None:
        files = MetadataFiles(
            **{
                field: options[field]
                for field in (
                    "entity_names", "wikidata", "relation_types", "relation_text", "entity_types",
                    "type_labels", "relation_labels", "entity_vocab", "relation_vocab",
                )
            }
        )
        notes: list[str] = []
        with StageProgress(enabled=options["verbosity"] >= 1) as progress:
            try:
                kg = import_kg(
                    options["name"], options["dir"], files=files, replace=options["replace"],
                    description=options["description"], progress=progress, notes=notes,
                )
            except (KGFormatError, KGImportError) as exc:
                raise refused(exc) from None
        self.stdout.write(
            f"Imported {kg.name}: {kg.num_entities:,} entities, {kg.num_relations:,} relations, "
            f"triples train {kg.num_train:,} / valid {kg.num_valid:,} / test {kg.num_test:,}"
        )
        for note in notes:
            self.stdout.write(self.style.WARNING(f"note: {note}"))
