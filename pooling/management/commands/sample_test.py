from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from kgpool.commands import INT32_MAX, KgpoolCommand, bounded_int, refused
from pooling.management.commands._pooling_common import get_kg


class Command(KgpoolCommand):
    help = (
        "Draw a sample of test triples of a knowledge graph and create its head and tail questions (qids head<N> / "
        "tail<N>). Uniform: sorted(random.Random(SEED).sample(range(num_test), SIZE)), which reproduces the "
        "published FB15k-237 sample with --size 1023 --seed 42. Prints the KL divergence between the sample's and "
        "the full test set's relation distributions."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kg", help="Name of the knowledge graph")
        parser.add_argument("--size", type=bounded_int(1, INT32_MAX),
                            help="Number of test triples to draw (not with --from-file)")
        parser.add_argument("--seed", type=bounded_int(0, INT32_MAX), default=42,
                            help=f"Random seed from 0 to {INT32_MAX} (default 42)")
        parser.add_argument("--stratified", action="store_true",
                            help="Allocate the sample to relations in proportion to the test set (seeded per relation)")
        parser.add_argument("--from-file", type=Path,
                            help="Read the sample instead: one 0-based test index, or one test triple `h r t`, per line")
        parser.add_argument("--name", help="Sample name, unique per KG: letters, digits, - and _ (default: "
                                           "method-size-seedS or the file name)")

    def handle(self, *args: object, **options: object) -> None:
        from pooling.services.samples import SampleError, draw_sample, sample_from_file

        kg = get_kg(options["kg"])
        try:
            if options["from_file"]:
                if options["size"] is not None or options["stratified"]:
                    raise CommandError("--from-file cannot be combined with --size or --stratified")
                sample = sample_from_file(kg, options["from_file"], name=options["name"])
            else:
                if options["size"] is None:
                    raise CommandError("give --size N (or --from-file FILE)")
                sample = draw_sample(kg, size=options["size"], seed=options["seed"],
                                     stratified=options["stratified"], name=options["name"])
        except SampleError as exc:
            raise refused(exc, "nothing was written") from None
        questions = sample.questions.count()
        heads = sample.questions.filter(side=0).count()
        self.stdout.write(
            f"Sample {kg.name}/{sample.name}: {sample.size} test triples ({sample.method}), {questions} questions "
            f"({heads} head, {questions - heads} tail), relation KL divergence {sample.kl_divergence:.4f}"
        )
