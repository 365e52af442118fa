"""Admin list pages of tables with millions of rows (entities, pool entries, items; issue 18): no COUNT(*) over
the whole table. The paginator counts at most ``CAP`` rows (a LIMITed subquery), so a page of a 5M-row table
costs one index range, not a scan. The list pages through the first ``CAP`` rows; search and the filters narrow
it down to the rest."""
from __future__ import annotations

from django.contrib import admin
from django.core.paginator import Paginator
from django.utils.functional import cached_property

CAP = 10_000


class CappedCountPaginator(Paginator):
    """``count`` is the number of rows up to ``CAP`` + 1 (one more than the cap means "more than CAP")."""

    @cached_property
    def count(self) -> int:
        return self.object_list[: CAP + 1].count()

    def page(self, number):
        """The page's primary keys first, from the table alone (an index walk that stops after the page), then
        its rows with their related rows: a planner with statistics otherwise started the joins from the small
        table (a campaign, a pool) and sorted every row of the big one for each page (SQLite: 0.5-2 s)."""
        number = self.validate_number(number)
        bottom = (number - 1) * self.per_page
        pks = list(self.object_list.values_list("pk", flat=True)[bottom:bottom + self.per_page])
        return self._get_page(self.object_list.filter(pk__in=pks), number, self)


class LargeTableAdmin:
    """Mixin of a ModelAdmin of a big table: a capped count, and no second count of the unfiltered table."""

    paginator = CappedCountPaginator
    show_full_result_count = False
    list_per_page = 50


def entity_search_pks(term: str) -> list[int]:
    """Primary keys of the entities whose key or name is exactly ``term`` (a number also matches a pk): index
    look-ups on (kg, key) and (kg, name), where a substring search would read every entity of every KG."""
    from pooling.models import Entity, KnowledgeGraph

    kgs = list(KnowledgeGraph.objects.values_list("pk", flat=True))  # leads the (kg, ...) indexes
    pks = set(Entity.objects.filter(kg__in=kgs, key=term).values_list("pk", flat=True)[:1000])
    pks |= set(Entity.objects.filter(kg__in=kgs, name=term).values_list("pk", flat=True)[:1000])
    if term.isdigit():
        pks |= set(Entity.objects.filter(pk=int(term)).values_list("pk", flat=True))
    return sorted(pks)


class EntitySearchAdmin(LargeTableAdmin):
    """Mixin: the search box finds rows by exact entity key or name (``entity_search_fields`` name the row's
    entity foreign keys) or by exact relation key (``relation_search_field``); several words: any of them."""

    entity_search_fields: tuple[str, ...] = ()
    relation_search_field = ""
    exact_search_fields: tuple[str, ...] = ()  # the row's own indexed columns matched whole (e.g. a question's qid)
    search_help_text = "Exact entity key or name, or relation key (several: separated by spaces; quotes keep a name whole)"

    def get_search_results(self, request, queryset, search_term):
        from django.db.models import Q
        from django.utils.text import smart_split, unescape_string_literal

        from pooling.models import Relation

        terms = [unescape_string_literal(t) if t[:1] in "\"'" and t[-1:] == t[:1] else t
                 for t in smart_split(search_term.strip())]
        if not terms:
            return queryset, False
        wanted = Q(pk__in=[])
        for term in terms:
            pks = entity_search_pks(term)
            for field in self.entity_search_fields:
                wanted |= Q(**{f"{field}__in": pks})
            if self.relation_search_field:
                relations = list(Relation.objects.filter(key=term).values_list("pk", flat=True)[:1000])
                wanted |= Q(**{f"{self.relation_search_field}__in": relations})
            for field in self.exact_search_fields:
                wanted |= Q(**{field: term})
        return queryset.filter(wanted), False


def related_filter(*related: str) -> type[admin.RelatedFieldListFilter]:
    """A list filter on a foreign key whose choices' names follow ``related`` (e.g. a pool's sample and KG):
    one query for all the choices instead of one per choice."""

    class Filter(admin.RelatedFieldListFilter):
        def field_choices(self, field, request, model_admin):
            rows = field.remote_field.model._default_manager.select_related(*related)
            ordering = self.field_admin_ordering(field, request, model_admin)
            return [(row.pk, str(row)) for row in (rows.order_by(*ordering) if ordering else rows)]

    return Filter
