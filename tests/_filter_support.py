"""A tiny KG with declared relation types on which both trivial-filter rules fire, for the filter tests."""
from __future__ import annotations

from pathlib import Path

from pooling.models import Pool, Relation
from tests._annotation_support import tiny_pool

# capital: country -> city, 1-1 in train; likes: person -> person, N-N.
TRAIN = [("fr", "capital", "paris"), ("de", "capital", "berlin"), ("it", "capital", "rome"),
         ("a", "likes", "b"), ("b", "likes", "c"), ("c", "likes", "a"), ("a", "likes", "c"), ("b", "likes", "a")]
TEST = [("es", "capital", "madrid"), ("a", "likes", "d")]
CARDINALITY_ONLY = ("es", "capital", "rome")  # a second answer to (es, capital, ?); rome is a city
BOTH = ("es", "capital", "a")  # a second answer, and a person is no city
TYPE_ONLY = ("a", "likes", "paris")  # (a, likes, ?) has many answers, but a city is no person
KEPT = ("a", "likes", "c2")  # c2 is unseen in train: no rule can tell
ENTRIES = [CARDINALITY_ONLY, BOTH, TYPE_ONLY, KEPT]


def typed_pool(folder: Path, name: str = "capitals") -> Pool:
    pool = tiny_pool(folder, name=name, train=TRAIN + [("x", "likes", "c2")], test=TEST, entries=ENTRIES)
    kg = pool.sample.kg
    Relation.objects.filter(kg=kg, key="capital").update(domain_type="country", range_type="city")
    Relation.objects.filter(kg=kg, key="likes").update(domain_type="person", range_type="person")
    return pool
