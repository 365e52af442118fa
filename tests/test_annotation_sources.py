"""Source URL validation and normalisation."""
from __future__ import annotations

import pytest

from annotation.lib.sources import SourceError, check_source, undouble

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
