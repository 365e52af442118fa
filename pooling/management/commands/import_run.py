from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandParser

from kgpool.commands import KgpoolCommand, refused
from pooling.management.commands._pooling_common import get_kg, get_sample


class Command(KgpoolCommand):
    help = (
        "Import a TREC run (`qid Q0 entity rank score tag`) of a system made elsewhere (PyKEEN, LibKGE, ...) on a "
        "sample's questions: qids are the sample's head<N>/tail<N>, entities the KG's entity keys. The rank column "
        "is ignored (entities are ordered by score, as in trec_eval). It is stored as an imported system with a "
        "ranking that pools and evaluates like a trained one (known triples filtered the same way). Scores must be "
        "numbers: NaN and +inf are refused with their line; a line scored -inf means 'not retrieved' (like a missing "
        "line) and such lines are counted in the output. Fields longer than 255 characters are refused. All or "
        "nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kg", help="Name of the knowledge graph")
        parser.add_argument("sample", help="Sample name (or id) whose questions the run answers")
        parser.add_argument("run_file", type=Path, help="TREC run file")
        parser.add_argument("--name", required=True,
                            help="Name of the new imported system: letters, digits, - and _ (at most 100)")
        parser.add_argument("--questions", type=Path, default=None,
                            help="The campaign's questions export (qid<TAB>entity<TAB>relation): also accept the "
                                 "questions beyond the sample it names (ranked by the completed micro metrics)")
        parser.add_argument("--description", default="", help="Free text kept with the system")

    def handle(self, *args: object, **options: object) -> None:
        from pooling.services.rankings import RunImportError, import_run

        kg = get_kg(options["kg"])
        sample = get_sample(options["sample"], kg)
        try:
            system = import_run(sample, options["run_file"], name=options["name"], description=options["description"],
                                questions_path=options["questions"])
        except RunImportError as exc:
            raise refused(exc) from None
        ranking = system.rankings.get()
        mrr = f", sample MRR {ranking.mrr:.4f}" if ranking.mrr is not None else ""
        self.stdout.write(f"Imported run as system {kg.name}/{system.name}: top-{ranking.k} on {sample.name}{mrr}")
        if system.config.get("unretrieved_lines"):
            self.stdout.write(f"{system.config['unretrieved_lines']:,} run lines scored -inf count as not retrieved "
                              f"(the first on line {system.config['first_unretrieved_line']})")
