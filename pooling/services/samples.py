"""Writes: samples of test triples and their questions (SPEC 3)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from django.db import transaction

from pooling.engine import userfiles
from pooling.engine.userfiles import shown
from pooling.engine.sampling import relation_kl_divergence, sample_test_indices, stratified_sample_indices
from pooling.models import KnowledgeGraph, Question, Sample, SampleTriple
from pooling.selectors.kg import kg_triples
from pooling.selectors.pools import entity_pks_of_indices, relation_pks
from pooling.services.names import checked_name, fit

_INTEGER = re.compile(r"[+-]?[0-9]+")
MAX_SEED = 2**31 - 1  # Sample.seed is a 32-bit column; numpy's generators also want seeds >= 0


class SampleError(Exception):
    """The sample was refused (bad size, bad file line, name taken); nothing was written."""


def size_refusal(size: int, test_triples: int, kg_name: str) -> str:
    """Why ``size`` test triples cannot be drawn from ``test_triples`` ('' when they can). Also the campaign plan's
    check, before the KG is imported (``campaign_checks``)."""
    if 0 < size <= test_triples:
        return ""
    return f"cannot sample {size} of the {test_triples} test triples of {kg_name}"


def draw_sample(
    kg: KnowledgeGraph, *, size: int, seed: int, stratified: bool = False, name: str | None = None
) -> Sample:
    """Draw ``size`` test triples with ``seed``.

    Uniform: ``sorted(random.Random(seed).sample(range(num_test), size))`` (reproduces the published FB15k-237
    sample with seed 42). Stratified: per-relation proportional allocation (see the engine).
    """
    if not 0 <= seed <= MAX_SEED:
        raise SampleError(f"the seed must be between 0 and {MAX_SEED}, got {seed}")
    if name is not None:
        checked_name("sample", name, SampleError)
    test = kg_triples(kg)["test"]
    if problem := size_refusal(size, len(test), kg.name):
        raise SampleError(problem)
    if stratified:
        indices = stratified_sample_indices(test[:, 1], size, seed)
        method = Sample.Method.STRATIFIED
    else:
        indices = sample_test_indices(len(test), size, seed)
        method = Sample.Method.UNIFORM
    name = name or f"{method}-{size}-seed{seed}"
    return create_sample(kg, name=name, method=method, seed=seed, indices=indices)


def sample_from_file(kg: KnowledgeGraph, path: Path | str, *, name: str | None = None) -> Sample:
    """A sample read from ``path``: one 0-based test index per line, or one test triple ``h r t`` (keys) per line.

    Blank lines and lines starting with ``#`` are skipped. Every problem (not a test triple, out of range,
    duplicate, mixed formats) raises SampleError naming the file and the line.
    """
    path = Path(path)
    if name is not None:
        checked_name("sample", name, SampleError)
    indices = read_sample_file(kg, path)
    return create_sample(kg, name=name or _slug(path.stem), method=Sample.Method.FILE, seed=None,
                         indices=indices, source=fit(str(path.resolve()), "Sample", "source"))


def read_sample_file(kg: KnowledgeGraph, path: Path) -> np.ndarray:
    """Test indices (in file order) of the triples or indices listed in ``path``; SampleError on bad lines."""
    try:
        text = userfiles.read_text(path, universal_newlines=True)
    except userfiles.UserFileError as exc:
        raise SampleError(f"{exc.where}: cannot read file: {exc.message}") from None
    test = kg_triples(kg)["test"]
    lookup: dict[tuple[str, str, str], int] | None = None
    indices: list[int] = []
    seen: dict[int, int] = {}
    kind = None
    for number, raw in enumerate(text.split("\n"), start=1):  # not splitlines(): line numbers as an editor's
        fields = raw.split()
        if not fields or fields[0].startswith("#"):
            continue
        line_kind = "index" if len(fields) == 1 else "triple" if len(fields) == 3 else None
        if line_kind is None:
            raise SampleError(f"{path}:{number}: expected a test index or a triple `h r t`, got {len(fields)} fields")
        if kind is not None and line_kind != kind:
            raise SampleError(f"{path}:{number}: mixes a {line_kind} with the {kind}s of the lines above")
        kind = line_kind
        if kind == "index":
            if not _INTEGER.fullmatch(fields[0]):  # ASCII digits only: int() also takes '١٢' and '1_0'
                raise SampleError(f"{path}:{number}: {shown(fields[0])} is not an integer test index")
            index = int(fields[0]) if len(fields[0]) <= 19 else -1  # longer: out of range anyway
            if not 0 <= index < len(test):
                raise SampleError(f"{path}:{number}: test index {fields[0][:30]} is outside 0..{len(test) - 1}")
        else:
            if lookup is None:
                lookup = _test_lookup(kg, test)
            found = lookup.get((fields[0], fields[1], fields[2]))
            if found is None:
                raise SampleError(f"{path}:{number}: ({', '.join(shown(f, 40) for f in fields)}) is not a test triple "
                                  f"of {kg.name}")
            index = found
        if index in seen:
            raise SampleError(f"{path}:{number}: test triple {index} is listed twice (first on line {seen[index]})")
        seen[index] = number
        indices.append(index)
    if not indices:
        raise SampleError(f"{path}: no test triples listed")
    return np.array(indices, dtype=np.int64)


def _test_lookup(kg: KnowledgeGraph, test: np.ndarray) -> dict[tuple[str, str, str], int]:
    from pooling.selectors.pools import entity_keys
    from pooling.selectors.kg import kg_relation_keys

    entities, relations = entity_keys(kg), kg_relation_keys(kg)
    lookup: dict[tuple[str, str, str], int] = {}
    for index, (h, r, t) in enumerate(test.tolist()):
        lookup.setdefault((entities[h], relations[r], entities[t]), index)
    return lookup


def _slug(text: str) -> str:
    from django.utils.text import slugify

    return slugify(text)[:100] or "sample"


def question_table(triples: np.ndarray) -> tuple[list[tuple[str, int, int, int]], list[list[int]]]:
    """The questions of sampled ``triples`` in qid order: [(qid, side, anchor, relation)] and, per question,
    the positions of the triples asking it.

    ``head<N>`` asks (?, r, t) and ``tail<N>`` (h, r, ?); N numbers the distinct questions of that side by first
    appearance in the sample. Head questions come first (their position is the ranking row).
    """
    from pooling.engine.questions import HEAD, TAIL

    table: list[tuple[str, int, int, int]] = []
    members: list[list[int]] = []
    for side, label, anchor_column in ((HEAD, "head", 2), (TAIL, "tail", 0)):
        index_of: dict[tuple[int, int], int] = {}
        for position, triple in enumerate(triples.tolist()):
            key = (triple[anchor_column], triple[1])
            if key not in index_of:
                index_of[key] = len(table)
                table.append((f"{label}{len(index_of) - 1}", side, key[0], key[1]))
                members.append([])
            members[index_of[key]].append(position)
    return table, members


def create_sample(
    kg: KnowledgeGraph,
    *,
    name: str,
    method: str,
    seed: int | None,
    indices: np.ndarray,
    source: str = "",
) -> Sample:
    """Write a sample of the given test ``indices`` (kept sorted ascending), its triples and questions."""
    test = kg_triples(kg)["test"]
    indices = np.unique(np.asarray(indices, dtype=np.int64))
    checked_name("sample", name, SampleError)
    if Sample.objects.filter(kg=kg, name=name).exists():
        raise SampleError(f"a sample named {name!r} already exists in {kg.name}")
    triples = test[indices]
    kl = relation_kl_divergence(triples[:, 1], test[:, 1])
    entity_pk = entity_pks_of_indices(kg, np.concatenate([triples[:, 0], triples[:, 2]]).tolist())  # not all E
    relation_pk = relation_pks(kg)
    table, members = question_table(triples)
    with transaction.atomic():
        sample = Sample.objects.create(
            kg=kg, name=name, method=method, seed=seed, size=len(indices), kl_divergence=kl, source=source
        )
        rows = SampleTriple.objects.bulk_create(
            [
                SampleTriple(
                    sample=sample, position=position, test_index=int(index),
                    head_id=int(entity_pk[h]), relation_id=int(relation_pk[r]), tail_id=int(entity_pk[t]),
                )
                for position, (index, (h, r, t)) in enumerate(zip(indices.tolist(), triples.tolist()))
            ],
            batch_size=2000,
        )
        questions = Question.objects.bulk_create(
            [
                Question(
                    sample=sample, qid=qid, position=position, side=side,
                    anchor_id=int(entity_pk[anchor]), relation_id=int(relation_pk[relation]),
                )
                for position, (qid, side, anchor, relation) in enumerate(table)
            ],
            batch_size=2000,
        )
        through = Question.triples.through
        through.objects.bulk_create(
            [
                through(question_id=question.pk, sampletriple_id=rows[position].pk)
                for question, positions in zip(questions, members)
                for position in positions
            ],
            batch_size=5000,
        )
    return sample
