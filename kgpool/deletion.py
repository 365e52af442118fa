"""Reads: what stops objects from being deleted, and what a delete would take along, without walking every row.

Django's delete collector, and the admin's "are you sure?" page built on it, load every row a delete would
cascade to before they meet a PROTECTed one, and the page then renders a link per row: the delete page of a
pool of tens of thousands of entries ran past the server's timeout. Here the model graph is walked once per
model (CASCADE edges down to PROTECT / RESTRICT edges) into lookup paths, and each protected or cascaded model is
asked with one COUNT query.
"""
from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache, reduce

from django.db.models import CASCADE, PROTECT, RESTRICT, Model, Q
from django.db.models.deletion import get_candidate_relations_to_delete

MAX_DEPTH = 8


@dataclass(frozen=True)
class ProtectedPath:
    model: type[Model]  # the protected rows' model (e.g. Judgment)
    lookup: str  # from that model to the deleted one, e.g. "item__campaign__pool"
    restrict: bool  # RESTRICT (allowed when the rows go too, through a cascade) rather than PROTECT


@lru_cache(maxsize=None)
def protected_paths(model: type[Model]) -> tuple[ProtectedPath, ...]:
    """Every way a delete of ``model`` rows can run into PROTECT / RESTRICT, through CASCADE edges."""
    paths: list[ProtectedPath] = []

    def walk(current: type[Model], suffix: str, chain: tuple[type[Model], ...]) -> None:
        for relation in get_candidate_relations_to_delete(current._meta):
            on_delete = relation.on_delete
            related = relation.related_model
            lookup = relation.field.name + (f"__{suffix}" if suffix else "")
            if on_delete in (PROTECT, RESTRICT):
                paths.append(ProtectedPath(related, lookup, on_delete is RESTRICT))
            elif on_delete is CASCADE and related not in chain and len(chain) < MAX_DEPTH:
                walk(related, lookup, (*chain, related))

    walk(model, "", (model,))
    return tuple(paths)


@lru_cache(maxsize=None)
def cascade_paths(model: type[Model]) -> dict[type[Model], tuple[str, ...]]:
    """Each model a delete of ``model`` rows cascades to -> the lookups from it to ``model``."""
    paths: dict[type[Model], list[str]] = {}

    def walk(current: type[Model], suffix: str, chain: tuple[type[Model], ...]) -> None:
        for relation in get_candidate_relations_to_delete(current._meta):
            related = relation.related_model
            if relation.on_delete is not CASCADE or related in chain or len(chain) >= MAX_DEPTH:
                continue
            lookup = relation.field.name + (f"__{suffix}" if suffix else "")
            paths.setdefault(related, []).append(lookup)
            walk(related, lookup, (*chain, related))

    walk(model, "", (model,))
    return {related: tuple(lookups) for related, lookups in paths.items()}


def cascade_closure(model: type[Model]) -> frozenset[type[Model]]:
    """The models a delete of ``model`` rows cascades to."""
    return frozenset(cascade_paths(model))


@dataclass(frozen=True)
class Blocker:
    model: type[Model]
    count: int
    via: str  # the lookup path, for the message

    def __str__(self) -> str:
        name = self.model._meta.verbose_name if self.count == 1 else self.model._meta.verbose_name_plural
        return f"{self.count:,} {name} (through {self.via.replace('__', ' > ')})"


def find_blockers(objs: Sequence[Model]) -> list[Blocker]:
    """The protected rows under ``objs`` (one model), one count query per path; empty when none.

    A RESTRICT path counts only when the delete cannot take the restricted rows along (its cascade never
    reaches their model); otherwise Django's collector decides, row by row, at delete time."""
    if not objs:
        return []
    model = type(objs[0])
    pks = [obj.pk for obj in objs]
    closure = cascade_closure(model)
    found = []
    for path in protected_paths(model):
        if path.restrict and path.model in closure:
            continue
        count = path.model._base_manager.filter(**{f"{path.lookup}__in": pks}).count()
        if count:
            found.append(Blocker(path.model, count, path.lookup))
    return found


@dataclass
class DeletePlan:
    blockers: list[str]  # readable reasons the delete is refused (empty: it may go ahead)
    counts: Counter  # model -> rows the delete removes (objs included)


def plan_delete(objs: Sequence[Model]) -> DeletePlan:
    """What deleting ``objs`` (one model) would do: refused (and why), or how many rows of each model go, one
    COUNT query per model reached (Django's collector, which the delete itself runs, loads every row)."""
    blockers = find_blockers(objs)
    if blockers or not objs:
        return DeletePlan([str(b) for b in blockers], Counter())
    model = type(objs[0])
    pks = [obj.pk for obj in objs]
    counts: Counter = Counter({model: len(objs)})
    for related, lookups in cascade_paths(model).items():
        reached = reduce(operator.or_, (Q(**{f"{lookup}__in": pks}) for lookup in lookups))
        count = related._base_manager.filter(reached).count()
        if count:
            counts[related] = count
    return DeletePlan([], counts)
