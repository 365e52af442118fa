"""Triple classification, entity-pair ranking and property prediction of an evaluation (issue 16), on the sparse
labels and on the completed labels, next to link prediction.

The metrics are the Django-free cores' (``evaluation.core.classification`` / ``negatives`` / ``pair_ranking`` /
``property_prediction``); this module picks the triples, asks each system for scores
(``evaluation.services.protocol_scores``: a system whose data cannot give a protocol gets "not computed: <reason>")
and lays the numbers out in tables. Conventions, per label set (sparse = the sample's triples; completed = sparse +
the judged positives, with the judged negatives as negatives):

- **classification**: thresholds per relation are learned on the KG's validation triples and their negatives,
  applied to the label set's positives and the test negatives of each source: ``judged`` (the campaign's / labels
  file's judged negatives; validation negatives are type-consistent corruptions of valid), ``dataset``
  (``valid_negatives.txt`` / ``test_negatives.txt`` of the dataset folder), ``corrupted-typed`` /
  ``corrupted-random`` (corruptions of valid and of the sparse triples, seeded by ``negatives_seed``). The
  completed labels add the judged negatives to every source's negatives and drop any negative judged true.
  Metrics overall and on the positives with the type-consistent / -inconsistent negatives only (the study's
  Table 8 split; types: the KG's entity types, else its relations' domain / range types, else no split and no
  ``corrupted-typed``), per relation and per relation category; ROC-AUC and PR-AUC. Validation negatives of the
  ``judged`` source are corruptions of valid (type-consistent where the KG has types).
- **pair ranking**: every relation with a relevant pair; the top ``pair_k`` (h, t) pairs not in train / valid /
  the test triples outside the sample; relevant pairs = the label set's positives of that relation.
- **property prediction**: test (h, r) of the label set's positives where h has no r in train; relations ranked
  for h, filtered by the relations h has in train.

Kendall's tau-b between the system orderings of every pair of (protocol, label set) columns (link prediction =
micro MRR, classification = accuracy per negatives source, pair ranking = MAP@K, property = MRR).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluation.core import micro as micro_core
from evaluation.core.kendall import kendall_tau_b
from evaluation.services.errors import EvaluationError
from evaluation.services.protocol_scores import (
    NotComputable, pair_block_scorer, relation_scorer, triple_scores,
)
from evaluation.services.result import NEGATIVE_SOURCES, PROTOCOLS, EvaluationOptions
from evaluation.services.scores import system_scores

COMPUTED = "computed"


def empty_frame(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(columns=columns)


@dataclass
class ProtocolResults:
    """The tables of the protocols (long format; see ``evaluation.services.report.OUTPUT_FILES``)."""

    status: pd.DataFrame = field(default_factory=lambda: empty_frame(["system", "protocol", "status"]))
    negatives: pd.DataFrame = field(default_factory=lambda: empty_frame(
        ["label_set", "negatives", "split", "positives", "negatives_total", "consistent", "inconsistent"]))
    classification: pd.DataFrame = field(default_factory=lambda: empty_frame(
        ["label_set", "negatives", "system", "subset", "metric", "value"]))
    classification_groups: pd.DataFrame = field(default_factory=lambda: empty_frame(
        ["label_set", "negatives", "system", "by", "group", "metric", "value"]))
    #: (label_set, negatives, system) -> {"roc": (fpr, tpr), "pr": (recall, precision)}; figures only
    curves: dict[tuple[str, str, str], dict[str, tuple[np.ndarray, np.ndarray]]] = field(default_factory=dict)
    pair_ranking: pd.DataFrame = field(default_factory=lambda: empty_frame(["label_set", "system", "metric", "value"]))
    pair_ranking_relations: pd.DataFrame = field(default_factory=lambda: empty_frame(
        ["label_set", "system", "relation", "relevant", "AP@K", "P@K"]))
    property: pd.DataFrame = field(default_factory=lambda: empty_frame(["label_set", "system", "metric", "value"]))
    kendall: pd.DataFrame = field(default_factory=lambda: empty_frame(
        ["ordering_a", "ordering_b", "tau", "systems"]))
    pair_k: int = 0

    def status_of(self, system: str, protocol: str) -> str:
        rows = self.status[(self.status.system == system) & (self.status.protocol == protocol)]
        return str(rows.status.iloc[0]) if len(rows) else ""


# ------------------------------------------------------------------------------------------------- inputs
@dataclass
class ProtocolInputs:
    """What every protocol reads: the KG's splits, the label sets' positives / negatives, names and groups."""

    arrays: dict[str, np.ndarray]
    num_entities: int
    num_relations: int
    positives: dict[str, np.ndarray]  # label set -> positive triples (sparse, completed)
    judged_negatives: np.ndarray  # the completed labels' negatives ([0, 3] without labels)
    judged_positives: np.ndarray
    has_judgments: bool
    relation_keys: list[str]
    categories: list[str]
    entity_keys: list[str]
    entity_types: list[np.ndarray] | None
    dataset_dir: str
    _side_types: Any = None

    def side_types(self) -> Any:
        """The core's SideTypes (built once): which entities have a type of each relation side; None untyped."""
        from evaluation.core.negatives import SideTypes

        if self.entity_types is None:
            return None
        if self._side_types is None:
            self._side_types = SideTypes(self.arrays["train"], self.entity_types, self.num_relations)
        return self._side_types


def _keys(triples: np.ndarray, num_entities: int, num_relations: int) -> np.ndarray:
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    return (triples[:, 0] * num_relations + triples[:, 1]) * num_entities + triples[:, 2]


def _unique_triples(triples: np.ndarray) -> np.ndarray:
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    return np.unique(triples, axis=0) if len(triples) else triples


def _entity_types(kg: Any, train: np.ndarray) -> list[np.ndarray] | None:
    """Per entity, the ids of its types: the KG's entity types (CoDEx ``entity2types.json``), else the domain /
    range types of the relations it heads / ends in train (FB15k-237 ``relation_types.tsv``, as
    ``evaluation.core.negatives.read_signature_types``); None when the KG has neither."""
    from evaluation.core.negatives import entity_types_from_lists
    from pooling.models import Entity, Relation

    rows = list(Entity.objects.filter(kg=kg).order_by("index").values_list("index", "types"))
    lists: list[set[str]] = [set() for _ in range(kg.num_entities)]
    for index, types in rows:
        lists[index].update(str(t) for t in (types or []))
    if not any(lists):
        signatures = list(Relation.objects.filter(kg=kg).values_list("index", "domain_type", "range_type"))
        domain = {index: d for index, d, _r in signatures if d}
        range_ = {index: r for index, _d, r in signatures if r}
        if not domain and not range_:
            return None
        for h, r, t in np.asarray(train, dtype=np.int64).reshape(-1, 3).tolist():
            if r in domain:
                lists[h].add(domain[r])
            if r in range_:
                lists[t].add(range_[r])
    return entity_types_from_lists(lists)[0]


def protocol_inputs(sample: Any, sets: dict[str, Any], arrays: dict[str, np.ndarray], relation_keys: list[str],
                    categories: list[str], options: EvaluationOptions) -> ProtocolInputs:
    from pooling.selectors.pools import entity_keys

    kg = sample.kg
    positives = {name: _unique_triples(sets[name].triples[sets[name].positive])
                 for name in ("sparse", "completed") if name in sets}
    completed = sets.get("completed")
    judged_negatives = _unique_triples(completed.triples[~completed.positive]) if completed is not None \
        else np.zeros((0, 3), dtype=np.int64)
    judged_positives = _unique_triples(completed.triples[completed.positive]) if completed is not None \
        else np.zeros((0, 3), dtype=np.int64)
    return ProtocolInputs(arrays, max(kg.num_entities, 1), max(kg.num_relations, 1), positives, judged_negatives,
                          judged_positives, completed is not None, relation_keys, categories, entity_keys(kg),
                          _entity_types(kg, arrays["train"]) if "classification" in options.protocols else None,
                          options.negatives_dir or kg.source or "")


def check_protocol_options(options: EvaluationOptions) -> None:
    unknown = [p for p in options.protocols if p not in PROTOCOLS]
    if unknown:
        raise EvaluationError(f"unknown protocol {unknown[0]!r} (one of {', '.join(PROTOCOLS)})")
    bad = [n for n in options.negatives if n not in NEGATIVE_SOURCES]
    if bad:
        raise EvaluationError(f"unknown negatives source {bad[0]!r} (one of {', '.join(NEGATIVE_SOURCES)})")
    if "classification" in options.protocols and not options.negatives:
        raise EvaluationError("triple classification needs at least one source of negatives")
    if options.pair_k < 1:
        raise EvaluationError(f"pair ranking needs K >= 1, got {options.pair_k}")


def check_protocol_sources(options: EvaluationOptions, sample: Any, has_labels: bool) -> None:
    """Refuse, before a run exists, options whose negatives cannot be had (EvaluationError says why)."""
    check_protocol_options(options)
    if "classification" not in options.protocols:
        return
    if "judged" in options.negatives and not has_labels:
        raise EvaluationError("negatives 'judged' need a campaign or a labels file (their judged negatives)")
    if "dataset" in options.negatives:
        dataset_negatives_files(options.negatives_dir or sample.kg.source)
    if "corrupted-typed" in options.negatives and not kg_has_types(sample.kg):
        raise EvaluationError(f"negatives 'corrupted-typed' need entity types (or relation domain / range types); "
                              f"{sample.kg.name} has none: use corrupted-random")


def kg_has_types(kg: Any) -> bool:
    from django.db.models import Q

    from pooling.models import Entity, Relation

    return Entity.objects.filter(kg=kg).exclude(types=[]).exists() or \
        Relation.objects.filter(kg=kg).filter(~Q(domain_type="") | ~Q(range_type="")).exists()


def dataset_negatives_files(folder: str) -> tuple[Path, Path]:
    """valid_negatives.txt and test_negatives.txt of ``folder``; EvaluationError naming what is missing."""
    base = Path(folder) if folder else None
    if base is None or not base.is_dir():
        raise EvaluationError(f"negatives 'dataset' need a dataset folder with valid_negatives.txt and "
                              f"test_negatives.txt (got {folder or 'none'}: give negatives_dir)")
    files = (base / "valid_negatives.txt", base / "test_negatives.txt")
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise EvaluationError(f"{base} has no {' / '.join(missing)} (the dataset's hard negatives)")
    return files


def read_negatives_file(path: Path, entity_index: dict[str, int], relation_index: dict[str, int]) -> np.ndarray:
    """A dataset's negatives file as index triples; EvaluationError naming file and line."""
    from evaluation.core import negatives
    from pooling.engine.kgfiles import KGFormatError

    try:
        return negatives.read_negatives_file(path, entity_index, relation_index)
    except KGFormatError as exc:
        raise EvaluationError(str(exc)) from None


# ------------------------------------------------------------------------------------------- classification
@dataclass(frozen=True)
class ClassificationTask:
    """One negatives source: validation triples (for thresholds) and, per label set, the test triples."""

    source: str
    valid_triples: np.ndarray
    valid_labels: np.ndarray
    test: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]  # label set -> (triples, labels, consistent)


def _known_true(inputs: ProtocolInputs) -> np.ndarray:
    parts = [inputs.arrays[s] for s in ("train", "valid", "test") if s in inputs.arrays] + [inputs.judged_positives]
    return np.concatenate(parts)


def _corrupted(positives: np.ndarray, inputs: ProtocolInputs, known: np.ndarray, *, typed: bool, seed: int):
    from evaluation.core.negatives import corrupt

    return corrupt(positives, inputs.num_entities, known, seed=seed, type_consistent=typed,
                   entity_types=inputs.side_types(), train_triples=inputs.arrays["train"])


def _consistency(triples: np.ndarray, inputs: ProtocolInputs) -> np.ndarray:
    """Judged / dataset negatives: both entities have a type of their side (all False without types: unknown)."""
    from evaluation.core.negatives import type_consistency

    if not len(triples) or inputs.entity_types is None:
        return np.zeros(len(triples), dtype=bool)
    return np.asarray(type_consistency(triples, None, inputs.side_types()), dtype=bool)


def classification_tasks(inputs: ProtocolInputs, options: EvaluationOptions) -> tuple[list[ClassificationTask], dict[str, str]]:
    """The tasks of the asked negatives sources, and the reason of each source that cannot be built."""
    known = _known_true(inputs)
    valid = inputs.arrays["valid"]
    tasks, skipped = [], {}
    judged_keys = _keys(inputs.judged_negatives, inputs.num_entities, inputs.num_relations)
    judged_true_keys = _keys(inputs.judged_positives, inputs.num_entities, inputs.num_relations)
    for source in options.negatives:
        seed = options.negatives_seed
        if source == "judged":
            if not len(inputs.judged_negatives):
                skipped[source] = "no judged negatives (the run has no campaign or labels file, or none was judged N)"
                continue
            # validation negatives (thresholds): corruptions of valid, type-consistent where the KG has types
            valid_neg = _corrupted(valid, inputs, known, typed=inputs.entity_types is not None, seed=seed).triples
            test_negatives = inputs.judged_negatives
            test_consistent = _consistency(test_negatives, inputs)
        elif source == "dataset":
            try:
                valid_file, test_file = dataset_negatives_files(inputs.dataset_dir)
            except EvaluationError as exc:
                skipped[source] = str(exc)
                continue
            entity_index = {k: i for i, k in enumerate(inputs.entity_keys)}
            relation_index = {k: i for i, k in enumerate(inputs.relation_keys)}
            valid_neg = read_negatives_file(valid_file, entity_index, relation_index)
            test_negatives = read_negatives_file(test_file, entity_index, relation_index)
            test_consistent = _consistency(test_negatives, inputs)
        else:
            typed = source == "corrupted-typed"
            if typed and inputs.entity_types is None:
                skipped[source] = "type-consistent corruption needs entity types (or relation domain / range " \
                                  "types); this KG has none (use corrupted-random)"
                continue
            valid_neg = _corrupted(valid, inputs, known, typed=typed, seed=seed).triples
            generated = _corrupted(inputs.positives["sparse"], inputs, known, typed=typed, seed=seed + 1)
            test_negatives, test_consistent = generated.triples, np.asarray(generated.consistent, dtype=bool)
        valid_triples = np.concatenate([valid, valid_neg])
        valid_labels = np.concatenate([np.ones(len(valid), bool), np.zeros(len(valid_neg), bool)])
        test = {}
        for label_set, positives in inputs.positives.items():
            negatives, consistent = test_negatives, test_consistent
            if label_set == "completed":  # judged negatives join; a negative judged true leaves
                keys = _keys(negatives, inputs.num_entities, inputs.num_relations)
                keep = ~np.isin(keys, judged_true_keys)
                extra = ~np.isin(judged_keys, keys)
                negatives = np.concatenate([negatives[keep], inputs.judged_negatives[extra]])
                consistent = np.concatenate([consistent[keep], _consistency(inputs.judged_negatives[extra], inputs)])
            triples = np.concatenate([positives, negatives])
            labels = np.concatenate([np.ones(len(positives), bool), np.zeros(len(negatives), bool)])
            # positives count as "consistent" so that each split keeps every positive (Table 8)
            test[label_set] = (triples, labels, np.concatenate([np.ones(len(positives), bool), consistent]))
        tasks.append(ClassificationTask(source, valid_triples, valid_labels, test))
    return tasks, skipped


def _metric_rows(metrics: dict[str, Any]) -> dict[str, float]:
    """The overall numbers of ``classification_metrics`` under the report's names."""
    names = {"accuracy": "accuracy", "precision": "precision", "recall": "recall", "f1": "F1", "F1": "F1"}
    return {names[k]: float(v) for k, v in metrics.items() if k in names and np.ndim(v) == 0}


def _group_rows(metrics: dict[str, Any], num_groups: int) -> dict[str, np.ndarray]:
    """Per-group arrays of ``classification_metrics`` (keys ``per_group`` dict or ``<metric>_per_group``)."""
    names = {"accuracy": "accuracy", "precision": "precision", "recall": "recall", "f1": "F1", "F1": "F1",
             "count": "count", "support": "count"}
    nested = metrics.get("per_group") or metrics.get("groups")
    found: dict[str, np.ndarray] = {}
    if isinstance(nested, dict):
        for key, values in nested.items():
            if key in names:
                found[names[key]] = np.asarray(values, dtype=np.float64)
    for key, values in metrics.items():
        base = key.removesuffix("_per_group").removeprefix("per_group_")
        if base in names and np.ndim(values) == 1 and len(values) == num_groups:
            found[names[base]] = np.asarray(values, dtype=np.float64)
    return found


def classify_system(scores_valid: np.ndarray, task: ClassificationTask, test_scores: dict[str, np.ndarray],
                    inputs: ProtocolInputs) -> tuple[list[tuple], list[tuple], dict[str, dict]]:
    """Rows (label_set, subset, metric, value), group rows (label_set, by, group, metric, value) and curves."""
    from evaluation.core import classification as cls

    thresholds = cls.learn_thresholds(scores_valid, task.valid_labels, task.valid_triples[:, 1],
                                      inputs.num_relations)
    rows, group_rows, curves = [], [], {}
    category_names = sorted(set(inputs.categories))
    category_codes = np.array([category_names.index(c) for c in inputs.categories], dtype=np.int64)
    for label_set, (triples, labels, consistent) in task.test.items():
        scores = test_scores[label_set]
        predicted = scores >= thresholds.for_relations(triples[:, 1])
        subsets = [("all", np.ones(len(labels), bool))]
        if inputs.entity_types is not None:  # without types consistency is unknown: no split
            subsets += [("consistent", consistent), ("inconsistent", labels | ~consistent)]
        for subset, mask in subsets:
            if not (labels[mask].any() and (~labels[mask]).any()):
                continue  # no negative of this kind
            values = _metric_rows(cls.classification_metrics(labels[mask], predicted[mask]))
            values["ROC-AUC"] = float(cls.roc_auc(scores[mask], labels[mask]))
            values["PR-AUC"] = float(cls.pr_auc(scores[mask], labels[mask]))
            values["negatives"] = float((~labels[mask]).sum())
            rows += [(label_set, subset, metric, value) for metric, value in values.items()]
        for by, codes, names in (("relation", triples[:, 1], inputs.relation_keys),
                                 ("category", category_codes[triples[:, 1]], category_names)):
            per = _group_rows(cls.classification_metrics(labels, predicted, groups=codes, num_groups=len(names)),
                              len(names))
            counts = np.bincount(codes, minlength=len(names))
            for index in np.flatnonzero(counts).tolist():
                group_rows += [(label_set, by, names[index], metric, float(values[index]))
                               for metric, values in per.items() if metric != "count"]
                group_rows.append((label_set, by, names[index], "count", float(counts[index])))
        curves[label_set] = {"roc": cls.roc_curve(scores, labels), "pr": cls.pr_curve(scores, labels)}
    return rows, group_rows, curves


# ------------------------------------------------------------------------------------------- pair ranking
def _pairs_by_relation(triples: np.ndarray) -> dict[int, set[tuple[int, int]]]:
    out: dict[int, set[tuple[int, int]]] = {}
    for h, r, t in np.asarray(triples, dtype=np.int64).reshape(-1, 3).tolist():
        out.setdefault(r, set()).add((h, t))
    return out


def pair_ranking_inputs(inputs: ProtocolInputs) -> tuple[list[int], dict[int, set], dict[str, dict[int, set]]]:
    """(relations ranked, pairs excluded per relation, relevant pairs per label set and relation)."""
    relevant = {name: _pairs_by_relation(triples) for name, triples in inputs.positives.items()}
    sample_keys = _keys(inputs.positives["sparse"], inputs.num_entities, inputs.num_relations)
    from evaluation.core.pair_ranking import known_pairs_by_relation

    test = inputs.arrays["test"]
    outside_sample = test[~np.isin(_keys(test, inputs.num_entities, inputs.num_relations), sample_keys)]
    excluded = known_pairs_by_relation(np.concatenate([inputs.arrays["train"], inputs.arrays["valid"],
                                                       outside_sample]), inputs.num_entities)
    relations = sorted(set().union(*[set(x) for x in relevant.values()]))
    return relations, excluded, relevant


def _pair_metric_rows(metrics: dict[str, Any], k: int) -> tuple[dict[str, float], dict[int, tuple[float, float]]]:
    """(MAP@K, P@K, WMAP@K, WP@K, relations) and per relation (AP@K, P@K) of ``pair_ranking_metrics``."""
    overall = {f"{name}@K": float(metrics[f"{name}@{k}"]) for name in ("MAP", "P", "WMAP", "WP")}
    overall["relations"] = float(metrics["num_relations"])
    per = {int(r): (float(v[f"AP@{k}"]), float(v[f"P@{k}"])) for r, v in metrics["per_relation"].items()}
    return overall, per


# --------------------------------------------------------------------------------------------- the whole
def compute_protocols(sample: Any, systems: list[Any], sets: dict[str, Any], arrays: dict[str, np.ndarray],
                      relation_keys: list[str], categories: list[str], lp_tables: dict[str, pd.DataFrame],
                      options: EvaluationOptions, progress=None) -> ProtocolResults:
    """Every asked protocol for every system on the sparse and completed labels (see the module doc)."""
    check_protocol_options(options)
    inputs = protocol_inputs(sample, sets, arrays, relation_keys, categories, options)
    results = ProtocolResults(pair_k=options.pair_k)
    status: list[tuple[str, str, str]] = []
    sources = {s.name: system_scores(s, sample) for s in systems}
    names = [s.name for s in systems]
    for name in names:
        status.append((name, "link_prediction", COMPUTED))
    if "classification" in options.protocols:
        _classification(inputs, options, sources, results, status)
    if "pair_ranking" in options.protocols:
        _pair_ranking(inputs, options, sources, results, status)
    if "property" in options.protocols:
        _property(inputs, options, sources, results, status)
    results.status = pd.DataFrame(status, columns=["system", "protocol", "status"])
    results.kendall = protocol_kendall(results, lp_tables, names)
    return results


def _classification(inputs: ProtocolInputs, options: EvaluationOptions, sources: dict, results: ProtocolResults,
                    status: list) -> None:
    tasks, skipped = classification_tasks(inputs, options)
    rows, group_rows, negative_rows = [], [], []
    for task in tasks:
        negative_rows.append(("-", task.source, "valid", int(task.valid_labels.sum()),
                              int((~task.valid_labels).sum()), None, None))
        for label_set, (_triples, labels, consistent) in task.test.items():
            negative_rows.append((label_set, task.source, "test", int(labels.sum()), int((~labels).sum()),
                                  int((~labels & consistent).sum()), int((~labels & ~consistent).sum())))
    for name, source in sources.items():
        reasons = [f"{s}: {why}" for s, why in skipped.items()]
        done = 0
        for task in tasks:
            everything = [task.valid_triples] + [triples for triples, _l, _c in task.test.values()]
            try:
                scores = triple_scores(source, np.concatenate(everything), device=options.device)
            except NotComputable as exc:
                reasons.append(f"{task.source}: {exc}")
                continue
            valid_scores = scores[:len(task.valid_triples)]
            test_scores, start = {}, len(task.valid_triples)
            for label_set, (triples, _l, _c) in task.test.items():
                test_scores[label_set] = scores[start:start + len(triples)]
                start += len(triples)
            task_rows, task_groups, curves = classify_system(valid_scores, task, test_scores, inputs)
            rows += [(ls, task.source, name, subset, metric, value) for ls, subset, metric, value in task_rows]
            group_rows += [(ls, task.source, name, by, group, metric, value)
                           for ls, by, group, metric, value in task_groups]
            for label_set, curve in curves.items():
                results.curves[(label_set, task.source, name)] = curve
            done += 1
        verdict = COMPUTED if done and not reasons else (
            f"{COMPUTED} ({done} of {len(options.negatives)} negatives sources); not computed: " + "; ".join(reasons)
            if done else "not computed: " + "; ".join(reasons))
        status.append((name, "classification", verdict))
    results.classification = pd.DataFrame(rows, columns=results.classification.columns)
    results.classification_groups = pd.DataFrame(group_rows, columns=results.classification_groups.columns)
    results.negatives = pd.DataFrame(negative_rows, columns=results.negatives.columns)


def _pair_ranking(inputs: ProtocolInputs, options: EvaluationOptions, sources: dict, results: ProtocolResults,
                  status: list) -> None:
    from evaluation.core.pair_ranking import pair_ranking_metrics, top_pairs

    relations, excluded, relevant = pair_ranking_inputs(inputs)
    k = options.pair_k
    rows, relation_rows = [], []
    for name, source in sources.items():
        try:
            scorer = pair_block_scorer(source, np.array(relations, dtype=np.int64), device=options.device)
        except NotComputable as exc:
            status.append((name, "pair_ranking", f"not computed: {exc}"))
            continue
        top = {r: top_pairs(scorer, r, inputs.num_entities, k, exclude=excluded.get(r)) for r in relations}
        for label_set, pairs in relevant.items():
            overall, per = _pair_metric_rows(pair_ranking_metrics(top, pairs, k), k)
            rows += [(label_set, name, metric, value) for metric, value in overall.items()]
            relation_rows += [(label_set, name, inputs.relation_keys[r], len(pairs.get(r, ())), ap, p)
                              for r, (ap, p) in sorted(per.items())]
        status.append((name, "pair_ranking", COMPUTED))
    results.pair_ranking = pd.DataFrame(rows, columns=results.pair_ranking.columns)
    results.pair_ranking_relations = pd.DataFrame(relation_rows, columns=results.pair_ranking_relations.columns)


def _property(inputs: ProtocolInputs, options: EvaluationOptions, sources: dict, results: ProtocolResults,
              status: list) -> None:
    from evaluation.core.property_prediction import property_questions, property_ranks

    train = inputs.arrays["train"]
    questions = {name: property_questions(train, positives) for name, positives in inputs.positives.items()}
    all_heads = np.unique(np.concatenate([heads for heads, _r in questions.values()]))
    rows = []
    for name, source in sources.items():
        try:
            scorer = relation_scorer(source, all_heads, device=options.device)
        except NotComputable as exc:
            status.append((name, "property", f"not computed: {exc}"))
            continue
        scorer = _cached_rows(scorer)  # the label sets share heads: score each once
        for label_set, (heads, relations) in questions.items():
            ranks = property_ranks(scorer, heads, relations, train, num_relations=inputs.num_relations,
                                   policy=options.policy)
            values = micro_core.micro_metrics(np.asarray(ranks, dtype=np.float64), options.hits)
            values["questions"] = float(len(heads))
            rows += [(label_set, name, metric, value) for metric, value in values.items()]
        status.append((name, "property", COMPUTED))
    results.property = pd.DataFrame(rows, columns=results.property.columns)


def _cached_rows(score_heads):
    """``score_heads`` remembering the row of every head it scored."""
    rows: dict[int, np.ndarray] = {}

    def score(head_ids: np.ndarray) -> np.ndarray:
        head_ids = np.asarray(head_ids, dtype=np.int64)
        missing = np.array([h for h in head_ids.tolist() if h not in rows], dtype=np.int64)
        if missing.size:
            for head, row in zip(missing.tolist(), np.asarray(score_heads(missing))):
                rows[head] = row
        return np.stack([rows[h] for h in head_ids.tolist()]) if head_ids.size else np.zeros((0, 0))

    return score


# ------------------------------------------------------------------------------------------------ Kendall
def protocol_orderings(results: ProtocolResults, lp_tables: dict[str, pd.DataFrame],
                       systems: list[str]) -> dict[str, dict[str, float]]:
    """ordering name ("<protocol> <detail> (<label set>)") -> system -> the value that orders the systems."""
    out: dict[str, dict[str, float]] = {}
    for label_set in ("sparse", "completed"):
        table = lp_tables.get(label_set)
        if table is not None and "micro_MRR" in table.columns:
            out[f"link prediction ({label_set})"] = {s: float(table.loc[s, "micro_MRR"]) for s in systems
                                                     if s in table.index}
        frame = results.classification
        sub = frame[(frame.label_set == label_set) & (frame.subset == "all") & (frame.metric == "accuracy")]
        for source in dict.fromkeys(sub.negatives):
            part = sub[sub.negatives == source]
            out[f"classification {source} ({label_set})"] = dict(zip(part.system, part.value.astype(float)))
        for protocol, metric in (("pair ranking", "MAP@K"), ("property prediction", "MRR")):
            frame = results.pair_ranking if protocol == "pair ranking" else results.property
            part = frame[(frame.label_set == label_set) & (frame.metric == metric)]
            if len(part):
                out[f"{protocol} ({label_set})"] = dict(zip(part.system, part.value.astype(float)))
    return out


def protocol_kendall(results: ProtocolResults, lp_tables: dict[str, pd.DataFrame], systems: list[str]) -> pd.DataFrame:
    """tau-b of every pair of orderings over the systems both have (NaN with fewer than two)."""
    orderings = protocol_orderings(results, lp_tables, systems)
    rows = []
    for a, b in itertools.combinations(orderings, 2):
        common = [s for s in systems if s in orderings[a] and s in orderings[b]
                  and np.isfinite(orderings[a][s]) and np.isfinite(orderings[b][s])]
        tau = kendall_tau_b([orderings[a][s] for s in common], [orderings[b][s] for s in common]) \
            if len(common) >= 2 else float("nan")
        rows.append((a, b, tau, len(common)))
    return pd.DataFrame(rows, columns=["ordering_a", "ordering_b", "tau", "systems"])


def kendall_matrix(kendall: pd.DataFrame) -> pd.DataFrame:
    """The long tau table as a symmetric matrix (1 on the diagonal)."""
    names = list(dict.fromkeys(list(kendall.ordering_a) + list(kendall.ordering_b)))
    matrix = pd.DataFrame(np.eye(len(names)), index=names, columns=names)
    for row in kendall.itertuples():
        matrix.loc[row.ordering_a, row.ordering_b] = row.tau
        matrix.loc[row.ordering_b, row.ordering_a] = row.tau
    return matrix
