"""The campaign file (Django-free): a whole campaign declared in one TOML file, read with the standard library.

``parse_campaign_file`` reads and checks it into a :class:`CampaignSpec` (every problem is one line naming the
file and, where it can be found, the line); ``spec_to_toml`` writes a spec back (``campaign export``);
``spec_from_dict`` / ``CampaignSpec.to_dict`` are the JSON form kept with the campaign. What applying a spec
does is ``annotation.services.campaign_apply``. The tables, in the order they are applied:

- ``[campaign]`` name, description; ``[kg]`` name, path (a dataset folder, relative to the file) and the metadata
  files of ``import_kg``; ``[[systems]]`` one per system: ``train`` (architecture and settings), or a file to
  import: ``checkpoint`` (PyKEEN), ``scores`` (a score matrix) or ``run`` (a TREC run);
- ``[sample]`` size, seed, stratified, or a file; ``[pool]`` depth, systems, name;
- ``[filters]`` the trivial rules and their options; ``[templates]`` relation key = question template;
  ``[guidelines]`` campaign = the campaign-wide text, relation key = that relation's text (Markdown);
  ``[sources]`` allowed_domains; ``[judging]`` order, budget, gold rate and the other campaign settings;
  ``[members]`` role = [usernames]; ``[evaluation]`` the evaluation to run when judging is done.
"""
from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from annotation.lib.guidelines import CAMPAIGN_KEY, MAX_GUIDELINES_CHARS
from annotation.lib.evidence import DEFAULT_EVIDENCE_POLICY, EVIDENCE_POLICIES
from annotation.lib.judging_order import ORDERS
from annotation.lib.rules import RULES
from annotation.lib.sources import domains_refusal
from annotation.lib.type_rule import TYPE_SOURCES
from pooling.engine.architectures import ARCHITECTURE_NAMES

VERSION = 1
ROLES = ("admin", "annotator", "adjudicator", "expert")  # = annotation.models.Role (checked by a test)
SYSTEM_KINDS = ("train", "checkpoint", "scores", "run")
KG_FILES = ("entity_names", "wikidata", "relation_types", "relation_text", "entity_types", "type_labels",
            "relation_labels", "entity_vocab", "relation_vocab")
TRAIN_OPTIONS = {"architecture": str, "dim": int, "epochs": int, "lr": float, "batch_size": int, "seed": int,
                 "patience": int, "eval_every": int, "device": str, "num_threads": int, "hyperparameters": dict}
POLICIES = ("realistic", "optimistic", "pessimistic")
MAX_FILE_BYTES = 1 << 20  # a campaign file is a page of settings: 1 MiB is far more than any needs
INT32_MAX = 2**31 - 1
_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}\Z")
_POOL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+-]{0,199}\Z")


class CampaignFileError(ValueError):
    """The campaign file is not usable; the message is one line naming the file (and line)."""


@dataclass(frozen=True)
class KGSpec:
    name: str
    path: str | None = None  # dataset folder (absolute once read)
    description: str = ""
    files: dict[str, str] = field(default_factory=dict)  # import_kg metadata option -> file (absolute)


@dataclass(frozen=True)
class SystemSpec:
    name: str
    kind: str  # train | checkpoint | scores | run
    train: dict[str, Any] = field(default_factory=dict)  # kind train: architecture and training settings
    path: str | None = None  # the file or folder to import (absolute)
    options: dict[str, Any] = field(default_factory=dict)  # import options: format, model, options, entities,
    # questions (files, absolute), k, description


@dataclass(frozen=True)
class SampleSpec:
    name: str | None = None
    size: int | None = None
    seed: int = 0
    stratified: bool = False
    file: str | None = None  # test indices or test triples, one per line (absolute)

    def default_name(self) -> str:
        if self.name:
            return self.name
        if self.file:
            stem = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(self.file).stem).strip("-").lower()[:100]
            return stem or "sample"
        return f"{'stratified' if self.stratified else 'uniform'}-{self.size}-seed{self.seed}"


@dataclass(frozen=True)
class PoolSpec:
    depth: int
    systems: tuple[str, ...] | None = None  # default: every system of the file
    name: str | None = None
    chunk_size: int | None = None


@dataclass(frozen=True)
class FilterSpec:
    rules: tuple[str, ...] = RULES
    threshold: float = 1.5
    type_source: str = "dataset"
    type_min_support: int = 2
    type_max_overlap: float = 0.0


@dataclass(frozen=True)
class JudgingSpec:
    """Campaign settings of ``[judging]``. Guidelines and "can't tell" settings belong here too once campaigns
    have them (one field each, read in ``_judging``, applied in ``campaign_apply.settings``)."""

    order: str = "random"
    budget: int | None = None
    assignment_timeout_s: int = 1800
    gold_rate: float = 0.05
    gold_seed: int = 0
    rushed_factor: float = 0.25
    gold_threshold: float = 0.8
    evidence_policy: str = DEFAULT_EVIDENCE_POLICY  # for which answers a source URL is required
    seed: int = 0  # shuffles the queue when the campaign is created
    reuse: bool = True  # take over final labels of earlier campaigns on the same KG


#: the same names as evaluation.services.result.PROTOCOLS / NEGATIVE_SOURCES (this module imports no app)
PROTOCOL_CHOICES = ("classification", "pair_ranking", "property")
NEGATIVE_CHOICES = ("judged", "dataset", "corrupted-typed", "corrupted-random")


@dataclass(frozen=True)
class EvaluationSpec:
    when: str = "done"  # "done": when judging is done; "never": declared only (start it by hand or API)
    systems: tuple[str, ...] | None = None  # default: every evaluable system of the sample
    policy: str = "realistic"
    cutoff: int = 10
    depths: tuple[int, ...] | None = None
    analyses: bool = True
    open_world: bool = True
    dp_test: str = "t"
    device: str | None = None
    # protocols beyond link prediction (evaluation.services.result.PROTOCOLS / NEGATIVE_SOURCES, issue 16)
    protocols: tuple[str, ...] = ()
    negatives: tuple[str, ...] = ("corrupted-typed",)
    negatives_dir: str | None = None
    negatives_seed: int = 0
    pair_k: int = 100

    def options(self) -> dict[str, Any]:
        """The ``EvaluationOptions`` keyword arguments it sets."""
        return {"policy": self.policy, "cutoff": self.cutoff, "depths": list(self.depths) if self.depths else None,
                "analyses": self.analyses, "open_world": self.open_world, "dp_test": self.dp_test,
                "device": self.device, "protocols": tuple(self.protocols), "negatives": tuple(self.negatives),
                "negatives_dir": self.negatives_dir or "", "negatives_seed": self.negatives_seed,
                "pair_k": self.pair_k}


@dataclass(frozen=True)
class CampaignSpec:
    name: str
    kg: KGSpec
    sample: SampleSpec
    pool: PoolSpec
    systems: tuple[SystemSpec, ...] = ()
    description: str = ""
    filters: FilterSpec | None = None
    templates: dict[str, str] = field(default_factory=dict)
    guidelines: dict[str, str] = field(default_factory=dict)  # "campaign" (campaign-wide) or relation key -> text
    allowed_domains: tuple[str, ...] | None = None  # None: the default verified domains
    judging: JudgingSpec = JudgingSpec()
    members: dict[str, tuple[str, ...]] = field(default_factory=dict)
    evaluation: EvaluationSpec | None = None
    version: int = VERSION

    def pool_systems(self) -> tuple[str, ...]:
        return self.pool.systems if self.pool.systems is not None else tuple(s.name for s in self.systems)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (lists for tuples), read back by :func:`spec_from_dict`."""
        return json.loads(json.dumps(asdict(self)))

    def canonical(self) -> dict[str, Any]:
        """:meth:`to_dict` with what does not change the campaign normalised: systems by name, the pool's systems
        spelled out, members sorted (an exported file is the same campaign as the file that made it)."""
        data = self.to_dict()
        data["systems"] = sorted(data["systems"], key=lambda s: s["name"])
        data["pool"]["systems"] = sorted(self.pool_systems())
        data["members"] = {role: sorted(names) for role, names in data["members"].items() if names}
        return data


# --------------------------------------------------------------------------------------------------- reading
def parse_campaign_file(path: Path | str) -> CampaignSpec:
    """Read and check the campaign file at ``path``; relative paths in it are relative to its folder."""
    path = Path(path)
    try:
        if not path.is_file():
            raise CampaignFileError(f"{path}: no such file (a campaign file is a .toml file)")
        raw = path.read_bytes()
    except OSError as exc:
        raise CampaignFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise CampaignFileError(f"{path}: {len(raw)} bytes; a campaign file is at most {MAX_FILE_BYTES} bytes")
    try:  # "utf-8-sig": the byte-order mark some editors write is no TOML ("Invalid statement" before)
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise CampaignFileError(f"{path}:{line}: not UTF-8 text (byte {exc.start})") from None
    return parse_campaign_text(text, path)


def parse_campaign_text(text: str, path: Path | str = "<campaign file>") -> CampaignSpec:
    path = Path(path)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        where = f"{path}:{match.group(1)}" if match else str(path)
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise CampaignFileError(f"{where}: not valid TOML: {message}") from None
    return _Reader(document, text, path).spec()


def spec_from_dict(data: dict[str, Any]) -> CampaignSpec:
    """The spec of :meth:`CampaignSpec.to_dict` (no checks: it was checked when read)."""
    def tuples(value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    def make(cls: type, values: dict[str, Any] | None) -> Any:
        if values is None:
            return None
        return cls(**{f.name: tuples(values[f.name]) for f in fields(cls) if f.name in values})

    return CampaignSpec(
        name=data["name"], description=data.get("description", ""), version=data.get("version", VERSION),
        kg=make(KGSpec, data["kg"]), sample=make(SampleSpec, data["sample"]), pool=make(PoolSpec, data["pool"]),
        systems=tuple(make(SystemSpec, s) for s in data.get("systems", [])),
        filters=make(FilterSpec, data.get("filters")), templates=dict(data.get("templates") or {}),
        guidelines=dict(data.get("guidelines") or {}),
        allowed_domains=tuples(data.get("allowed_domains")), judging=make(JudgingSpec, data.get("judging") or {}),
        members={role: tuple(names) for role, names in (data.get("members") or {}).items()},
        evaluation=make(EvaluationSpec, data.get("evaluation")),
    )


class _Reader:
    """Checks a parsed document table by table; errors name the file and the line of the offending key."""

    def __init__(self, document: dict[str, Any], text: str, path: Path):
        self.doc, self.lines, self.path = document, text.split("\n"), path
        self.base = path.resolve().parent if path.name != "<campaign file>" else Path.cwd()

    # -- errors
    def line_of(self, table: str | None, key: str | None = None, occurrence: int = 0) -> int | None:
        """Line (1-based) of ``key`` in ``[table]`` (the ``occurrence``-th ``[[table]]``), or of the header; None
        when neither is named (a missing table: no line, not that of some ``"" = ...`` key)."""
        if table is None and key is None:
            return None
        start = 0
        if table is not None:
            header = re.compile(r"\s*\[\[?\s*" + re.escape(table) + r"\s*\]\]?\s*(#.*)?$")
            found = [n for n, line in enumerate(self.lines) if header.match(line)]
            if len(found) <= occurrence:
                if "." in table:  # an inline table, e.g. systems.train: the line of its key in the outer table
                    outer, _, inner = table.rpartition(".")
                    return self.line_of(outer, inner, occurrence)
                return None
            start = found[occurrence]
            if key is None:
                return start + 1
        pattern = re.compile(r"\s*(\"?)" + re.escape(key) + r"\1\s*=")
        for number in range(start + (1 if table is not None else 0), len(self.lines)):
            line = self.lines[number]
            if table is not None and number > start and re.match(r"\s*\[", line):
                break
            if pattern.match(line):
                return number + 1
        return start + 1 if table is not None else None

    def fail(self, message: str, table: str | None = None, key: str | None = None, occurrence: int = 0):
        line = self.line_of(table, key, occurrence)
        where = f"{self.path}:{line}" if line else str(self.path)
        raise CampaignFileError(f"{where}: {message}")

    # -- typed reads
    def table(self, name: str, *, required: bool = False) -> dict[str, Any] | None:
        value = self.doc.get(name)
        if value is None:
            if required:
                self.fail(f"the [{name}] table is missing")
            return None
        if not isinstance(value, dict):
            self.fail(f"{name} must be a table ([{name}])", None, name)
        return value

    def known(self, values: dict[str, Any], table: str, allowed: tuple[str, ...] | set[str], occurrence: int = 0):
        for key in values:
            if key not in allowed:
                self.fail(f"[{table}] has no setting {key!r}; settings: {', '.join(sorted(allowed))}", table, key,
                          occurrence)

    def value(self, values: dict[str, Any], key: str, kind: type | tuple[type, ...], table: str, default: Any = None,
              *, required: bool = False, low: float | None = None, high: float | None = None,
              choices: tuple[str, ...] | None = None, occurrence: int = 0) -> Any:
        if key not in values:
            if required:
                self.fail(f"[{table}] needs {key}", table, None, occurrence)
            return default
        value = values[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        if not ok and float in kinds and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            names = " or ".join({int: "an integer", float: "a number", str: "a string", bool: "true or false",
                                 list: "a list", dict: "a table"}[k] for k in kinds)
            self.fail(f"{table}.{key} must be {names}, got {_shown(value)}", table, key, occurrence)
        if isinstance(value, float) and not math.isfinite(value):
            self.fail(f"{table}.{key} must be a finite number, got {value}", table, key, occurrence)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if (low is not None and value < low) or (high is not None and value > high):
                bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
                self.fail(f"{table}.{key} must be {bounds}, got {value}", table, key, occurrence)
        if choices is not None and value not in choices:
            self.fail(f"{table}.{key} must be one of {', '.join(choices)}, got {_shown(value)}", table, key, occurrence)
        return value

    def names(self, values: dict[str, Any], key: str, table: str, pattern: re.Pattern = _SLUG,
              occurrence: int = 0) -> tuple[str, ...] | None:
        items = self.value(values, key, list, table, occurrence=occurrence)
        if items is None:
            return None
        for item in items:
            if not isinstance(item, str) or not pattern.match(item):
                self.fail(f"{table}.{key}: {_shown(item)} is not a name (letters, digits, - and _)", table, key,
                          occurrence)
        if len(set(items)) != len(items):
            self.fail(f"{table}.{key} lists a name twice", table, key, occurrence)
        return tuple(items)

    def file(self, values: dict[str, Any], key: str, table: str, occurrence: int = 0) -> str | None:
        text = self.value(values, key, str, table, occurrence=occurrence)
        if text is None:
            return None
        if not text.strip() or "\x00" in text:
            self.fail(f"{table}.{key} must name a file or folder", table, key, occurrence)
        return str((self.base / Path(text).expanduser()).resolve())

    def slug(self, values: dict[str, Any], key: str, table: str, what: str, *, required: bool = False,
             pattern: re.Pattern = _SLUG, occurrence: int = 0) -> str | None:
        name = self.value(values, key, str, table, required=required, occurrence=occurrence)
        if name is not None and not pattern.match(name):
            allowed = "letters, digits, -, _" + (" and +" if pattern is _POOL else "")
            self.fail(f"{table}.{key}: {what} name {_shown(name)} must be a slug ({allowed}, starting with a letter "
                      "or a digit, at most 100 characters)", table, key, occurrence)
        return name

    # -- tables
    def spec(self) -> CampaignSpec:
        top = set(self.doc) - {"version", "campaign", "kg", "systems", "sample", "pool", "filters", "templates",
                               "guidelines", "sources", "judging", "members", "evaluation"}
        if top:
            key = sorted(top)[0]
            self.fail(f"unknown table or setting {key!r}", None, key)
        version = self.value(self.doc, "version", int, "file", VERSION)
        if version != VERSION:
            self.fail(f"campaign file version {version}; this kgpool reads version {VERSION}", None, "version")
        campaign = self.table("campaign", required=True)
        self.known(campaign, "campaign", ("name", "description"))
        systems = self._systems()
        names = {s.name for s in systems}
        pool = self._pool(names)
        evaluation = self._evaluation(names)
        sources = self.table("sources") or {}
        self.known(sources, "sources", ("allowed_domains",))
        domains = self.value(sources, "allowed_domains", list, "sources")
        if domains is not None and not all(isinstance(d, str) and d.strip() for d in domains):
            self.fail("sources.allowed_domains must be a list of domain names", "sources", "allowed_domains")
        if domains is not None and (refusal := domains_refusal(domains)):  # as the campaign would refuse them
            self.fail(f"sources.allowed_domains: {refusal}", "sources", "allowed_domains")
        return CampaignSpec(
            name=self.slug(campaign, "name", "campaign", "campaign", required=True),
            description=self.value(campaign, "description", str, "campaign", ""),
            kg=self._kg(), systems=systems, sample=self._sample(), pool=pool, filters=self._filters(),
            templates=self._templates(), guidelines=self._guidelines(), allowed_domains=tuple(domains) if domains is not None else None,
            judging=self._judging(), members=self._members(), evaluation=evaluation,
        )

    def _kg(self) -> KGSpec:
        kg = self.table("kg", required=True)
        self.known(kg, "kg", ("name", "path", "description", *KG_FILES))
        return KGSpec(name=self.slug(kg, "name", "kg", "knowledge graph", required=True), path=self.file(kg, "path", "kg"),
                      description=self.value(kg, "description", str, "kg", ""),
                      files={key: self.file(kg, key, "kg") for key in KG_FILES if key in kg})

    def _systems(self) -> tuple[SystemSpec, ...]:
        rows = self.doc.get("systems", [])
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            self.fail("systems must be an array of tables ([[systems]])", None, "systems")
        result, seen = [], set()
        for n, row in enumerate(rows):
            self.known(row, "systems", ("name", *SYSTEM_KINDS, "format", "model", "options", "entities", "questions",
                                        "k", "description"), n)
            kinds = [kind for kind in SYSTEM_KINDS if kind in row]
            if len(kinds) != 1:
                self.fail("each [[systems]] needs exactly one of train, checkpoint, scores, run", "systems", None, n)
            kind = kinds[0]
            train: dict[str, Any] = {}
            path = None
            if kind == "train":
                train = self.value(row, "train", dict, "systems", occurrence=n)
                self.known(train, "systems", tuple(TRAIN_OPTIONS), n)
                for key, value_type in TRAIN_OPTIONS.items():
                    low = None if value_type in (str, dict) else (0 if key in ("seed", "patience") else 1)
                    low = 0.0 if key == "lr" else low
                    self.value(train, key, value_type, "systems.train", required=key == "architecture",
                               low=low, high=INT32_MAX if value_type is int else None, occurrence=n)
                if train["architecture"].lower() not in ARCHITECTURE_NAMES:  # the plan named no file before
                    self.fail(f"systems.train.architecture must be one of {', '.join(ARCHITECTURE_NAMES)}, got "
                              f"{_shown(train['architecture'])}", "systems.train", "architecture", n)
                extra = set(row) - {"name", "train", "description"}
                if extra:
                    self.fail(f"a trained system takes no {sorted(extra)[0]!r}", "systems", sorted(extra)[0], n)
            else:
                path = self.file(row, kind, "systems", n)
            name = self.slug(row, "name", "systems", "system", occurrence=n) or train.get("architecture", "").lower()
            if not name or not _SLUG.match(name):
                self.fail("each [[systems]] needs a name", "systems", None, n)
            if name in seen:
                self.fail(f"system {name!r} is declared twice", "systems", "name", n)
            seen.add(name)
            options: dict[str, Any] = {}
            for key in ("format", "model", "description"):
                if key in row:
                    options[key] = self.value(row, key, str, "systems", occurrence=n)
            if "options" in row:
                options["options"] = self.value(row, "options", dict, "systems", occurrence=n)
            for key in ("entities", "questions"):
                if key in row:
                    options[key] = self.file(row, key, "systems", n)
            if "k" in row:
                options["k"] = self.value(row, "k", int, "systems", low=1, high=INT32_MAX, occurrence=n)
            wrong = {"checkpoint": {"entities", "questions", "k"}, "scores": {"format", "model", "options"},
                     "run": {"format", "model", "options", "entities", "k"}}.get(kind, set()) & set(options)
            if wrong:
                self.fail(f"a {kind} system takes no {sorted(wrong)[0]!r}", "systems", sorted(wrong)[0], n)
            result.append(SystemSpec(name=name, kind=kind, train=dict(train), path=path, options=options))
        return tuple(result)

    def _sample(self) -> SampleSpec:
        sample = self.table("sample", required=True)
        self.known(sample, "sample", ("name", "size", "seed", "stratified", "file"))
        file = self.file(sample, "file", "sample")
        size = self.value(sample, "size", int, "sample", low=1, high=INT32_MAX)
        if (file is None) == (size is None):
            self.fail("[sample] needs a size (drawn with its seed) or a file, not both", "sample")
        if file is not None and ({"seed", "stratified"} & set(sample)):
            self.fail("a sample read from a file takes no seed or stratified", "sample", "file")
        return SampleSpec(name=self.slug(sample, "name", "sample", "sample"), size=size,
                          seed=self.value(sample, "seed", int, "sample", 0, low=0, high=INT32_MAX),
                          stratified=self.value(sample, "stratified", bool, "sample", False), file=file)

    def _pool(self, names: set[str]) -> PoolSpec:
        pool = self.table("pool", required=True)
        self.known(pool, "pool", ("depth", "systems", "name", "chunk_size"))
        systems = self.names(pool, "systems", "pool")
        for name in systems or ():
            if name not in names:
                self.fail(f"pool.systems names {name!r}, which no [[systems]] declares", "pool", "systems")
        if systems is None and not names:
            self.fail("a pool needs systems: declare them with [[systems]]", "pool")
        return PoolSpec(depth=self.value(pool, "depth", int, "pool", required=True, low=1, high=INT32_MAX),
                        systems=systems, name=self.slug(pool, "name", "pool", "pool", pattern=_POOL),
                        chunk_size=self.value(pool, "chunk_size", int, "pool", low=1, high=INT32_MAX))

    def _filters(self) -> FilterSpec | None:
        filters = self.table("filters")
        if filters is None:
            return None
        self.known(filters, "filters", ("rules", "threshold", "type_source", "type_min_support", "type_max_overlap"))
        rules = self.value(filters, "rules", list, "filters", list(RULES))
        for rule in rules:
            if rule not in RULES:
                self.fail(f"filters.rules: unknown rule {_shown(rule)}; rules: {', '.join(RULES)}", "filters", "rules")
        return FilterSpec(rules=tuple(r for r in RULES if r in rules),
                          threshold=self.value(filters, "threshold", float, "filters", 1.5, low=1.0),
                          type_source=self.value(filters, "type_source", str, "filters", "dataset", choices=TYPE_SOURCES),
                          type_min_support=self.value(filters, "type_min_support", int, "filters", 2, low=1,
                                                      high=INT32_MAX),
                          type_max_overlap=self.value(filters, "type_max_overlap", float, "filters", 0.0, low=0.0,
                                                      high=0.999999))

    def _templates(self) -> dict[str, str]:
        templates = self.table("templates") or {}
        for key, text in templates.items():
            if not isinstance(text, str):
                self.fail(f"templates.{key} must be a string such as \"Is {{head}} ... {{tail}}?\"", "templates", key)
        return dict(templates)

    def _guidelines(self) -> dict[str, str]:
        guidelines = self.table("guidelines") or {}
        for key, text in guidelines.items():
            if not isinstance(text, str):
                self.fail(f"guidelines.{key} must be a string (Markdown)", "guidelines", key)
            if len(text) > MAX_GUIDELINES_CHARS:
                self.fail(f"guidelines.{key} has {len(text)} characters; at most {MAX_GUIDELINES_CHARS}", "guidelines",
                          key)
        return dict(guidelines)

    def _judging(self) -> JudgingSpec:
        judging = self.table("judging") or {}
        self.known(judging, "judging", tuple(f.name for f in fields(JudgingSpec)))
        defaults = JudgingSpec()
        return JudgingSpec(
            order=self.value(judging, "order", str, "judging", defaults.order, choices=ORDERS),
            budget=self.value(judging, "budget", int, "judging", None, low=0, high=INT32_MAX),
            assignment_timeout_s=self.value(judging, "assignment_timeout_s", int, "judging",
                                            defaults.assignment_timeout_s, low=1, high=INT32_MAX),
            gold_rate=self.value(judging, "gold_rate", float, "judging", defaults.gold_rate, low=0.0, high=0.99),
            gold_seed=self.value(judging, "gold_seed", int, "judging", 0, low=0, high=INT32_MAX),
            rushed_factor=self.value(judging, "rushed_factor", float, "judging", defaults.rushed_factor, low=0.0),
            gold_threshold=self.value(judging, "gold_threshold", float, "judging", defaults.gold_threshold, low=0.0,
                                      high=1.0),
            evidence_policy=self.value(judging, "evidence_policy", str, "judging", defaults.evidence_policy,
                                       choices=tuple(EVIDENCE_POLICIES)),
            seed=self.value(judging, "seed", int, "judging", 0, low=0, high=INT32_MAX),
            reuse=self.value(judging, "reuse", bool, "judging", True),
        )

    def _members(self) -> dict[str, tuple[str, ...]]:
        members = self.table("members") or {}
        self.known(members, "members", ROLES)
        result = {}
        for role in ROLES:
            if role in members:
                users = self.value(members, role, list, "members")
                for user in users:
                    if not isinstance(user, str) or not re.fullmatch(r"[\w.@+-]{1,150}", user):
                        self.fail(f"members.{role}: {_shown(user)} is not a username", "members", role)
                result[role] = tuple(dict.fromkeys(users))
        return result

    def _evaluation(self, names: set[str]) -> EvaluationSpec | None:
        evaluation = self.table("evaluation")
        if evaluation is None:
            return None
        self.known(evaluation, "evaluation", tuple(f.name for f in fields(EvaluationSpec)))
        depths = self.value(evaluation, "depths", list, "evaluation")
        if depths is not None and not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= INT32_MAX
                                          for d in depths):
            self.fail("evaluation.depths must be a list of integers >= 0", "evaluation", "depths")
        systems = self.names(evaluation, "systems", "evaluation")
        return EvaluationSpec(
            when=self.value(evaluation, "when", str, "evaluation", "done", choices=("done", "never")),
            systems=systems, policy=self.value(evaluation, "policy", str, "evaluation", "realistic", choices=POLICIES),
            cutoff=self.value(evaluation, "cutoff", int, "evaluation", 10, low=1, high=INT32_MAX),
            depths=tuple(depths) if depths is not None else None,
            analyses=self.value(evaluation, "analyses", bool, "evaluation", True),
            open_world=self.value(evaluation, "open_world", bool, "evaluation", True),
            dp_test=self.value(evaluation, "dp_test", str, "evaluation", "t", choices=("t", "bootstrap")),
            device=self.value(evaluation, "device", str, "evaluation", None),
            protocols=self._choice_list(evaluation, "protocols", PROTOCOL_CHOICES, ()),
            negatives=self._choice_list(evaluation, "negatives", NEGATIVE_CHOICES, ("corrupted-typed",)),
            negatives_dir=self.value(evaluation, "negatives_dir", str, "evaluation", None),
            negatives_seed=self.value(evaluation, "negatives_seed", int, "evaluation", 0, low=0, high=INT32_MAX),
            pair_k=self.value(evaluation, "pair_k", int, "evaluation", 100, low=1, high=100_000),
        )

    def _choice_list(self, evaluation: dict, key: str, choices: tuple[str, ...],
                     default: tuple[str, ...]) -> tuple[str, ...]:
        values = self.value(evaluation, key, list, "evaluation")
        if values is None:
            return default
        bad = [v for v in values if v not in choices]
        if bad:
            self.fail(f"evaluation.{key}: {_shown(bad[0])} is not one of {', '.join(choices)}", "evaluation", key)
        return tuple(dict.fromkeys(values))


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------------------------------- writing
def spec_to_toml(spec: CampaignSpec, *, base: Path | None = None, header: str = "") -> str:
    """The campaign file of ``spec``: every table, defaults written out so the file says what applies. Paths are
    relative to ``base`` (the folder the file goes to) when they lie under it, else absolute."""
    def path(value: str | None) -> str | None:
        if value is None or base is None:
            return value
        try:
            return Path(value).resolve().relative_to(base.resolve()).as_posix() or "."
        except ValueError:
            return value

    doc: dict[str, Any] = {"version": spec.version,
                           "campaign": {"name": spec.name, "description": spec.description}}
    doc["kg"] = _without_none({"name": spec.kg.name, "path": path(spec.kg.path), "description": spec.kg.description,
                               **{k: path(v) for k, v in sorted(spec.kg.files.items())}})
    systems = []
    for system in spec.systems:
        row: dict[str, Any] = {"name": system.name}
        if system.kind == "train":
            row["train"] = dict(system.train)
        else:
            row[system.kind] = path(system.path)
            for key, value in system.options.items():
                row[key] = path(value) if key in ("entities", "questions") else value
        systems.append(row)
    doc["systems"] = systems
    sample = spec.sample
    doc["sample"] = (_without_none({"name": sample.name, "file": path(sample.file)}) if sample.file else
                     _without_none({"name": sample.name, "size": sample.size, "seed": sample.seed,
                                    "stratified": sample.stratified}))
    doc["pool"] = _without_none({"depth": spec.pool.depth, "systems": list(spec.pool_systems()), "name": spec.pool.name,
                                 "chunk_size": spec.pool.chunk_size})
    if spec.filters is not None:
        doc["filters"] = {**asdict(spec.filters), "rules": list(spec.filters.rules)}
    if spec.templates:
        doc["templates"] = dict(sorted(spec.templates.items()))
    if spec.guidelines:
        doc["guidelines"] = dict(sorted(spec.guidelines.items(), key=lambda kv: (kv[0] != CAMPAIGN_KEY, kv[0])))
    if spec.allowed_domains is not None:
        doc["sources"] = {"allowed_domains": list(spec.allowed_domains)}
    doc["judging"] = _without_none(asdict(spec.judging))
    doc["members"] = {role: list(spec.members[role]) for role in ROLES if role in spec.members}
    if spec.evaluation is not None:
        evaluation = _without_none(asdict(spec.evaluation))
        for key in ("systems", "depths", "protocols", "negatives"):
            if key in evaluation:
                evaluation[key] = list(evaluation[key])
        doc["evaluation"] = evaluation
    return (header + "\n" if header else "") + dumps(doc)


def _without_none(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _string(key)


def _string(text: str) -> str:
    escaped = []
    for char in text:
        if char in '"\\':
            escaped.append("\\" + char)
        elif char in "\b\t\n\f\r":
            escaped.append({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            escaped.append(f"\\u{ord(char):04x}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} cannot be written in a campaign file")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_scalar(v)}" for k, v in value.items()) + " }" if value else "{}"
    raise TypeError(f"cannot write {type(value).__name__} in a campaign file")


def dumps(document: dict[str, Any]) -> str:
    """A TOML document of ``document``: top-level scalars, then ``[tables]`` (values may be inline tables) and
    ``[[arrays of tables]]`` (a top-level list of dicts)."""
    lines = [f"{_key(k)} = {_scalar(v)}" for k, v in document.items() if not isinstance(v, dict | list)
             or (isinstance(v, list) and not any(isinstance(x, dict) for x in v))]
    for key, value in document.items():
        if isinstance(value, dict):
            lines += ["", f"[{_key(key)}]"] + [f"{_key(k)} = {_scalar(v)}" for k, v in value.items()]
        elif isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            for row in value:
                lines += ["", f"[[{_key(key)}]]"] + [f"{_key(k)} = {_scalar(v)}" for k, v in row.items()]
    return "\n".join(lines) + "\n"
