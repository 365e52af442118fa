"""Builders for the judging page / API / browser tests: a small nationality campaign with real-looking entities."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Campaign
from annotation.services.campaigns import add_member, create_campaign
from pooling.models import Entity
from tests._annotation_support import tiny_pool

NAT = "/people/person/nationality"
PASSWORD = "judge-pw-123"

PEOPLE = {
    "irons": ("Jeremy Irons", "English actor", ["/people/person", "/film/actor"], "https://en.wikipedia.org/wiki/Jeremy_Irons"),
    "streep": ("Meryl Streep", "American actress", ["/people/person", "/film/actor"], "https://en.wikipedia.org/wiki/Meryl_Streep"),
    "caine": ("Michael Caine", "English actor", ["/people/person"], "https://en.wikipedia.org/wiki/Michael_Caine"),
    "uk": ("United Kingdom", "Country in north-western Europe", ["/location/country"], "https://en.wikipedia.org/wiki/United_Kingdom"),
    "usa": ("United States", "Country in North America", ["/location/country"], "https://en.wikipedia.org/wiki/United_States"),
    "ireland": ("Ireland", "Country in north-western Europe", ["/location/country"], "https://en.wikipedia.org/wiki/Ireland"),
    "france": ("France", "Country in western Europe", ["/location/country"], "https://en.wikipedia.org/wiki/France"),
}


def nationality_campaign(folder: Path, *, name: str = "nat", entries: int = 3, **options) -> Campaign:
    """A campaign whose items are (Jeremy Irons, nationality, X) for X in United Kingdom, United States, France
    (the first ``entries``), pooled by the tail question of the sampled test triple (Jeremy Irons, nationality,
    Ireland)."""
    train = [("streep", NAT, "usa"), ("caine", NAT, "uk"), ("caine", NAT, "france"), ("streep", NAT, "ireland"),
             ("caine", NAT, "usa")]
    test = [("irons", NAT, "ireland")]
    pooled = [("irons", NAT, "uk"), ("irons", NAT, "usa"), ("irons", NAT, "france")][:entries]
    pool = tiny_pool(folder, name=f"{name}-kg", train=train, test=test, entries=pooled)
    for key, (label, description, types, url) in PEOPLE.items():
        Entity.objects.filter(kg=pool.sample.kg, key=key).update(name=label, description=description, types=types, url=url)
    return create_campaign(name, pool, **options)


def member(campaign: Campaign, username: str, *roles: str, staff: bool = False):
    User = get_user_model()
    user = User.objects.filter(username=username).first()
    if user is None:
        user = User.objects.create_user(username, password=PASSWORD, is_staff=staff)
    for role in roles:
        add_member(campaign, user, role)
    return user


@pytest.fixture
def root_client() -> Client:
    """A test client logged in as a superuser (the admin pages)."""
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-root-123"))
    return client
