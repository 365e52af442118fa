"""Source URL validation and normalisation."""
from __future__ import annotations

import dataclasses

import pytest

from annotation.lib.sources import Source, SourceError, check_source, has_doubled_scheme, undouble

ALLOWED = ["wikipedia.org", "IMDb.com", "*.allmusic.com"]


@pytest.mark.parametrize(
    ("url", "normalised", "domain"),
    [
        ("https://en.Wikipedia.ORG/wiki/Jeremy_Irons#Early_life", "https://en.wikipedia.org/wiki/Jeremy_Irons", "wikipedia.org"),
        ("HTTP://www.imdb.com:80/name/nm0000460/?ref=x", "http://www.imdb.com/name/nm0000460/?ref=x", "imdb.com"),
        ("https://imdb.com", "https://imdb.com/", "imdb.com"),
        ("https://www.allmusic.com:8443/artist", "https://www.allmusic.com:8443/artist", "allmusic.com"),
    ],
)
def test_accepted_and_normalised(url, normalised, domain):
    source = check_source(url, ALLOWED)
    assert (source.url, source.domain) == (normalised, domain)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "required"),
        ("javascript:alert(1)", "only http and https"),
        ("ftp://en.wikipedia.org/x", "only http and https"),
        ("en.wikipedia.org/wiki/X", "only http and https"),
        ("https://notwikipedia.org/x", "not a verified source"),
        ("https://wikipedia.org.evil.com/x", "not a verified source"),
        ("https://user:pw@en.wikipedia.org/x", "user name"),
        ("https://en.wikipedia.org/a b", "spaces"),
        ("https://[::1/x", "not a valid URL"),
        ("https://en.wikipedia.org/wiki/https://en.wikipedia.org/wiki/Steroid", "second http"),
        ("https://en.wikipedia.org/wiki/HTTP://www.imdb.com/x", "second http"),
        ("https://en.wikipedia.org/wiki/https%3A%2F%2Fen.wikipedia.org%2Fwiki%2FX", "second http"),
    ],
)
def test_refused_with_a_clear_message(url, message):
    with pytest.raises(SourceError, match=message):
        check_source(url, ALLOWED)


@pytest.mark.parametrize(
    ("url", "meant"),
    [
        ("https://en.wikipedia.org/wiki/https://en.wikipedia.org/wiki/Steroid", "https://en.wikipedia.org/wiki/Steroid"),
        ("https://en.wikipedia.org/wiki/http://a.org/https://www.imdb.com/x", "https://www.imdb.com/x"),
        ("https://en.wikipedia.org/wiki/https%3A%2F%2Fen.wikipedia.org%2Fwiki%2FX", None),
        ("https://en.wikipedia.org/wiki/Steroid", None),
    ],
)
def test_a_doubled_url_is_undoubled_to_the_pasted_one(url, meant):
    assert undouble(url) == meant


@pytest.mark.parametrize(
    ("url", "allowed", "normalised", "domain"),
    [
        ("https://en.wikipedia.org:443/wiki/X", ["wikipedia.org"], "https://en.wikipedia.org/wiki/X", "wikipedia.org"),
        ("http://en.wikipedia.org:443/wiki/X", ["wikipedia.org"], "http://en.wikipedia.org:443/wiki/X", "wikipedia.org"),
        ("https://en.wikipedia.org:80/wiki/X", ["wikipedia.org"], "https://en.wikipedia.org:80/wiki/X", "wikipedia.org"),
        ("  https://en.wikipedia.org./w?a=1&B=2#top  ", ["", "  ", " Wikipedia.ORG. "], "https://en.wikipedia.org/w?a=1&B=2",
         "wikipedia.org"),
        ("https://wikipedia.org", ["*.wikipedia.org"], "https://wikipedia.org/", "wikipedia.org"),
        ("https://bücher.example.org/x", ["example.org"], "https://xn--bcher-kva.example.org/x", "example.org"),
    ],
)
def test_ports_dots_blanks_and_idna(url, allowed, normalised, domain):
    assert check_source(url, allowed) == Source(normalised, domain)


@pytest.mark.parametrize(
    ("url", "allowed", "message"),
    [
        (None, ALLOWED, "a source URL is required"),
        ("   ", ALLOWED, "a source URL is required"),
        ("https://en.wikipedia.org/a\tb", ALLOWED, "the source URL must not contain spaces"),
        ("ftp://en.wikipedia.org/x", ALLOWED, "only http and https links are accepted, not 'ftp'"),
        ("en.wikipedia.org/x", ALLOWED, "only http and https links are accepted, not 'a link without scheme'"),
        ("https:///x", ALLOWED, "the source URL has no host"),
        ("https://:pw@en.wikipedia.org/x", ALLOWED, "the source URL must not contain a user name or password"),
        ("https://a..wikipedia.org/x", ALLOWED, "invalid host name 'a..wikipedia.org'"),
        ("https://en.wikipedia.org/x", [], "en.wikipedia.org is not a verified source of this campaign "
                                           "(allowed: none configured)"),
        ("https://imdb.com/x", ["  ", "wikipedia.org"], "imdb.com is not a verified source of this campaign "
                                                        "(allowed: wikipedia.org)"),
        ("https://imdb.com/x", [" Wikipedia.org", "*.allmusic.com"], "imdb.com is not a verified source of this "
                                                                     "campaign (allowed: wikipedia.org, allmusic.com)"),
        ("https://en.wikipedia.org/wiki/https://x.org/", ALLOWED, "the source URL contains a second http(s):// (was "
                                                                  "a URL pasted after another?): give one URL"),
    ],
)
def test_refusal_messages_in_full(url, allowed, message):
    with pytest.raises(SourceError) as error:
        check_source(url, allowed)
    assert str(error.value) == message
    assert error.value.__suppress_context__ or error.value.__context__ is None


def test_not_a_valid_url_says_why():
    with pytest.raises(SourceError) as error:
        check_source("https://en.wikipedia.org:99999/x", ALLOWED)
    assert str(error.value).startswith("not a valid URL: ") and "out of range" in str(error.value)


@pytest.mark.parametrize(
    ("url", "doubled"),
    [(None, False), ("", False), ("https://a.org/x", False), ("x https://a.org/", False),
     ("https://a.org/HTTPS%3a%2fb.org", True), ("http://a.org/http:b", False)],
)
def test_has_doubled_scheme(url, doubled):
    assert has_doubled_scheme(url) is doubled


def test_a_checked_source_cannot_be_changed_afterwards():
    source = check_source("https://en.wikipedia.org/x", ALLOWED)
    with pytest.raises(dataclasses.FrozenInstanceError):
        source.url = "https://evil.example/"
