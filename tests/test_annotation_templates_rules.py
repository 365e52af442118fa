"""annotation/lib/templates.py and guidelines.py without Django (issue 19): every template error message whole,
the limits at their bounds, parse's pieces, render against a plain replacement reference, the default templates
of each relation shape, the name cut; the guidelines' safe Markdown and digest."""
from __future__ import annotations

import hashlib
import json

import pytest

from annotation.lib import guidelines, templates
from annotation.lib.templates import TemplateError, check_template, cut_name, default_template, parse, render
from tests._raises_support import whole

USABLE = "{head}, {tail}, {relation}"


def test_limits():
    assert templates.PLACEHOLDERS == ("head", "tail", "relation")
    assert templates.REQUIRED == ("head", "tail")
    assert (templates.MAX_TEMPLATE_LENGTH, templates.MAX_PLACEHOLDERS, templates.MAX_NAME_LENGTH) == (500, 6, 200)
    assert templates.MAX_QUESTION_LENGTH == 500 + 6 * 200


@pytest.mark.parametrize("text, message", [
    ("", "the template is empty"),
    ("   ", "the template is empty"),
    ("Is {head} ok?", "the template must contain {tail}"),
    ("Is {tail} ok?", "the template must contain {head}"),
    ("Is it ok?", "the template must contain {head} and {tail}"),
    ("Is {head} {x} {tail}?", f"unknown placeholder {{x}}; use {USABLE}"),
    ("Is {head} {} {tail}?", f"unknown placeholder {{}}; use {USABLE}"),
    ("Is {head:>20} {tail}?", "{head:>20} is not a plain placeholder: no format spec, conversion, attribute or index "
                              f"is allowed (use {USABLE})"),
    ("Is {head!r} {tail}?", "{head!r} is not a plain placeholder: no format spec, conversion, attribute or index "
                            f"is allowed (use {USABLE})"),
    ("Is { head } {tail}?", "{ head } is not a plain placeholder: no format spec, conversion, attribute or index "
                            f"is allowed (use {USABLE})"),
    ("Is {relation.x} {head} {tail}?", "{relation.x} is not a plain placeholder: no format spec, conversion, "
                                       f"attribute or index is allowed (use {USABLE})"),
    ("Is {headline} {tail}?", f"unknown placeholder {{headline}}; use {USABLE}"),
    ("Is {head {tail}?", "bad braces in the template: the '{' at character 4 is not part of a plain placeholder "
                         "(braces do not nest; write {{ and }} for literal braces)"),
    ("Is {head} } {tail}?", "bad braces in the template: the '}' at character 11 is not part of a plain placeholder "
                            "(braces do not nest; write {{ and }} for literal braces)"),
    ("{head}{tail}" + "{relation}" * 5, "the template has 7 placeholders; at most 6"),
    ("{head}{tail}" + "x" * 489, "the template is 501 characters long; at most 500"),
])
def test_every_error_message_whole(text, message):
    with pytest.raises(TemplateError, match=whole(message)):
        check_template(text)


def test_bounds_are_allowed():
    six = "{head}{tail}" + "{relation}" * 4
    assert [name for is_name, name in parse(six) if is_name] == ["head", "tail"] + ["relation"] * 4
    longest = "{head}{tail}" + "x" * 488
    assert len(longest) == 500 and check_template(longest) == longest
    assert check_template("  Is {head} {tail}?\n") == "Is {head} {tail}?"
    assert issubclass(TemplateError, ValueError)


def pieces(text):
    return [piece for piece in parse(text) if piece != (False, "")]  # (parse may keep empty literals: harmless)


def test_parse_pieces():
    assert pieces("Is {head}'s {{x}} {tail}?") == [(False, "Is "), (True, "head"), (False, "'s {x} "),
                                                   (True, "tail"), (False, "?")]
    assert pieces("{head}{tail}") == [(True, "head"), (True, "tail")]
    assert pieces("{{{head}}}{tail}") == [(False, "{"), (True, "head"), (False, "}"), (True, "tail")]


@pytest.mark.parametrize("text", ["Is {head}'s {relation} {tail}?", "{tail} / {head} {{literal}} {relation}{relation}",
                                  "{{}}{head}{{{tail}}}"])
def test_render_is_a_plain_replacement(text):
    head, tail, relation = "A {tail} b", "c}}", "{head}"

    def reference(relation_text):
        values = {"{{": "{", "}}": "}", "{head}": head, "{tail}": tail, "{relation}": relation_text}
        out, i = [], 0
        while i < len(text):  # left to right, the longest token first
            token = next((t for t in ("{relation}", "{head}", "{tail}", "{{", "}}") if text.startswith(t, i)), None)
            out.append(values[token] if token else text[i])
            i += len(token) if token else 1
        return "".join(out)
    assert render(text, head, tail, relation) == reference(relation)
    assert render(text, head, tail) == reference("")


def test_names_are_cut_with_an_ellipsis():
    assert cut_name("x" * 200) == "x" * 200
    assert cut_name("x" * 201) == "x" * 199 + "\u2026"
    question = render("{head}{tail}{relation}", "h" * 300, "t" * 201, "r" * 5)
    assert question == "h" * 199 + "\u2026" + "t" * 199 + "\u2026" + "r" * 5
    with pytest.raises(TemplateError, match=whole("the template is empty")):
        render("", "a", "b")


@pytest.mark.parametrize("key, text, template", [
    ("/people/person/nationality", "", "Is {head}'s nationality {tail}?"),
    ("/location/location/contains", "", "Does {head} contain {tail}?"),
    ("/location/location/partially_contains", "", "Does {head} partially contain {tail}?"),
    ("/location/location/adjoins", "", "Does {head} adjoin {tail}?"),
    ("/location/location/split_to", "", "Did {head} split into {tail}?"),
    ("/film/film/written_by", "", "Is {head} written by {tail}?"),
    ("/base/x/part_of", "", "Is {head} part of {tail}?"),
    ("/base/x/born_in", "", "Is {head} born in {tail}?"),
    ("/base/x/isa", "", "Is {head} a {tail}?"),
    ("/tv/tv_program/languages", "", "Is {tail} one of {head}'s languages?"),
    ("/base/x/genus", "", "Is {head}'s genus {tail}?"),  # ends in "us": singular
    ("/base/x/status", "", "Is {head}'s status {tail}?"),
    ("/base/x/basis", "", "Is {head}'s basis {tail}?"),
    ("/base/x/physics", "", "Is {head}'s physics {tail}?"),
    ("/base/x/news", "", "Is {head}'s news {tail}?"),
    ("/base/x/series", "", "Is {head}'s series {tail}?"),
    ("/base/x/class", "", "Is {head}'s class {tail}?"),
    ("/base/x/as", "", "Is {head}'s as {tail}?"),  # two letters: not a plural
    ("/base/x/abs", "", "Is {tail} one of {head}'s abs?"),
    ("/base/x/award_nominations_s", "", "Is {tail} one of {head}'s award nominations?"),
    ("/people/person/places_lived./people/place_lived/location", "",
     "Is {tail} the location in {head}'s places lived?"),
    ("/film/actor/film./film/performance/film", "", "Is {tail} a film of {head}?"),
    ("/film/actor/films./film/performance/film", "", "Is {tail} one of the films of {head}?"),
    ("/a/b/award_s./a/c/award/", "", "Is {tail} a award of {head}?"),
    ("P27", "country of citizenship", "Is {head}'s country of citizenship {tail}?"),
    ("P1", "contains", "Does {head} contain {tail}?"),
    ("P2", "is a", "Is {head} a {tail}?"),
    ("_hypernym", "", "Is {head}'s hypernym {tail}?"),
    # relations named by a verb (UMLS, WN18RR): asked as the triple reads, not "Is {tail} one of {head}'s causes?"
    ("causes", "", "Does {head} cause {tail}?"),
    ("treats", "", "Does {head} treat {tail}?"),
    ("diagnoses", "", "Does {head} diagnose {tail}?"),
    ("analyzes", "", "Does {head} analyze {tail}?"),
    ("assesses_effect_of", "", "Does {head} assess effect of {tail}?"),
    ("carries_out", "", "Does {head} carry out {tail}?"),
    ("co-occurs_with", "", "Does {head} co-occur with {tail}?"),
    ("_has_part", "", "Does {head} have part {tail}?"),
    ("P3", "shares border with", "Does {head} share border with {tail}?"),
    ("associated_with", "", "Is {head} associated with {tail}?"),
    ("_similar_to", "", "Is {head} similar to {tail}?"),
    ("P4", "languages spoken, written or signed", "Is {head}'s languages spoken, written or signed {tail}?"),
    ("/film/film/genres", "", "Is {tail} one of {head}'s genres?"),  # a path's segments are nouns
    ("/base/x/uses", "", "Is {tail} one of {head}'s uses?"),  # even a listed verb's spelling
    ("studies", "", "Does {head} study {tail}?"),
    ("treaties", "", "Is {tail} one of {head}'s treaties?"),  # Nations: plural nouns, not verbs
    ("P780", "symptoms", "Is {tail} one of {head}'s symptoms?"),
    ("P159", "headquarters location", "Is {head}'s headquarters location {tail}?"),
    ("_member_of_domain_region", "", "Is {head}'s member of domain region {tail}?"),
    ("_member_of", "", "Is {head} member of {tail}?"),
    ("rel.sub.name", "", "Is {head}'s rel sub name {tail}?"),
    ("  /people/person/nationality  ", "", "Is {head}'s nationality {tail}?"),
    ("/x", "", "Is {head}'s /x {tail}?"),  # one slash: not a path
    ("___", "", "Is {head}'s ___ {tail}?"),  # no words left: the key itself
])
def test_default_templates(key, text, template):
    assert default_template(key, text) == template
    assert check_template(template) == template


def test_guidelines_constants_and_schemes():
    assert guidelines.CAMPAIGN_KEY == "campaign"
    assert guidelines.MAX_GUIDELINES_CHARS == 20_000
    assert guidelines.LINK_SCHEMES == ("http", "https", "mailto")
    html = guidelines.render_markdown("[a](HTTPS://x.org) [c](ftp://x.org)")
    assert 'href="HTTPS://x.org"' in html and html.count("href") == 1
    # a URL urlsplit cannot read is no link
    assert guidelines._MARKDOWN.validateLink("http://[::1") is False
    assert guidelines._MARKDOWN.validateLink(" MailTo:a@b.org") is True
    assert guidelines.render_markdown("plain *text*") == "<p>plain <em>text</em></p>\n"
    assert guidelines.render_markdown("") == "" and guidelines.render_markdown(None) == ""
    # typographer and linkify are off: quotes stay plain, a bare address is no link
    assert guidelines.render_markdown('"q" -- www.example.org') == '<p>&quot;q&quot; -- www.example.org</p>\n'


def test_guidelines_digest_is_the_sha256_of_the_stripped_texts():
    payload = json.dumps(["Read this", [["a", "x"], ["b", "y"]]])
    assert guidelines.guidelines_digest(" Read this ", {"b": " y", "a": "x\n", "c": " "}) == \
        hashlib.sha256(payload.encode("utf-8")).hexdigest()
    only_relations = json.dumps(["", [["r", "t"]]])
    assert guidelines.guidelines_digest("  ", {"r": "t"}) == hashlib.sha256(only_relations.encode("utf-8")).hexdigest()
    assert guidelines.guidelines_digest("c", {}) == hashlib.sha256(json.dumps(["c", []]).encode("utf-8")).hexdigest()
    assert guidelines.guidelines_digest("", {}) == ""


def test_default_templates_edge_shapes():
    # no text given: the key's own words
    assert default_template("_hypernym") == "Is {head}'s hypernym {tail}?"
    # two slashes make a path; a three-part mediator path takes its last part
    assert default_template("/a/nationality") == "Is {head}'s nationality {tail}?"
    assert default_template("/a/b/films./c/d/performance./e/f/role") == "Is {tail} the role in {head}'s films?"
    # the text's words are joined with "_" to find the verbs
    assert default_template("P9", "partially contains") == "Does {head} partially contain {tail}?"
    assert default_template("P9", "split to") == "Did {head} split into {tail}?"
    # only the last word decides the plural: "big as" ends in a two-letter word
    assert default_template("P9", "big as") == "Is {head}'s big as {tail}?"


def test_upper_case_x_at_the_ends_of_words_is_kept():
    assert default_template("/a/b/boX") == "Is {head}'s boX {tail}?"
    assert default_template("P9", "Xenon_") == "Is {head}'s Xenon {tail}?"
    assert default_template("/a/b/boX./c/d/bo") == "Is {tail} the bo in {head}'s boX?"
    assert default_template("/a/b/bo./c/d/boX") == "Is {tail} the boX in {head}'s bo?"
