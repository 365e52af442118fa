"""Writes: applying a campaign file (``annotation.lib.campaign_file``) -- the KG, systems, sample, pool, campaign,
templates, filters, members, settings, gold checks and the declared evaluation, each through its own service.

Applying is idempotent and incremental: every step compares what the file declares with what exists and does
only the difference, so a second apply of the same file changes nothing, and a changed file changes only what
changed. :func:`plan_campaign` computes the same steps without writing (``campaign apply --plan``); apply first
plans and refuses, with nothing written, when a step cannot be done: a campaign on another KG or sample, a pool
that would shrink (judged candidates would be lost), a system of that name with other settings. A deeper pool
(or one with more systems) grows in place: the campaign keeps its items and judgments, the new candidates become
items, labels of earlier campaigns are reused and the filters run on them (``pooling.services.pool_growth``).

Steps that take long (training, pool builds) run in this process in the embedded mode and on the Celery workers
otherwise (this waits for them, polling). Each step commits on its own: an apply stopped half-way is finished by
applying the file again.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from celery import signature
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from annotation.lib.campaign_file import CampaignSpec, SystemSpec, spec_from_dict
from annotation.lib.sources import normalise_domain
from annotation.models import Campaign, CampaignFile, Item, Membership, QuestionTemplate, default_allowed_domains
from annotation.services.campaign_checks import pool_impossible, sample_impossible
from annotation.services.campaign_evaluation import (
    CampaignApplyError, declared_options, declared_run, judging_left, start_declared_evaluation,
)
from pooling import task_names
from pooling.models import KnowledgeGraph, Pool, Sample, System

ProgressFn = Callable[[str, int, int], None]
LogFn = Callable[[str], None]
SHORTFALL = "_gold_shortfall"  # kept in CampaignFile.spec: [Y wanted, N wanted, Y found, N found]


@dataclass(frozen=True)
class Action:
    kind: str  # create | change | keep | wait | refuse
    subject: str
    detail: str = ""

    SYMBOLS = {"create": "+", "change": "~", "keep": "=", "wait": ".", "refuse": "!"}

    def line(self) -> str:
        return f"{self.SYMBOLS[self.kind]} {self.subject}" + (f": {self.detail}" if self.detail else "")


@dataclass
class Plan:
    actions: list[Action] = field(default_factory=list)

    @property
    def changes(self) -> list[Action]:
        return [a for a in self.actions if a.kind in ("create", "change")]

    @property
    def refusals(self) -> list[Action]:
        return [a for a in self.actions if a.kind == "refuse"]

    def lines(self) -> list[str]:
        return [a.line() for a in self.actions]


def _quiet(*_args: Any) -> None:
    pass


def plan_campaign(spec: CampaignSpec) -> Plan:
    """What applying ``spec`` would do, step by step; writes nothing."""
    return _Steps(spec, dry_run=True).run()


def apply_campaign(spec: CampaignSpec, *, path: str = "", progress: ProgressFn = _quiet, log: LogFn = _quiet,
                   device: str | None = None, timeout: float | None = None) -> Plan:
    """Apply ``spec`` (see the module doc); returns what was done. CampaignApplyError, nothing written, when the
    plan refuses a step."""
    planned = plan_campaign(spec)
    if planned.refusals:
        first = planned.refusals[0]
        more = f" (and {len(planned.refusals) - 1} more)" if len(planned.refusals) > 1 else ""
        raise CampaignApplyError(f"{first.subject}: {first.detail}{more}; nothing was applied")
    return _Steps(spec, dry_run=False, path=path, progress=progress, log=log, device=device, timeout=timeout).run()


def embedded() -> bool:
    return bool(getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False))


class _Steps:
    def __init__(self, spec: CampaignSpec, *, dry_run: bool, path: str = "", progress: ProgressFn = _quiet,
                 log: LogFn = _quiet, device: str | None = None, timeout: float | None = None):
        self.spec, self.dry_run, self.path = spec, dry_run, path
        self.progress, self.log, self.device, self.timeout = progress, log, device, timeout
        self.plan = Plan()
        self.systems: dict[str, System | None] = {}

    def note(self, kind: str, subject: str, detail: str = "") -> None:
        action = Action(kind, subject, detail)
        self.plan.actions.append(action)
        if not self.dry_run and kind != "keep":
            self.log(action.line())

    def run(self) -> Plan:
        kg = self.kg()
        for system in self.spec.systems:
            if system.kind in ("train", "checkpoint"):
                self.systems[system.name] = self.model_system(kg, system)
        sample = self.sample(kg)
        for system in self.spec.systems:
            if system.kind in ("scores", "run"):
                self.systems[system.name] = self.imported_system(kg, sample, system)
        campaign = Campaign.objects.select_related("pool__sample__kg").filter(name=self.spec.name).first()
        if campaign is not None and not self.same_home(campaign, kg, sample):
            return self.plan
        pool = self.pool(sample, campaign)
        campaign = self.campaign(pool, campaign)
        self.templates(kg, campaign)
        self.guidelines(kg, campaign)
        self.filters(campaign)
        self.members(campaign)
        self.settings(campaign)
        self.gold(campaign)
        self.record(campaign)
        self.evaluation(campaign, kg)
        return self.plan

    # ------------------------------------------------------------------------------------------------ KG
    def kg(self) -> KnowledgeGraph | None:
        spec = self.spec.kg
        kg = KnowledgeGraph.objects.filter(name=spec.name).first()
        subject = f"knowledge graph {spec.name}"
        if kg is not None:
            self.note("keep", subject, f"{kg.num_entities} entities, {kg.num_relations} relations")
            return kg
        if spec.path is None:
            self.note("refuse", subject, "it does not exist here and [kg] gives no path to import it from")
            return None
        if not Path(spec.path).is_dir():
            self.note("refuse", subject, f"{spec.path} is not a folder (train.txt, valid.txt, test.txt)")
            return None
        self.note("create", subject, f"import {spec.path}")
        if self.dry_run:
            return None
        from pooling.engine.kgfiles import KGFormatError, MetadataFiles
        from pooling.services.kg_import import KGImportError, import_kg

        try:
            return import_kg(spec.name, spec.path, files=MetadataFiles(**{k: Path(v) for k, v in spec.files.items()}),
                             description=spec.description, progress=self.progress)
        except (KGFormatError, KGImportError) as exc:
            raise CampaignApplyError(str(exc)) from None

    # ------------------------------------------------------------------------------------------- systems
    def model_system(self, kg: KnowledgeGraph | None, spec: SystemSpec) -> System | None:
        existing = System.objects.filter(kg=kg, name=spec.name).first() if kg is not None else None
        subject = f"system {spec.name}"
        if spec.kind == "checkpoint":
            if existing is not None:
                problem = _other_source(existing, spec.path)
                if problem:  # kept silently before, and `campaign export` then wrote the new path as the source
                    self.note("refuse", subject, f"{problem}; the file asks to import {spec.path}: give it another "
                                                 "name")
                else:
                    self.note("keep", subject, f"imported checkpoint, {existing.status}")
                return existing
            self.note("create", subject, f"import the {spec.options.get('format', 'pykeen')} checkpoint {spec.path}")
            if self.dry_run:
                return None
            from pooling.services.checkpoint_import import import_checkpoint
            from pooling.services.rankings import RunImportError

            try:
                return import_checkpoint(kg, spec.path, fmt=spec.options.get("format", "pykeen"), name=spec.name,
                                         model=spec.options.get("model"), options=spec.options.get("options"),
                                         description=spec.options.get("description", ""), device=self.device)
            except RunImportError as exc:
                raise CampaignApplyError(str(exc)) from None
        config = self.training_config(spec)
        if config is None:
            return None
        if existing is not None:
            if existing.origin != System.Origin.TRAINED or existing.config.get("imported"):
                self.note("refuse", subject, "a system of that name was imported; give the trained one another name")
                return None
            differs = sorted(k for k, v in config.items() if existing.config.get(k) != v)
            if existing.status == System.Status.READY:
                if differs:
                    self.note("refuse", subject, f"exists with other settings ({', '.join(differs)}); a trained "
                                                 "system is never retrained in place: give it another name")
                else:
                    self.note("keep", subject, f"trained, valid MRR {_f(existing.valid_mrr)}")
                return existing
        action = "create" if existing is None else "change"
        architecture = spec.train["architecture"]
        detail = f"train {architecture} " + ", ".join(f"{k}={v}" for k, v in sorted(spec.train.items())
                                                       if k != "architecture")
        if existing is not None:
            detail = f"{existing.status}: " + detail
        self.note(action, subject, detail)
        if self.dry_run:
            return existing
        return self.train(kg, spec, config)

    def training_config(self, spec: SystemSpec) -> dict[str, Any] | None:
        from pooling.services.systems import SystemServiceError, training_config

        options = {k: v for k, v in spec.train.items() if k not in ("architecture", "hyperparameters")}
        try:
            return training_config(spec.train["architecture"], hyperparameters=spec.train.get("hyperparameters"),
                                   **options)
        except SystemServiceError as exc:
            self.note("refuse", f"system {spec.name}", str(exc))
            return None

    def train(self, kg: KnowledgeGraph, spec: SystemSpec, config: dict[str, Any]) -> System:
        from pooling.services.systems import SystemServiceError, prepare_training, train_system
        from pooling.services.trainers import TrainingBusyError

        try:
            system, note = prepare_training(kg, spec.train["architecture"], name=spec.name, config=config,
                                            queued=not embedded())
        except SystemServiceError as exc:
            raise CampaignApplyError(str(exc)) from None
        if note:
            self.log(f"  {note}")
        if embedded():
            try:
                return train_system(system, progress=self.progress)
            except TrainingBusyError as exc:
                raise CampaignApplyError(str(exc)) from None
        system_id = system.pk
        transaction.on_commit(lambda: signature(task_names.TRAIN_SYSTEM, args=(system_id,)).delay())
        system = self.wait(lambda: System.objects.get(pk=system_id), lambda s: s.status in ("ready", "failed"),
                           f"training of {spec.name}")
        if system.status == System.Status.FAILED:
            raise CampaignApplyError(f"training {spec.name} failed: {system.error}")
        return system

    def imported_system(self, kg: KnowledgeGraph | None, sample: Sample | None, spec: SystemSpec) -> System | None:
        subject = f"system {spec.name}"
        existing = System.objects.filter(kg=kg, name=spec.name).first() if kg is not None else None
        if existing is not None:
            if existing.origin != System.Origin.IMPORTED:
                self.note("refuse", subject, f"a system of that name exists and was not imported from a {spec.kind}")
            elif sample is not None and not existing.rankings.filter(sample=sample).exists():
                self.note("refuse", subject, f"exists without a ranking on sample {sample.name}; give this import "
                                             "another name")
            else:
                self.note("keep", subject, f"imported {spec.kind}")
            return existing
        options = spec.options
        missing = [path for path in (spec.path, options.get("entities"), options.get("questions"))
                   if path and not Path(path).is_file()]
        if missing:  # refused by the plan (it was planned, then the apply failed)
            self.note("refuse", subject, f"no file {missing[0]}")
            return None
        self.note("create", subject, f"import the {'score matrix' if spec.kind == 'scores' else 'TREC run'} {spec.path}")
        if self.dry_run:
            return None
        from pooling.services.rankings import RunImportError, import_run, import_scores

        try:
            if spec.kind == "scores":
                return import_scores(sample, spec.path, name=spec.name, entity_index_path=options.get("entities"),
                                     questions_path=options.get("questions"), description=options.get("description", ""),
                                     k=options.get("k"))
            return import_run(sample, spec.path, name=spec.name, description=options.get("description", ""),
                              questions_path=options.get("questions"))
        except RunImportError as exc:
            raise CampaignApplyError(str(exc)) from None

    # -------------------------------------------------------------------------------------------- sample
    def sample(self, kg: KnowledgeGraph | None) -> Sample | None:
        spec = self.spec.sample
        name = spec.default_name()
        subject = f"sample {name}"
        existing = Sample.objects.filter(kg=kg, name=name).first() if kg is not None else None
        how = f"from {spec.file}" if spec.file else (f"{'stratified' if spec.stratified else 'uniform'}, "
                                                     f"{spec.size} test triples, seed {spec.seed}")
        if existing is not None:
            problem = self.sample_differs(kg, existing)
            if problem:
                self.note("refuse", subject, f"exists with {problem}; the file asks for {how}")
            else:
                self.note("keep", subject, f"{existing.size} test triples")
            return existing
        problem = sample_impossible(self.spec, kg)
        if problem:  # refused by the plan, before the KG is imported and the systems trained (not halfway)
            self.note("refuse", subject, problem)
            return None
        self.note("create", subject, how)
        if self.dry_run:
            return None
        from pooling.services.samples import SampleError, create_sample, draw_sample, read_sample_file

        try:
            if spec.file:
                return create_sample(kg, name=name, method=Sample.Method.FILE, seed=None,
                                     indices=read_sample_file(kg, Path(spec.file)), source=spec.file[:500])
            return draw_sample(kg, size=spec.size, seed=spec.seed, stratified=spec.stratified, name=name)
        except SampleError as exc:
            raise CampaignApplyError(str(exc)) from None

    def sample_differs(self, kg: KnowledgeGraph, sample: Sample) -> str:
        spec = self.spec.sample
        if spec.file:
            import numpy as np

            from pooling.selectors.pools import sample_test_indices
            from pooling.services.samples import SampleError, read_sample_file

            try:
                wanted = np.unique(read_sample_file(kg, Path(spec.file)))
            except SampleError as exc:
                return f"a file that cannot be read ({exc})"
            return "" if np.array_equal(sample_test_indices(sample), wanted) else "other test triples"
        method = Sample.Method.STRATIFIED if spec.stratified else Sample.Method.UNIFORM
        if (sample.method, sample.size, sample.seed) != (method, spec.size, spec.seed):
            return f"method {sample.method}, size {sample.size}, seed {sample.seed}"
        return ""

    # ---------------------------------------------------------------------------------------------- pool
    def same_home(self, campaign: Campaign, kg: KnowledgeGraph | None, sample: Sample | None) -> bool:
        home = campaign.pool.sample
        subject = f"campaign {campaign.name}"
        if kg is None or home.kg_id != kg.pk:
            self.note("refuse", subject, f"exists on knowledge graph {home.kg.name}, not {self.spec.kg.name}")
            return False
        if sample is None or home.pk != sample.pk:
            self.note("refuse", subject, f"judges sample {home.name}, not {self.spec.sample.default_name()}; a "
                                         "campaign's sample cannot change (declare a new campaign)")
            return False
        return True

    def pool(self, sample: Sample | None, campaign: Campaign | None) -> Pool | None:
        from pooling.services.pools import PoolError, create_pool, default_pool_name

        spec = self.spec.pool
        names = list(self.spec.pool_systems())
        systems = [self.systems.get(n) for n in names]
        pool = campaign.pool if campaign is not None else None
        if pool is None and sample is not None and all(systems):
            pool = Pool.objects.filter(sample=sample, name=spec.name or default_pool_name(spec.depth, systems)).first()
        default_name = f"depth{spec.depth}-" + "+".join(sorted(names))  # = pools.default_pool_name
        subject = f"pool {pool.name if pool else spec.name or default_name}"
        if pool is not None:
            from pooling.services.pool_growth import grow_pool, pool_change

            change = pool_change(pool, spec.depth, names)
            if change.shrinks:
                self.note("refuse", subject, f"{change.shrinks}; a pool only grows (deeper, more systems)")
                return pool
            if change.grows:
                self.note("change", subject, f"grow: {change.describe()}; judged items are kept, new candidates "
                                             "become items")
                if self.dry_run:
                    return pool
                try:
                    pool = grow_pool(pool, spec.depth, systems)
                except PoolError as exc:
                    raise CampaignApplyError(str(exc)) from None
                return self.build(pool)
            if pool.status != Pool.Status.DONE:
                self.note("change", subject, f"finish the build ({pool.status})")
                return pool if self.dry_run else self.build(pool)
            self.note("keep", subject, f"depth {pool.depth}, {len(names)} systems, {pool.entries.count()} entries")
            return pool
        problem = pool_impossible(self.spec, sample.kg if sample is not None else None)
        if problem:  # refused by the plan, not after the KG is imported and the systems trained
            self.note("refuse", subject, problem)
            return None
        self.note("create", subject, f"depth {spec.depth}, systems {', '.join(names)}")
        if self.dry_run:
            return None
        try:
            pool = create_pool(sample, systems, spec.depth, name=spec.name, chunk_size=spec.chunk_size)
        except PoolError as exc:
            raise CampaignApplyError(str(exc)) from None
        return self.build(pool)

    def build(self, pool: Pool) -> Pool:
        from pooling.services.pools import build_pool_now, start_pool_build

        if embedded():
            try:
                pool = build_pool_now(pool, device=self.device, progress=self.progress)
            except Exception as exc:  # the pool is marked failed with the message; done chunks are kept
                raise CampaignApplyError(f"building pool {pool.name} failed: {type(exc).__name__}: {exc}") from None
        else:
            with transaction.atomic():
                start_pool_build(pool)
            pool = self.wait(lambda: Pool.objects.get(pk=pool.pk), lambda p: p.status in ("done", "failed"),
                             f"pool {pool.name}", lambda p: (p.progress_done, max(p.progress_total, 1)))
        if pool.status != Pool.Status.DONE:
            raise CampaignApplyError(f"pool {pool.name} failed: {pool.error}")
        return pool

    def wait(self, fetch: Callable[[], Any], finished: Callable[[Any], bool], what: str,
             counts: Callable[[Any], tuple[int, int]] | None = None) -> Any:
        started = time.monotonic()
        while True:
            current = fetch()
            if counts is not None:
                self.progress(what, *counts(current))
            if finished(current):
                return current
            if self.timeout is not None and time.monotonic() - started > self.timeout:
                raise CampaignApplyError(f"{what} not finished after {self.timeout:.0f} s; apply the file again later")
            time.sleep(1.0)

    # ------------------------------------------------------------------------------------------ campaign
    def campaign(self, pool: Pool | None, campaign: Campaign | None) -> Campaign | None:
        judging = self.spec.judging
        subject = f"campaign {self.spec.name}"
        if campaign is not None:
            from pooling.models import PoolEntry

            missing = PoolEntry.objects.filter(pool=campaign.pool_id).exclude(items__campaign=campaign).count()
            if not missing:
                self.note("keep", subject, f"{Item.objects.filter(campaign=campaign, is_gold=False).count()} items")
                return campaign
            self.note("change", subject, f"{missing} new pool candidates become items")
            if not self.dry_run:
                from annotation.services.campaigns import add_pool_items

                add_pool_items(campaign, seed=judging.seed)
            return campaign
        self.note("create", subject, "one item per pool entry" + (", labels of earlier campaigns reused"
                                                                  if judging.reuse else ""))
        if self.dry_run:
            return None
        from annotation.services.campaigns import create_campaign

        return create_campaign(self.spec.name, pool, description=self.spec.description,
                               allowed_domains=list(self.spec.allowed_domains) if self.spec.allowed_domains is not None
                               else None, assignment_timeout_s=judging.assignment_timeout_s,
                               gold_rate=judging.gold_rate, rushed_factor=judging.rushed_factor,
                               evidence_policy=judging.evidence_policy, seed=judging.seed, reuse=judging.reuse)

    def templates(self, kg: KnowledgeGraph | None, campaign: Campaign | None) -> None:
        from annotation.lib.templates import TemplateError, check_template
        from pooling.models import Relation

        relations = {r.key: r for r in Relation.objects.filter(kg=kg)} if kg is not None else {}
        current = {}
        if campaign is not None:
            current = dict(QuestionTemplate.objects.filter(campaign=campaign).values_list("relation__key", "text"))
        for key, text in sorted(self.spec.templates.items()):
            subject = f"template {key}"
            try:
                text = check_template(text)
            except TemplateError as exc:
                self.note("refuse", subject, str(exc))
                continue
            if kg is not None and key not in relations:
                self.note("refuse", subject, f"{self.spec.kg.name} has no relation {key!r}")
                continue
            if current.get(key) == text:
                self.note("keep", subject, text)
                continue
            self.note("change" if key in current else "create", subject, text)
            if not self.dry_run:
                from annotation.services.templates import set_template

                set_template(relations[key], text, campaign=campaign)

    def guidelines(self, kg: KnowledgeGraph | None, campaign: Campaign | None) -> None:
        """``[guidelines]`` replaces the campaign's guidelines as a whole; a file without it keeps those written
        on the site. Keys that are no relation of the KG are refused, the others applied."""
        from annotation.lib.guidelines import CAMPAIGN_KEY
        from pooling.models import Relation

        if not self.spec.guidelines:
            return
        texts = {k: v for k, v in self.spec.guidelines.items() if k != CAMPAIGN_KEY}
        known = set(Relation.objects.filter(kg=kg, key__in=list(texts)).values_list("key", flat=True)) if kg else set(texts)
        for key in sorted(set(texts) - known):
            self.note("refuse", f"guidelines {key}", f"{self.spec.kg.name} has no relation {key!r}")
            del texts[key]
        text = self.spec.guidelines.get(CAMPAIGN_KEY, "")
        wanted = (text.strip(), {k: v.strip() for k, v in sorted(texts.items()) if v.strip()})
        if campaign is not None and (campaign.guidelines, campaign.relation_guidelines or {}) == wanted:
            self.note("keep", "guidelines", f"campaign-wide and {len(wanted[1])} relations")
            return
        self.note("create" if campaign is None or not campaign.guidelines and not campaign.relation_guidelines
                  else "change", "guidelines", f"campaign-wide and {len(wanted[1])} relations (annotators read them "
                                               "before judging)")
        if campaign is not None and not self.dry_run:
            from annotation.services.errors import AnnotationError
            from annotation.services.guidelines import set_guidelines

            try:
                set_guidelines(campaign, text, texts)
            except AnnotationError as exc:
                self.note("refuse", "guidelines", str(exc))

    def filters(self, campaign: Campaign | None) -> None:
        spec = self.spec.filters
        if spec is None:
            return
        subject = "filters " + ",".join(spec.rules)
        if campaign is None:
            self.note("create", subject, "label N the candidates they rule out")
            return
        from annotation.lib.type_rule import TypeOptions
        from annotation.selectors.filtering import filter_preview
        from annotation.services.filtering import apply_filter, revert_auto_labels

        applied = set()
        for rules in Item.objects.filter(campaign=campaign, status=Item.Status.AUTO_NEGATIVE).values_list(
                "rule", flat=True).distinct():
            applied |= set(filter(None, rules.split(",")))
        dropped = sorted(applied - set(spec.rules))
        if dropped:
            self.note("change", f"filters {','.join(dropped)}", "no longer in the file: taken off the automatic "
                                                                 "negatives (back to people unless another rule holds)")
            if not self.dry_run:
                revert_auto_labels(campaign, rules=dropped)
        options = TypeOptions(spec.type_min_support, spec.type_max_overlap, spec.type_source)
        fired = filter_preview(campaign.pool, spec.rules, threshold=spec.threshold, type_options=options).fired
        untouched = Item.objects.filter(campaign=campaign, is_gold=False, status=Item.Status.PENDING, num_active=0,
                                        num_judgments=0)
        pending_entries = set(untouched.values_list("entry_id", flat=True))
        new = sum(1 for entry in fired if entry in pending_entries)
        rules_of = dict(Item.objects.filter(campaign=campaign, status=Item.Status.AUTO_NEGATIVE, label_origin="rule")
                        .values_list("entry_id", "rule"))
        extend = sum(1 for entry, names in fired.items()
                     if entry in rules_of and not set(names) <= set(filter(None, rules_of[entry].split(","))))
        if not new and not extend:
            self.note("keep", subject, f"{len(rules_of)} automatic negatives")
            return
        self.note("change", subject, f"label N {new} untouched candidates" + (f", add a rule to {extend}" if extend
                                                                              else ""))
        if not self.dry_run:
            apply_filter(campaign, spec.rules, threshold=spec.threshold, type_options=options)

    def members(self, campaign: Campaign | None) -> None:
        User = get_user_model()
        existing = set()
        if campaign is not None:
            existing = set(Membership.objects.filter(campaign=campaign).values_list("user__username", "role"))
        for role, usernames in self.spec.members.items():
            for username in usernames:
                subject = f"member {username}"
                if (username, role) in existing:
                    self.note("keep", subject, role)
                    continue
                user = User.objects.filter(username=username).first()
                self.note("create", subject, role + ("" if user is not None else " (new account without a password: "
                                                                                 "set one with changepassword)"))
                if self.dry_run:
                    continue
                if user is None:
                    user = User.objects.create_user(username)  # no usable password until one is set
                from annotation.services.campaigns import add_member

                add_member(campaign, user, role)

    def settings(self, campaign: Campaign | None) -> None:
        judging = self.spec.judging
        wanted = {"description": self.spec.description, "assignment_timeout_s": judging.assignment_timeout_s,
                  "gold_rate": judging.gold_rate, "rushed_factor": judging.rushed_factor,
                  "gold_threshold": judging.gold_threshold, "evidence_policy": judging.evidence_policy}
        domains = [d for d in dict.fromkeys(normalise_domain(x) for x in (
            self.spec.allowed_domains if self.spec.allowed_domains is not None else default_allowed_domains())) if d]
        if campaign is None:
            if judging.order != "random" or judging.budget is not None:
                self.note("create", "judging order", f"{judging.order}, budget {judging.budget}")
            return
        for name, value in wanted.items():
            if getattr(campaign, name) != value:
                self.note("change", f"setting {name}", f"{getattr(campaign, name)!r} -> {value!r}")
        if list(campaign.allowed_domains) != domains:
            self.note("change", "sources", f"{', '.join(campaign.allowed_domains)} -> {', '.join(domains)}")
        order_changes = (campaign.judging_order, campaign.item_budget) != (judging.order, judging.budget)
        if order_changes:
            self.note("change", "judging order", f"{campaign.judging_order}, budget {campaign.item_budget} -> "
                                                 f"{judging.order}, budget {judging.budget}")
        if self.dry_run:
            return
        from annotation.services.campaigns import set_allowed_domains, update_settings
        from annotation.services.judging_order import set_judging_order

        update_settings(campaign, **wanted)
        if list(campaign.allowed_domains) != domains:
            set_allowed_domains(campaign, domains)
        if order_changes:
            set_judging_order(campaign, judging.order, budget=judging.budget)

    def gold(self, campaign: Campaign | None) -> None:
        """Gold checks at the declared rate of the items people judge (``services.gold``). When the KG cannot
        give as many as wanted, the shortfall is remembered with the file, so applying again does not retry."""
        rate = self.spec.judging.gold_rate
        if campaign is None:
            if rate > 0:
                self.note("create", "gold checks", f"{rate:.0%} of the items people judge")
            return
        from annotation.services.gold import add_gold_items, human_item_count

        target = int(math.floor(rate * human_item_count(campaign) + 0.5))
        yes, no = (target + 1) // 2, target - (target + 1) // 2
        gold = Item.objects.filter(campaign=campaign, is_gold=True)
        have = [gold.filter(gold_answer="Y").count(), gold.filter(gold_answer="N").count()]
        record = CampaignFile.objects.filter(campaign=campaign).first()
        known_shortfall = record is not None and record.spec.get(SHORTFALL) == [yes, no, *have]
        if have == [yes, no] or known_shortfall:
            self.shortfall = record.spec[SHORTFALL] if known_shortfall else None
            self.note("keep", "gold checks", f"{have[0]} Y, {have[1]} N")
            return
        self.note("change", "gold checks", f"{have[0]} Y, {have[1]} N -> {yes} Y, {no} N")
        if not self.dry_run:
            report = add_gold_items(campaign, seed=self.spec.judging.gold_seed)
            self.shortfall = [yes, no, report.yes, report.no] if report.shortfall else None

    shortfall: list[int] | None = None

    def record(self, campaign: Campaign | None) -> None:
        if campaign is None:
            self.note("create", "campaign file record", "kept with the campaign for `campaign export`")
            return
        current = CampaignFile.objects.filter(campaign=campaign).first()
        same = current is not None and current.spec and spec_from_dict(current.spec).canonical() == \
            self.spec.canonical()
        if same and (self.dry_run or self.shortfall == current.spec.get(SHORTFALL)):
            self.note("keep", "campaign file record")
            return
        self.note("change" if current else "create", "campaign file record", self.path or "applied file")
        if not self.dry_run:
            data = self.spec.to_dict()
            if self.shortfall:
                data[SHORTFALL] = self.shortfall
            CampaignFile.objects.update_or_create(campaign=campaign, defaults={
                "spec": data, "path": self.path[:1000], "applied_at": timezone.now()})

    def evaluation(self, campaign: Campaign | None, kg: KnowledgeGraph | None) -> None:
        """Start the declared evaluation when judging is done; until then mark the campaign, so that the write
        that decides its last item starts it (``campaign_evaluation.evaluate_if_done``)."""
        spec = self.spec.evaluation
        subject = "evaluation"
        unknown = self.unknown_systems((spec.systems or ()) if spec is not None else (), kg)
        if unknown:  # refused by the plan: the evaluation would fail when judging is done, or on `campaign evaluate`
            self.note("refuse", subject, f"evaluation.systems: no system {', '.join(map(repr, unknown))} in the file "
                                         f"or in {self.spec.kg.name}")
            return
        waits = spec is not None and spec.when == "done"
        if campaign is None:
            if spec is not None:
                self.note("wait", subject, "starts when judging is done" if waits else "declared")
            return
        run = declared_run(campaign)
        current = run is not None and run.options == declared_options(self.spec) and run.status != "failed"
        left = judging_left(campaign) if waits and not current else 0
        mark = waits and not current and left > 0
        if spec is None:
            if campaign.evaluate_when_done:
                self.note("change", subject, "no longer declared: not started when judging is done")
        elif current:
            self.note("keep", subject, f"run {run.pk}, {run.status}")
        elif not waits:
            self.note("keep", subject, "declared; start it with `campaign evaluate` or the API")
        elif left:
            self.note("wait", subject, f"starts when judging is done ({left} items left)")
        else:
            self.note("create", subject, "judging is done: start the evaluation")
        if self.dry_run:
            return
        if campaign.evaluate_when_done != mark:
            Campaign.objects.filter(pk=campaign.pk).update(evaluate_when_done=mark)
            campaign.evaluate_when_done = mark
        if waits and not current and not left:
            start_declared_evaluation(campaign, self.spec)

    def unknown_systems(self, names, kg: KnowledgeGraph | None) -> list[str]:
        """The names that are neither a system the file declares nor one of the KG's."""
        known = {system.name for system in self.spec.systems}
        if kg is not None:
            known |= set(System.objects.filter(kg=kg, name__in=list(names)).values_list("name", flat=True))
        return [name for name in names if name not in known]


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _other_source(system: System, path: str) -> str:
    """Why ``system`` is not the checkpoint ``path`` imported ('' when it is, or when its file was not recorded)."""
    imported = system.config.get("imported") if isinstance(system.config, dict) else None
    if not imported:
        return "a system of that name was trained here"
    recorded = imported.get("file") if isinstance(imported, dict) else None
    given = Path(path).resolve()
    if recorded and given not in (Path(recorded), Path(recorded).parent):  # a folder: the model file it holds
        return f"it was imported from {recorded}"
    return ""
