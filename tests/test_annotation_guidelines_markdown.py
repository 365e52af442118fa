"""Guidelines Markdown is rendered safely (issue 15): raw HTML escaped, links only to http, https and mailto,
no images; ordinary Markdown still renders."""
from __future__ import annotations

import pytest

from annotation.lib.guidelines import guidelines_digest, render_markdown


@pytest.mark.parametrize("hostile", [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">click</a>',
    "<iframe src='https://evil.example'></iframe>",
    '<div style="position:fixed">x</div>',
])
def test_raw_html_is_escaped_not_rendered(hostile):
    html = render_markdown(f"Before\n\n{hostile}\n\nafter *this*")
    assert "<script" not in html and "<img" not in html and "<iframe" not in html and "<div" not in html
    assert "<a " not in html
    assert "&lt;" in html  # shown as text
    assert "<em>this</em>" in html


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JAVASCRIPT:alert(1)", " javascript:alert(1)",
                                 "data:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)", "file:///etc/passwd",
                                 "/relative/path", "java%0ascript:alert(1)"])
def test_links_other_than_http_https_mailto_are_not_links(url):
    for text in (f"[click]({url})", f"<{url}>", f"[click][r]\n\n[r]: {url}"):
        html = render_markdown(text)
        assert "href" not in html, (text, html)


def test_http_https_mailto_links_and_markdown_render():
    html = render_markdown("# Rules\n\n- **Yes** only with a source\n- see [the guide](https://example.org/a?b=1&c=2)"
                           "\n- ask <mailto:lead@example.org> or [plain](http://example.org)\n\n![pic](https://x.org/p.png)")
    assert "<h1>Rules</h1>" in html and "<strong>Yes</strong>" in html
    assert 'href="https://example.org/a?b=1&amp;c=2"' in html
    assert 'href="mailto:lead@example.org"' in html and 'href="http://example.org"' in html
    assert "<img" not in html  # images would load third-party content


def test_empty_guidelines_render_nothing_and_have_no_digest():
    assert render_markdown("  \n ") == ""
    assert guidelines_digest("", {"r": "  "}) == ""
    first = guidelines_digest("Read this", {"r": "and this"})
    assert first and first == guidelines_digest("Read this ", {"r": "and this", "s": ""})
    assert first != guidelines_digest("Read this", {"r": "and that"})
    assert first != guidelines_digest("Read this!", {"r": "and this"})
