"""Judging guidelines (Django-free): Markdown rendered safely, and the digest that tells whether the guidelines a
person confirmed reading are still the current ones.

Guidelines are written by campaign admins but shown to every annotator, so the rendering trusts nothing: raw HTML
is escaped (markdown-it's ``html`` option off), links go only to http, https and mailto, and images are not
rendered (they would load third-party content on the judge page)."""
from __future__ import annotations

import hashlib
import json
from urllib.parse import urlsplit

from markdown_it import MarkdownIt

CAMPAIGN_KEY = "campaign"  # the [guidelines] key of the campaign-wide text in a campaign file
MAX_GUIDELINES_CHARS = 20_000  # a few pages: guidelines are read before judging, not a manual
LINK_SCHEMES = ("http", "https", "mailto")


class _SafeMarkdown(MarkdownIt):
    def validateLink(self, url: str) -> bool:  # noqa: N802 (markdown-it's name)
        try:
            scheme = urlsplit(url.strip()).scheme.lower()
        except ValueError:
            return False
        return scheme in LINK_SCHEMES


_MARKDOWN = _SafeMarkdown("commonmark", {"html": False, "linkify": False, "typographer": False}).disable("image")


def render_markdown(text: str) -> str:
    """HTML of the Markdown ``text``, safe to insert in a page as is (see the module docstring)."""
    if not text or not text.strip():
        return ""
    return _MARKDOWN.render(text)


def guidelines_digest(campaign_text: str, relation_texts: dict[str, str]) -> str:
    """A fingerprint of the whole guidelines ('' when there are none): a change of any text changes it."""
    relations = {key: text for key, text in relation_texts.items() if text.strip()}
    if not campaign_text.strip() and not relations:
        return ""
    payload = json.dumps([campaign_text.strip(), sorted((k, v.strip()) for k, v in relations.items())])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
