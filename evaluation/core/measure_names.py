"""trec_eval's measure names: which measures exist, their parameters, printed names and order.

A request such as ``-m P.5,10`` or ``-m ndcg.1=3,2=9`` becomes one :class:`Measure` per printed value
(``P_5``, ``P_10``; ``ndcg_1=3,2=9``). The rules are trec_eval 10's (``trec_eval.c``, ``meas_init.c``):

- ``name.params``: the name is what precedes the first ``.``; parameters are comma separated.
- Cut-off measures (``P``, ``recall``, ``success``...) read integer cut-offs as C's ``atol`` does
  (``23.4`` is 23), sort them, and refuse non-positive or duplicate ones; ``iprec_at_recall`` and
  ``Rprec_mult`` read numbers (``.25``) and print them with ``%3.2f`` (``iprec_at_recall_0.25``).
- Measures with number parameters (``utility``, ``set_F``, ``11pt_avg``, ``relstring``) and with
  ``level=gain`` pairs (``ndcg``, ``G``, ``rbp``...) print ``name_<parameters as typed>``.
- Only the first parameter list given for a measure counts (``-m P.5 -m P.10`` prints ``P_5`` only).
- Values print in trec_eval's measure order (``measures.c``), not in the order requested.

kgpool extensions: ``P_10``-style single cut-off names (several of them add up), ``MR`` (rank of the
first relevant document) and ``ndcg_p`` (implemented in trec_eval's ``m_ndcg_p.c`` but not registered
there).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterable

#: trec_eval's default cut-offs / parameters.
_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

# kind: "plain" (no parameters), "long" (integer value, summed), "string", "gm" (geometric mean of
# a per-query log value, summary only), "cut" (integer cut-offs), "cut_real" (real cut-offs),
# "real" (list of numbers), "pairs" (level=gain pairs).
_REGISTRY: tuple[tuple[str, str, tuple | None], ...] = (
    ("runid", "string", None),
    ("num_q", "long", None),
    ("num_ret", "long", None),
    ("num_rel", "long", None),
    ("num_rel_ret", "long", None),
    ("map", "plain", None),
    ("gm_map", "gm", None),
    ("Rprec", "plain", None),
    ("bpref", "plain", None),
    ("recip_rank", "plain", None),
    ("iprec_at_recall", "cut_real", _RECALL_LEVELS),
    ("P", "cut", _CUTS),
    ("relstring", "real", (10.0,)),
    ("recall", "cut", _CUTS),
    ("infAP", "plain", None),
    ("gm_bpref", "gm", None),
    ("Rprec_mult", "cut_real", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    ("utility", "real", (1.0, -1.0, 0.0, 0.0)),
    ("11pt_avg", "real", _RECALL_LEVELS),
    ("binG", "plain", None),
    ("G", "pairs", ()),
    ("dcg", "pairs", ()),
    ("ideal_dcg", "pairs", ()),
    ("ndcg", "pairs", ()),
    ("ndcg_rel", "pairs", ()),
    ("Rndcg", "pairs", ()),
    ("ndcg_cut", "cut", _CUTS),
    ("map_cut", "cut", _CUTS),
    ("relative_P", "cut", _CUTS),
    ("success", "cut", (1, 5, 10)),
    ("set_P", "plain", None),
    ("set_relative_P", "plain", None),
    ("set_recall", "plain", None),
    ("set_map", "plain", None),
    ("set_F", "real", (1.0,)),
    ("num_nonrel_judged_ret", "long", None),
    ("yaap", "plain", None),
    ("rbp", "pairs", ()),
    ("rbp_resid", "pairs", ()),
    ("unj", "cut", (5, 10, 20)),
    ("ndcg_p", "pairs", ()),
    ("MR", "plain", None),
)
#: the kinds above: an entry of any other kind (a typo) would silently be parsed as a plain measure
_KIND_NAMES = frozenset({"plain", "long", "string", "gm", "cut", "cut_real", "real", "pairs"})
if _unknown_kinds := {kind for _, kind, _ in _REGISTRY} - _KIND_NAMES:
    raise ValueError(f"measure registry: unknown kinds {sorted(_unknown_kinds)}")
KINDS: dict[str, str] = {name: kind for name, kind, _ in _REGISTRY}
DEFAULTS: dict[str, tuple | None] = {name: default for name, _, default in _REGISTRY}
ORDER: dict[str, int] = {name: index for index, (name, _, _) in enumerate(_REGISTRY)}

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid",
                 "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
                 "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
                 "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
}
#: trec_eval measure groups that need preference or judgment-group files (``-R prefs`` ...).
UNSUPPORTED_NICKNAMES = frozenset({"all_prefs", "prefs", "qrels_jg"})
#: Measures trec_eval reports as a sum over queries, printed as integers.
SUMMED = frozenset(name for name, kind, _ in _REGISTRY if kind == "long" and name != "num_q")
#: Measures whose per-query value is printed (runid, num_q, gm_* appear in the summary only).
SUMMARY_ONLY = frozenset({"runid", "num_q", "gm_map", "gm_bpref"})


class UnknownMeasureError(ValueError):
    """A measure name or parameter list that trec_eval (or kgpool) does not accept."""


@dataclass(frozen=True)
class Measure:
    """One printed value: trec_eval measure ``base`` with its parameter, e.g. ``P`` with cut-off 10.

    ``param`` is the cut-off (int) of a cut measure, the level (float) of ``iprec_at_recall`` /
    ``Rprec_mult``, the tuple of numbers of a ``real`` measure, the tuple of ``(name, value)`` pairs of
    a ``pairs`` measure, or None.
    """

    base: str
    param: object
    name: str

    @property
    def kind(self) -> str:
        return KINDS[self.base]

    @property
    def sort_key(self) -> tuple:
        param = self.param if self.kind in ("cut", "cut_real") else 0
        return ORDER[self.base], param

    @property
    def gains(self) -> dict[int, float]:
        """``level=gain`` parameters of a pairs measure (levels are integers)."""
        return {int(key): value for key, value in (self.param or ()) if _is_int(key)}

    def named(self, key: str, default: float) -> float:
        """A non-level ``name=value`` parameter of a pairs measure (``rbp.p=0.8``)."""
        return next((value for name, value in (self.param or ()) if name == key), default)


# ---------------------------------------------------------------------- C number parsing
_ATOL = re.compile(r"\s*([+-]?\d+)")
_ATOF = re.compile(r"\s*([+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))",
                   re.IGNORECASE)


LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1  # C's long on the 64-bit systems trec_eval is built for


def atol(text: str) -> int:
    """C's ``atol``: the leading integer of ``text``, 0 when there is none; glibc's (``strtol``) clamps what a long
    cannot hold to its limits, so ``-M 99999999999999999999`` is "no limit", not an overflow."""
    match = _ATOL.match(text)
    return min(max(int(match.group(1)), LONG_MIN), LONG_MAX) if match else 0


def atof(text: str) -> float:
    """C's ``atof``: the leading number of ``text``, 0.0 when there is none."""
    match = _ATOF.match(text)
    return float(match.group(1)) if match else 0.0


def _is_int(text: str) -> bool:
    return re.fullmatch(r"[+-]?\d+", text) is not None


# ---------------------------------------------------------------------- requests
def _cut_name(base: str, value: float) -> str:
    # trec_eval: snprintf(name, strlen(base) + 10, "%s_%3.2f") -- at most 8 characters of number
    return f"{base}_{value:3.2f}"[: len(base) + 9]


def _parse_cuts(base: str, params: str) -> list[int]:
    cuts = sorted(atol(part) for part in params.split(","))
    if cuts[0] <= 0:
        raise UnknownMeasureError(f"cut-offs of {base!r} must be positive, got {params!r}")
    if len(set(cuts)) != len(cuts):
        raise UnknownMeasureError(f"duplicate cut-offs in {base}.{params}")
    return cuts


def _parse_real_cuts(base: str, params: str) -> list[float]:
    cuts = sorted(atof(part) for part in params.split(","))
    if cuts[0] < 0 or not math.isfinite(cuts[-1]):  # a negative one failed later as "unknown measure 'X_-1.00'"
        raise UnknownMeasureError(f"cut-offs of {base!r} must be finite numbers >= 0, got {params!r}")
    if len(set(cuts)) != len(cuts):
        raise UnknownMeasureError(f"duplicate cut-offs in {base}.{params}")
    return cuts


def _parse_pairs(base: str, params: str) -> tuple[tuple[str, float], ...]:
    pairs = []
    for part in params.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key or "=" in value:
            raise UnknownMeasureError(f"malformed pair parameters in {base}.{params} (expected level=gain,...)")
        if _is_int(key) and int(key) < 0:
            raise UnknownMeasureError(f"gain levels must be >= 0 in {base}.{params}")
        gain = atof(value)
        if not math.isfinite(gain):  # trec_eval's sort of the gains casts a NaN / infinite difference to int
            raise UnknownMeasureError(f"gains must be finite numbers in {base}.{params}")
        pairs.append((key, gain))
    levels = [int(key) for key, _ in pairs if _is_int(key)]
    if len(set(levels)) != len(levels):
        raise UnknownMeasureError(f"a level is given two gains in {base}.{params}")
    return tuple(pairs)


def _measures_of(base: str, params: str | None, extra_cuts: Iterable = (), defaults: bool = True) -> list[Measure]:
    kind = KINDS[base]
    if kind in ("cut", "cut_real"):
        if params is not None:
            cuts = _parse_cuts(base, params) if kind == "cut" else _parse_real_cuts(base, params)
        else:
            cuts = list(DEFAULTS[base]) if defaults else []
        cuts = sorted(set(cuts) | set(extra_cuts))
        if kind == "cut":
            return [Measure(base, int(k), f"{base}_{int(k)}") for k in cuts]
        return [Measure(base, float(k), _cut_name(base, k)) for k in cuts]
    if params is None:
        return [Measure(base, DEFAULTS[base], base)]
    if kind == "real":
        values = tuple(atof(part) for part in params.split(","))
        if base == "utility" and len(values) != 4:
            raise UnknownMeasureError(f"utility takes 4 coefficients, got {params!r}")
        return [Measure(base, values, f"{base}_{params}")]
    if kind == "pairs":
        return [Measure(base, _parse_pairs(base, params), f"{base}_{params}")]
    raise UnknownMeasureError(f"measure {base!r} takes no parameters")


_UNDERSCORE_CUT = re.compile(r"^(.+)_([0-9.]+)$")


def request(specs: Iterable[str]) -> list[Measure]:
    """Measures for trec_eval ``-m`` arguments, in trec_eval's printing order.

    Accepts measure names, ``name.params``, nicknames (``official``, ``all_trec``, ``set``) and the
    single cut-off names trec_eval prints (``P_10``, ``iprec_at_recall_0.10``). Raises UnknownMeasureError.
    """
    params: dict[str, str | None] = {}
    plain: set[str] = set()  # requested without a single cut-off name: default cut-offs apply
    extra_cuts: dict[str, set] = {}
    for spec in specs:
        base, dot, rest = spec.partition(".")
        if base in UNSUPPORTED_NICKNAMES:
            raise UnknownMeasureError(f"measure group {base!r} needs preference judgments (-R prefs), "
                                      "which are not supported")
        if base in NICKNAMES and not dot:
            for name in NICKNAMES[base]:
                params.setdefault(name, None)
                plain.add(name)
            continue
        if base in KINDS:
            if dot and not rest:
                raise UnknownMeasureError(f"improper measure parameters in {spec!r}")
            params.setdefault(base, None)
            plain.add(base)
            if dot and params[base] is None:
                params[base] = rest  # the first parameter list wins, as in trec_eval
            continue
        match = _UNDERSCORE_CUT.match(spec)
        if match and KINDS.get(match.group(1)) in ("cut", "cut_real"):
            cut_base, number = match.groups()
            value = float(number) if KINDS[cut_base] == "cut_real" else _whole(spec, number)
            params.setdefault(cut_base, None)
            extra_cuts.setdefault(cut_base, set()).add(value)
            continue
        raise UnknownMeasureError(f"unknown measure {spec!r}")
    measures = [m for base, p in params.items()
                for m in _measures_of(base, p, extra_cuts.get(base, ()), defaults=base in plain)]
    return sorted(measures, key=lambda m: m.sort_key)


def _whole(spec: str, number: str) -> int:
    if not number.isdigit() or int(number) < 1:
        raise UnknownMeasureError(f"cut-off must be a positive integer in {spec!r}")
    return int(number)


def from_name(name: str) -> Measure:
    """The measure a printed name stands for: ``map``, ``P_10``, ``ndcg_cut_20``, ``set_F_0.5``, ``ndcg_1=3``."""
    if name in KINDS:
        if KINDS[name] in ("cut", "cut_real"):
            raise UnknownMeasureError(f"measure {name!r} needs a cut-off, e.g. {name}_10")
        return _measures_of(name, None)[0]
    match = _UNDERSCORE_CUT.match(name)
    if match and KINDS.get(match.group(1)) in ("cut", "cut_real"):
        return request([name])[0]
    for base in _PARAMETERISED:  # longest first: rbp_resid_p=0.8 is rbp_resid's, not rbp's
        if name.startswith(base + "_") and len(name) > len(base) + 1:
            return _measures_of(base, name[len(base) + 1:])[0]
    raise UnknownMeasureError(f"unknown measure {name!r}")


_PARAMETERISED = sorted((b for b, k in KINDS.items() if k in ("real", "pairs")), key=len, reverse=True)
