"""Reading and writing campaign files (issue 17), without Django: every setting checked with a one-line error
naming the file and line, relative paths resolved against the file's folder, and the writer's TOML read back
by the standard library to the same spec."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from annotation.lib.campaign_file import (
    ROLES, CampaignFileError, dumps, parse_campaign_file, parse_campaign_text, spec_from_dict, spec_to_toml,
)

ROOT = Path(__file__).resolve().parent.parent
GOOD = """version = 1
[campaign]
name = "c1"
[kg]
name = "k"
path = "data/k"
entity_names = "names.tsv"
[[systems]]
name = "dm"
train = { architecture = "distmult", dim = 8, epochs = 2, hyperparameters = { dropout = 0.1 } }
[[systems]]
name = "hake"
scores = "hake.npz"
questions = "q.tsv"
[sample]
size = 10
seed = 1
[pool]
depth = 5
[templates]
"/people/person/nationality" = "Is {head} a citizen of {tail}?"
[judging]
order = "kg_aware"
budget = 100
[members]
annotator = ["a", "b"]
[evaluation]
depths = [0, 5]
"""


def test_a_good_file_reads_into_a_spec_with_paths_beside_it(tmp_path):
    path = tmp_path / "c1.toml"
    path.write_text(GOOD)
    spec = parse_campaign_file(path)
    assert spec.kg.path == str(tmp_path / "data" / "k") and spec.kg.files == {"entity_names": str(tmp_path / "names.tsv")}
    assert [(s.name, s.kind) for s in spec.systems] == [("dm", "train"), ("hake", "scores")]
    assert spec.systems[1].options == {"questions": str(tmp_path / "q.tsv")}
    assert spec.pool_systems() == ("dm", "hake") and spec.sample.default_name() == "uniform-10-seed1"
    assert spec.judging.order == "kg_aware" and spec.judging.budget == 100 and spec.judging.gold_rate == 0.05
    assert spec.members == {"annotator": ("a", "b")} and spec.evaluation.depths == (0, 5)
    assert spec_from_dict(spec.to_dict()) == spec


def test_the_writer_gives_toml_that_reads_back_to_the_same_spec(tmp_path):
    path = tmp_path / "c1.toml"
    path.write_text(GOOD)
    spec = parse_campaign_file(path)
    text = spec_to_toml(spec, base=tmp_path, header="# exported")
    assert 'path = "data/k"' in text and '"/people/person/nationality" = ' in text
    again = tmp_path / "again.toml"
    again.write_text(text)
    assert parse_campaign_file(again).canonical() == spec.canonical()
    tricky = {"s": 'quote " backslash \\ tab \t newline \n bell \x07 é', "n": [1, 2.5, True], "t": {"a b": {"c": 1}}}
    assert tomllib.loads(dumps({"x": tricky})) == {"x": tricky}


@pytest.mark.parametrize("change, message", [
    (("depth = 5", "depth = 0"), r":19: pool.depth must be from 1 to 2147483647, got 0"),
    (("depth = 5", 'depth = "ten"'), r":19: pool.depth must be an integer, got 'ten'"),
    (('order = "kg_aware"', 'order = "best"'), r":23: judging.order must be one of random, depth, "),
    (('name = "c1"', 'name = "c 1"'), r":3: campaign.name: campaign name 'c 1' must be a slug"),
    (("seed = 1", "seed = 1\nstratify = true"), r":18: \[sample\] has no setting 'stratify'"),
    (('annotator = ["a", "b"]', 'annotator = ["a", "b"]\nboss = ["c"]'), r":27: \[members\] has no setting 'boss'"),
    (('scores = "hake.npz"', 'scores = "hake.npz"\nrun = "x.trec"'), r":11: each \[\[systems\]\] needs exactly one"),
    (("size = 10", "size = 10\nfile = 's.txt'"), r":15: \[sample\] needs a size .* or a file, not both"),
    (("[pool]\ndepth = 5", '[pool]\ndepth = 5\nsystems = ["dm", "x"]'), r"pool.systems names 'x', which no"),
    (("version = 1", "version = 2"), r":1: campaign file version 2; this kgpool reads version 1"),
    (("depth = 5", "depth = 5 5"), r":19: not valid TOML"),
])
def test_every_mistake_is_one_line_naming_the_file_and_line(change, message):
    text = GOOD.replace(*change)
    assert text != GOOD
    with pytest.raises(CampaignFileError, match=message) as error:
        parse_campaign_text(text, Path("/x/c1.toml"))
    assert str(error.value).startswith("/x/c1.toml") and "\n" not in str(error.value)


def test_files_that_are_not_campaign_files_are_refused(tmp_path):
    with pytest.raises(CampaignFileError, match="no such file"):
        parse_campaign_file(tmp_path / "missing.toml")
    binary = tmp_path / "b.toml"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(CampaignFileError, match="not UTF-8"):
        parse_campaign_file(binary)


def test_roles_and_the_examples():
    from annotation.models import Role  # the lib's roles are the model's (imported here only)

    assert set(ROLES) == set(Role.values)
    for example in ("quickstart.toml", "fb15k237-case-study.toml"):
        spec = parse_campaign_file(ROOT / "examples" / example)
        assert spec.pool.depth == 10


@pytest.mark.parametrize("order", ["cal", "cal_top"])
def test_the_continuous_active_learning_orders_are_campaign_file_settings(tmp_path, order):
    path = tmp_path / "c1.toml"
    path.write_text(GOOD.replace('order = "kg_aware"', f'order = "{order}"'))
    assert parse_campaign_file(path).judging.order == order
