from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandParser

from kgpool.commands import INT32_MAX, KgpoolCommand, bounded_int, refused
from pooling.management.commands._pooling_common import get_kg, get_sample


class Command(KgpoolCommand):
    help = (
        "Import a per-question score matrix of a system made elsewhere (PyKEEN, LibKGE, ...) on a sample's "
        "questions: a .npy float array (Q, E) or a .npz with `scores` (Q, E) and optionally `entities` (E,) and "
        "`qids` (Q,) strings. Columns are the KG's entity indices unless an entity index names them; rows follow "
        "the questions' positions unless qids name them. It is ranked like a trained system (known triples "
        "filtered) and stored as an imported system with a ranking that pools and evaluates like a trained one. "
        "Scores: NaN and -inf mean 'not scored' (ranked last, never pooled; questions with no finite score are "
        "counted in the output), +inf and a matrix with no finite score are refused. The declared shape must be "
        "(questions, entities) and is checked before anything is loaded. All or nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kg", help="Name of the knowledge graph")
        parser.add_argument("sample", help="Sample name (or id) whose questions the matrix scores")
        parser.add_argument("scores_file", type=Path, help="Score matrix (.npy or .npz, no pickled objects)")
        parser.add_argument("--name", required=True,
                            help="Name of the new imported system: letters, digits, - and _ (at most 100)")
        parser.add_argument("--entities", type=Path, default=None,
                            help="Entity index: one entity key per line, one line per matrix column")
        parser.add_argument("--questions", type=Path, default=None,
                            help="Question index: one qid (head<N>/tail<N>) per line, one line per matrix row; "
                                 "lines qid<TAB>entity<TAB>relation (the campaign's questions export) may also "
                                 "name questions beyond the sample")
        parser.add_argument("--k", type=bounded_int(1, INT32_MAX), default=None,
                            help="Depth of the stored ranking (default 1,000 or every candidate when fewer; at most "
                                 "every candidate)")
        parser.add_argument("--description", default="", help="Free text kept with the system")

    def handle(self, *args: object, **options: object) -> None:
        from pooling.services.rankings import RunImportError, import_scores

        kg = get_kg(options["kg"])
        sample = get_sample(options["sample"], kg)
        try:
            system = import_scores(
                sample, options["scores_file"], name=options["name"], entity_index_path=options["entities"],
                questions_path=options["questions"], description=options["description"], k=options["k"],
            )
        except RunImportError as exc:
            raise refused(exc) from None
        ranking = system.rankings.get()
        mrr = f", sample MRR {ranking.mrr:.4f}" if ranking.mrr is not None else ""
        self.stdout.write(f"Imported scores as system {kg.name}/{system.name}: top-{ranking.k} on {sample.name}{mrr}")
        if system.config.get("unscored_questions"):
            self.stdout.write(f"{system.config['unscored_questions']:,} questions have no finite score (all NaN / -inf):"
                              " nothing retrieved, their answers rank last")
