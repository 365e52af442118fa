"""What an evaluation takes (:class:`EvaluationOptions`) and gives (:class:`EvaluationResult`), with the shapes of
its tables. Torch-free, no database access."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: metrics shown in the figures and used for discriminative power / data sensitivity
KEY_METRICS = ("micro_MRR", "micro_Hits@10", "macro_MRR", "macro_MAP@10", "macro_nDCG@10", "macro_bpref", "PROBE")
#: p-MRR exponents shown next to PROBE (p = 1 is micro MRR), SPEC 5.4
P_MRR = ((1, 4), (1, 3), (1, 2), (2, 3), (3, 4))
#: open-world simulation: metrics recomputed after dropping answers
OPEN_WORLD_METRICS = ("micro_MRR", "micro_Hits@10", "micro_MR", "pMRR_1/2", "logMRR", "macro_MRR", "macro_Hits@10")
#: bumped when a definition changes the numbers, so stored results and cached reports are recomputed
#: (2: every system ranked from its scores; completed labels rank both sides of every positive triple)
DEFINITIONS_VERSION = 2
#: per label set and system: how much of the evaluation the system's scores cover (``evaluation.services.coverage``)
#: issue 16: the protocols an evaluation may add to link prediction, and the sources of classification negatives
PROTOCOLS = ("classification", "pair_ranking", "property")
PROTOCOL_NAMES = {"link_prediction": "link prediction", "classification": "triple classification",
                  "pair_ranking": "entity-pair ranking", "property": "property prediction"}
NEGATIVE_SOURCES = ("judged", "dataset", "corrupted-typed", "corrupted-random")
COVERAGE_COLUMNS = ["label_set", "system", "questions", "questions_not_scored", "answers", "answers_unranked",
                    "judged", "judged_unranked"]


@dataclass
class EvaluationOptions:
    policy: str = "realistic"
    hits: tuple[int, ...] = (1, 3, 10)
    cutoff: int = 10
    depths: list[int] | None = None  # default 0..pool depth
    probe_alpha: float = 1.0
    probe_beta: float = 0.0
    analyses: bool = True
    n_draws: int = 50
    seed: int = 0
    device: str | None = None
    dp_test: str = "t"  # discriminative power: "t" (paired t-test) or "bootstrap" (Sakai's paired bootstrap)
    n_bootstrap: int = 1000
    open_world: bool = True  # open-world simulation on the completed labels (with analyses)
    open_world_fractions: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
    open_world_repeats: int = 10
    #: protocols beyond link prediction (always computed), issue 16: any of PROTOCOLS
    protocols: tuple[str, ...] = ()
    #: triple classification: where the negatives come from (any of NEGATIVE_SOURCES, each reported apart)
    negatives: tuple[str, ...] = ("corrupted-typed",)
    #: folder with valid_negatives.txt / test_negatives.txt (negatives "dataset"; blank: the KG's source folder)
    negatives_dir: str = ""
    negatives_seed: int = 0  # corrupted negatives: a rerun with the same seed gives the same negatives
    pair_k: int = 100  # entity-pair ranking: MAP@K / P@K cut-off

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "hits": list(self.hits), "cutoff": self.cutoff, "depths": self.depths,
                "probe_alpha": self.probe_alpha, "probe_beta": self.probe_beta, "analyses": self.analyses,
                "n_draws": self.n_draws, "seed": self.seed, "dp_test": self.dp_test, "n_bootstrap": self.n_bootstrap,
                "open_world": self.open_world, "open_world_fractions": list(self.open_world_fractions),
                "open_world_repeats": self.open_world_repeats, "protocols": list(self.protocols),
                "negatives": list(self.negatives), "negatives_dir": self.negatives_dir,
                "negatives_seed": self.negatives_seed, "pair_k": self.pair_k}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "EvaluationOptions":
        data = dict(data or {})
        for key in ("hits", "open_world_fractions", "protocols", "negatives"):
            if key in data:
                data[key] = tuple(data[key])
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def _frame(columns: list[str] | None = None) -> pd.DataFrame:
    """An empty table. pandas is imported here, not at the top: the site's views read this module's constants, and
    pandas would add 0.1 s to the start of every web worker and manage.py command."""
    import pandas as pd

    return pd.DataFrame(columns=columns)


def empty_relations() -> pd.DataFrame:
    return _frame(["label_set", "system", "relation", "domain", "category", "count"])


def empty_averages() -> pd.DataFrame:
    return _frame(["label_set", "system", "average", "metric", "value"])


def empty_open_world() -> pd.DataFrame:
    return _frame(["metric", "drop_fraction", "mean_tau", "std_tau", "repeats"])


def empty_coverage() -> pd.DataFrame:
    return _frame(COVERAGE_COLUMNS)


def empty_dp() -> pd.DataFrame:
    return _frame(["label_set", "metric", "position", "pvalue"])


def empty_auc() -> pd.DataFrame:
    return _frame(["label_set", "metric", "auc", "significant_fraction", "test"])


def empty_ds() -> pd.DataFrame:
    return _frame(["label_set", "metric", "fraction", "size", "mean_tau", "std_tau"])


@dataclass
class EvaluationResult:
    """Everything an evaluation produced (tables indexed by system name)."""

    sample: str
    systems: list[str]
    label_stats: dict[str, dict[str, Any]]
    tables: dict[str, pd.DataFrame]  # label set -> systems x metrics
    kendall: pd.DataFrame  # metric x (tau sparse vs completed)
    depth_curve: pd.DataFrame  # depth x metric (tau sparse vs completed@d)
    breakdown: pd.DataFrame  # long: label_set, system, group, metric, value, count
    probe_alpha: dict[str, pd.DataFrame]  # label set -> systems x alpha
    probe_beta: dict[str, pd.DataFrame]
    probe_heatmap: dict[str, dict[str, Any]]  # label set -> {alphas, betas, values[a][b][s] normalised}
    discriminative_power: pd.DataFrame  # long: label_set, metric, position, pvalue (+auc table)
    discriminative_auc: pd.DataFrame
    data_sensitivity: pd.DataFrame  # long: label_set, metric, fraction, size, mean_tau, std_tau
    rank_stats: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0
    #: micro metrics per relation, wide: label_set, system, relation, domain, category, count, micro_* columns
    relations: pd.DataFrame = field(default_factory=empty_relations)
    #: long: label_set, system, average ("relations" | "domains"), metric, value (unweighted means of groups)
    averages: pd.DataFrame = field(default_factory=empty_averages)
    #: systems x micro metrics on the completed labels reweighted with the sparse relation distribution
    reweighted: pd.DataFrame = field(default_factory=_frame)
    #: metric x (tau sparse vs completed, tau sparse vs reweighted, tau completed vs reweighted)
    reweighted_kendall: pd.DataFrame = field(default_factory=_frame)
    #: long: metric, drop_fraction, mean_tau, std_tau, repeats (open-world simulation on the completed labels)
    open_world: pd.DataFrame = field(default_factory=empty_open_world)
    #: long: COVERAGE_COLUMNS -- per label set and system, what the system's scores could not rank
    coverage: pd.DataFrame = field(default_factory=empty_coverage)
    timings: dict[str, float] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    #: issue 16: triple classification, entity-pair ranking, property prediction (None: none asked)
    protocols: Any = None  # evaluation.services.protocols.ProtocolResults

    def main_label_sets(self) -> list[str]:
        return [name for name in ("sparse", "completed") if name in self.tables]
