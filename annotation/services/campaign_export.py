"""Reads: the campaign file of an existing campaign (``campaign export NAME``), built from the database.

What the database holds comes from there (KG, pool systems and their training settings, sample, pool, templates,
sources, members, order, budget and the other settings); what it does not hold (the KG's metadata files, filter
options, import options, seeds, the evaluation to run) comes from the file last applied to the campaign
(``CampaignFile``), and otherwise takes the defaults, or is left out. Applying the exported file to the same
instance changes nothing. Pools imported from files (``import_pool``) cannot be declared in a campaign file:
their systems are left out and the header says so.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from annotation.lib.campaign_file import (
    ROLES, CampaignSpec, FilterSpec, JudgingSpec, KGSpec, PoolSpec, SampleSpec, SystemSpec,
    spec_to_toml,
)
from annotation.lib.guidelines import CAMPAIGN_KEY
from annotation.models import Campaign, Item, Membership, QuestionTemplate
from annotation.services.campaign_evaluation import campaign_spec
from pooling.models import Pool, Sample, System

TRAIN_KEYS = ("epochs", "lr", "batch_size", "seed", "patience", "eval_every", "device", "num_threads")


def export_campaign_file(campaign: Campaign, *, base: Path | None = None) -> str:
    """The TOML campaign file of ``campaign`` (paths relative to ``base`` where they lie under it)."""
    spec, notes = campaign_to_spec(campaign)
    header = "# kgpool campaign file, exported from the database (`python manage.py campaign export`)"
    header += "".join(f"\n# note: {note}" for note in notes)
    return spec_to_toml(spec, base=base, header=header)


def campaign_to_spec(campaign: Campaign) -> tuple[CampaignSpec, list[str]]:
    """The spec of ``campaign`` and notes on what a file cannot say about it."""
    applied = campaign_spec(campaign)
    pool = campaign.pool
    sample = pool.sample
    kg = sample.kg
    notes: list[str] = []
    declared = {s.name: s for s in applied.systems} if applied is not None and applied.kg.name == kg.name else {}
    systems = []
    for system in pool.systems.order_by("name"):
        spec = declared.get(system.name) or _system_spec(system)
        if spec is None:
            notes.append(f"system {system.name} came with an imported pool and cannot be declared here")
            continue
        systems.append(spec)
    if pool.origin == Pool.Origin.IMPORTED:
        notes.append(f"pool {pool.name} was imported from {pool.source or 'a file'}: applying this file builds one")
    kg_files = applied.kg.files if applied is not None and applied.kg.name == kg.name else {}
    judging_defaults = applied.judging if applied is not None else JudgingSpec()
    spec = CampaignSpec(
        name=campaign.name, description=campaign.description,
        kg=KGSpec(name=kg.name, path=kg.source or None, description=kg.description, files=dict(kg_files)),
        systems=tuple(systems), sample=_sample_spec(sample),
        pool=PoolSpec(depth=pool.depth, systems=tuple(s.name for s in systems),
                      name=None if _default_name(pool) else pool.name,
                      chunk_size=None if pool.chunk_size == 256 else pool.chunk_size),
        filters=_filters(campaign, applied), templates=_templates(campaign),
        guidelines=_guidelines(campaign),
        allowed_domains=_domains(campaign, applied),
        judging=JudgingSpec(order=campaign.judging_order, budget=campaign.item_budget,
                            assignment_timeout_s=campaign.assignment_timeout_s, gold_rate=campaign.gold_rate,
                            gold_seed=judging_defaults.gold_seed, rushed_factor=campaign.rushed_factor,
                            gold_threshold=campaign.gold_threshold, evidence_policy=campaign.evidence_policy,
                            seed=judging_defaults.seed,
                            reuse=judging_defaults.reuse),
        members=_members(campaign), evaluation=applied.evaluation if applied is not None else None,
    )
    return spec, notes


def _system_spec(system: System) -> SystemSpec | None:
    config: dict[str, Any] = dict(system.config or {})
    if system.origin == System.Origin.TRAINED and config.get("imported"):
        provenance = config["imported"]
        path = provenance.get("path") if isinstance(provenance, dict) else None
        return SystemSpec(name=system.name, kind="checkpoint", path=path, options={"format": "pykeen"})
    if system.origin == System.Origin.TRAINED:
        train = {"architecture": system.architecture}
        train.update({k: config[k] for k in TRAIN_KEYS if config.get(k) is not None})
        if config.get("hyperparameters"):
            train["hyperparameters"] = dict(config["hyperparameters"])
        return SystemSpec(name=system.name, kind="train", train=train)
    for key, kind in (("scores_file", "scores"), ("run_file", "run")):
        if config.get(key):
            options = {name: config[field] for name, field in (("entities", "entity_index_file"),
                                                                ("questions", "questions_file")) if config.get(field)}
            return SystemSpec(name=system.name, kind=kind, path=config[key], options=options)
    return None


def _sample_spec(sample: Sample) -> SampleSpec:
    if sample.method == Sample.Method.FILE:
        return SampleSpec(name=sample.name, file=sample.source or None)
    spec = SampleSpec(size=sample.size, seed=sample.seed or 0, stratified=sample.method == Sample.Method.STRATIFIED)
    return spec if spec.default_name() == sample.name else SampleSpec(name=sample.name, size=spec.size,
                                                                      seed=spec.seed, stratified=spec.stratified)


def _default_name(pool: Pool) -> bool:
    from pooling.services.pools import default_pool_name

    return pool.name == default_pool_name(pool.depth, list(pool.systems.all()))


def _filters(campaign: Campaign, applied: CampaignSpec | None) -> FilterSpec | None:
    rules: set[str] = set()
    for text in Item.objects.filter(campaign=campaign, status=Item.Status.AUTO_NEGATIVE).values_list(
            "rule", flat=True).distinct():
        rules |= set(filter(None, text.split(",")))
    if applied is not None and applied.filters is not None:
        return applied.filters
    if not rules:
        return None
    from annotation.lib.rules import RULES

    return FilterSpec(rules=tuple(r for r in RULES if r in rules))


def _domains(campaign: Campaign, applied: CampaignSpec | None) -> tuple[str, ...] | None:
    """The campaign's verified domains; None (the defaults) when the applied file left them to the defaults."""
    from annotation.models import default_allowed_domains

    unset = applied is None or applied.allowed_domains is None
    return None if unset and list(campaign.allowed_domains) == default_allowed_domains() \
        else tuple(campaign.allowed_domains)


def _templates(campaign: Campaign) -> dict[str, str]:
    return dict(QuestionTemplate.objects.filter(campaign=campaign).order_by("relation__key")
                .values_list("relation__key", "text"))


def _guidelines(campaign: Campaign) -> dict[str, str]:
    texts = {CAMPAIGN_KEY: campaign.guidelines} if campaign.guidelines else {}
    return {**texts, **dict(sorted((campaign.relation_guidelines or {}).items()))}


def _members(campaign: Campaign) -> dict[str, tuple[str, ...]]:
    members: dict[str, list[str]] = defaultdict(list)
    for username, role in Membership.objects.filter(campaign=campaign).order_by("user__username").values_list(
            "user__username", "role"):
        members[role].append(username)
    return {role: tuple(members[role]) for role in ROLES if members.get(role)}

