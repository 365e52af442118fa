"""The campaign file's rules one by one, without Django (issue 19, mutation testing of
annotation/lib/campaign_file.py): every check's whole message and line, every bound at and past its edge, every
default, and the writer's exact TOML. Hand-written cases; the line numbers are counted in BASE below."""
from __future__ import annotations

import tomllib
from dataclasses import FrozenInstanceError, asdict
from pathlib import Path

import pytest

from annotation.lib.campaign_file import (
    INT32_MAX, MAX_FILE_BYTES, CampaignFileError, CampaignSpec, EvaluationSpec, FilterSpec, JudgingSpec, KGSpec,
    PoolSpec, SampleSpec, SystemSpec, _Reader, _scalar, _shown, _string, dumps, parse_campaign_file,
    parse_campaign_text, spec_from_dict, spec_to_toml,
)
from tests._raises_support import whole

ROOT = Path(__file__).resolve().parent.parent
FILE = Path("/x/c.toml")
# line:  1           2           3      4           5              6           7                8
BASE = ('[campaign]\nname = "c"\n[kg]\nname = "k"\n[[systems]]\nname = "s"\nrun = "r.trec"\n[sample]\n'
        # 9         10        11
        'size = 3\n[pool]\ndepth = 2\n')


def read(text: str, path: Path = FILE) -> CampaignSpec:
    return parse_campaign_text(text, path)


def fails(text: str, message: str, path: Path = FILE) -> None:
    with pytest.raises(CampaignFileError, match=whole(message)):
        parse_campaign_text(text, path)


def test_the_smallest_file_and_its_defaults():
    spec = read(BASE)
    assert spec.name == "c" and spec.description == "" and spec.version == 1
    assert spec.kg == KGSpec(name="k", path=None, description="", files={})
    assert spec.systems == (SystemSpec(name="s", kind="run", train={}, path="/x/r.trec", options={}),)
    assert spec.sample == SampleSpec(name=None, size=3, seed=0, stratified=False, file=None)
    assert spec.pool == PoolSpec(depth=2, systems=None, name=None, chunk_size=None)
    assert spec.filters is None and spec.templates == {} and spec.guidelines == {}
    assert spec.allowed_domains is None and spec.members == {} and spec.evaluation is None
    assert asdict(spec.judging) == {"order": "random", "budget": None, "assignment_timeout_s": 1800,
                                    "gold_rate": 0.05, "gold_seed": 0, "rushed_factor": 0.25,
                                    "gold_threshold": 0.8, "evidence_policy": "yes", "seed": 0, "reuse": True}


def test_the_defaults_of_the_optional_tables():
    spec = read(BASE + "[filters]\n[evaluation]\n[judging]\n[members]\n[sources]\n[templates]\n[guidelines]\n")
    assert asdict(spec.filters) == {"rules": ("type", "cardinality", "reflexive"), "threshold": 1.5,
                                    "type_source": "dataset", "type_min_support": 2, "type_max_overlap": 0.0}
    assert asdict(spec.evaluation) == {
        "when": "done", "systems": None, "policy": "realistic", "cutoff": 10, "depths": None, "analyses": True,
        "open_world": True, "dp_test": "t", "device": None, "protocols": (), "negatives": ("corrupted-typed",),
        "negatives_dir": None, "negatives_seed": 0, "pair_k": 100}
    assert spec.judging == JudgingSpec() and spec.members == {} and spec.allowed_domains is None
    assert spec.templates == {} and spec.guidelines == {}
    assert asdict(FilterSpec()) == asdict(spec.filters) and asdict(EvaluationSpec()) == asdict(spec.evaluation)
    assert asdict(PoolSpec(depth=1)) == {"depth": 1, "systems": None, "name": None, "chunk_size": None}
    assert asdict(SampleSpec()) == {"name": None, "size": None, "seed": 0, "stratified": False, "file": None}
    assert asdict(KGSpec(name="k")) == {"name": "k", "path": None, "description": "", "files": {}}
    assert asdict(SystemSpec(name="s", kind="run")) == {"name": "s", "kind": "run", "train": {}, "path": None,
                                                        "options": {}}
    smallest = CampaignSpec(name="c", kg=KGSpec(name="k"), sample=SampleSpec(size=1), pool=PoolSpec(depth=1))
    assert (smallest.systems, smallest.description, smallest.filters, smallest.templates, smallest.guidelines,
            smallest.allowed_domains, smallest.members, smallest.evaluation, smallest.version) == (
        (), "", None, {}, {}, None, {}, None, 1)
    assert asdict(smallest.judging) == asdict(spec.judging)


# ------------------------------------------------------------------------------------------------ reading files
def test_reading_a_file_size_and_encoding(tmp_path):
    with pytest.raises(CampaignFileError, match=whole(f"{tmp_path}: no such file (a campaign file is a .toml file)")):
        parse_campaign_file(tmp_path)
    path = tmp_path / "c.toml"
    path.write_bytes(b"ab\xff")
    with pytest.raises(CampaignFileError, match=whole(f"{path}:1: not UTF-8 text (byte 2)")):
        parse_campaign_file(path)
    path.write_bytes(b"# a\n# b\n\xff")  # the line of the bad byte, as with every other error
    with pytest.raises(CampaignFileError, match=whole(f"{path}:3: not UTF-8 text (byte 8)")):
        parse_campaign_file(path)
    path.write_bytes(b"\xef\xbb\xbf" + BASE.encode())  # a byte-order mark, as some editors save: read as UTF-8
    assert parse_campaign_file(path).pool.depth == 2
    padded = BASE + "#" * (MAX_FILE_BYTES - len(BASE) - 1) + "\n"
    assert len(padded.encode()) == MAX_FILE_BYTES == 1 << 20
    path.write_text(padded)
    assert parse_campaign_file(str(path)).pool.depth == 2
    path.write_text(padded + "\n")
    with pytest.raises(CampaignFileError, match=whole(f"{path}: 1048577 bytes; a campaign file is at most "
                                                      "1048576 bytes")):
        parse_campaign_file(path)


def test_a_file_that_cannot_be_read(tmp_path, monkeypatch):
    path = tmp_path / "c.toml"
    path.write_text(BASE)

    def refuse(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", refuse)
    with pytest.raises(CampaignFileError, match=whole(f"{path}: cannot read: Permission denied")):
        parse_campaign_file(path)

    def refuse_plainly(self):
        raise OSError("disk gone")

    monkeypatch.setattr(Path, "read_bytes", refuse_plainly)
    with pytest.raises(CampaignFileError, match=whole(f"{path}: cannot read: disk gone")):
        parse_campaign_file(path)


def test_toml_errors_name_the_line_or_only_the_file():
    fails(BASE + "x = = 1\n", "/x/c.toml:12: not valid TOML: Invalid value")
    fails(BASE + "[kg]\n", "/x/c.toml:12: not valid TOML: Cannot declare ('kg',) twice")
    fails(BASE + "x = ", "/x/c.toml: not valid TOML: Invalid value (at end of document)")


def test_relative_paths_are_relative_to_the_file_or_to_the_working_folder(tmp_path, monkeypatch):
    text = BASE.replace('name = "k"', 'name = "k"\npath = "data/k"\nentity_names = "~/n.tsv"')
    assert read(text, tmp_path / "sub" / "c.toml").kg.path == str(tmp_path / "sub" / "data" / "k")
    assert read(text).kg.files == {"entity_names": str(Path("~/n.tsv").expanduser().resolve())}
    monkeypatch.chdir(tmp_path)
    assert parse_campaign_text(text).kg.path == str(tmp_path / "data" / "k")
    with pytest.raises(CampaignFileError, match=whole("<campaign file>:2: campaign.name: campaign name 'c c' must "
                                                      "be a slug (letters, digits, -, _, starting with a letter or a "
                                                      "digit, at most 100 characters)")):
        parse_campaign_text(text.replace('"c"', '"c c"'))


# ------------------------------------------------------------------------------------------------ lines
def test_the_line_of_a_key_inside_its_table_only():
    # the key right after the header, a header with spaces and a comment, a quoted key
    fails(BASE.replace("size = 3", "size = 0"), "/x/c.toml:9: sample.size must be from 1 to 2147483647, got 0")
    fails(BASE.replace("[sample]\nsize = 3", '[ sample ]  # the sample\n"size" = 0'),
          "/x/c.toml:9: sample.size must be from 1 to 2147483647, got 0")
    # a table after the one named: not searched; the header is named when the key is not in the table
    fails(BASE + "[judging]\norder = 'x'\n[members]\n",
          "/x/c.toml:13: judging.order must be one of " + ", ".join(
              ("random", "depth", "move_to_front", "maxmean", "maxmean_question", "kg_aware", "cal", "cal_top",
               "cal_mix")) + ", got 'x'")
    fails(BASE + "[evaluation]\ndepth = 1\n[judging]\ncutoff = 1\n",
          "/x/c.toml:13: [evaluation] has no setting 'depth'; settings: analyses, cutoff, depths, device, dp_test, "
          "negatives, negatives_dir, negatives_seed, open_world, pair_k, policy, protocols, systems, when")
    # a key of another table named like this one's is not taken for it
    fails(BASE + "[judging]\nseed = 1\n[evaluation]\nseed = 2\n",
          "/x/c.toml:15: [evaluation] has no setting 'seed'; settings: analyses, cutoff, depths, device, dp_test, "
          "negatives, negatives_dir, negatives_seed, open_world, pair_k, policy, protocols, systems, when")
    # the key missing from its table: the table's header line
    fails(BASE.replace("depth = 2", "chunk_size = 2"), "/x/c.toml:10: [pool] needs depth")


def test_the_line_of_the_nth_array_table_and_of_top_level_keys():
    second = BASE.replace("[sample]", '[[systems]]\nname = "t"\nrun = "t.trec"\nk = 5\n[sample]')
    fails(second, "/x/c.toml:11: a run system takes no 'k'")
    fails(BASE.replace("[sample]", '[[systems]]\nname = "s"\nrun = "t.trec"\n[sample]'),
          "/x/c.toml:9: system 's' is declared twice")
    # systems written as an inline array: no [[systems]] header, the file alone is named
    inline = BASE.replace('[[systems]]\nname = "s"\nrun = "r.trec"\n', "").replace(
        "[campaign]", 'systems = [{ name = "s", run = "r.trec", k = 2 }]\n[campaign]')
    fails(inline, "/x/c.toml: a run system takes no 'k'")
    fails("\n\nextra = 1\n" + BASE, "/x/c.toml:3: unknown table or setting 'extra'")
    fails('zz = 1\n"aa" = 2\n' + BASE, "/x/c.toml:2: unknown table or setting 'aa'")
    # no line for the key anywhere (a dotted key): the file alone
    fails("a.b = 1\n" + BASE, "/x/c.toml: unknown table or setting 'a'")
    fails("version = 2\n" + BASE, "/x/c.toml:1: campaign file version 2; this kgpool reads version 1")
    fails("version = '1'\n" + BASE, "/x/c.toml: file.version must be an integer, got '1'")
    assert read("version = 1\n" + BASE).version == 1


def test_missing_and_misshapen_tables():
    fails(BASE.replace('[campaign]\nname = "c"\n', ""), "/x/c.toml: the [campaign] table is missing")
    fails(BASE.replace('[kg]\nname = "k"\n', ""), "/x/c.toml: the [kg] table is missing")
    fails(BASE.replace("[sample]\nsize = 3\n", ""), "/x/c.toml: the [sample] table is missing")
    fails(BASE.replace("[pool]\ndepth = 2\n", ""), "/x/c.toml: the [pool] table is missing")
    fails("judging = 3\n" + BASE, "/x/c.toml:1: judging must be a table ([judging])")
    fails(BASE.replace('[campaign]\nname = "c"', '[campaign]\nname = "c"\nowner = "me"'),
          "/x/c.toml:3: [campaign] has no setting 'owner'; settings: description, name")
    # a missing table has no line, whatever keys other tables have
    fails(BASE.replace('[kg]\nname = "k"\n', "") + '[templates]\nXXXX = "t"\n', "/x/c.toml: the [kg] table is missing")
    # even when a table has an empty key ("" = ..., legal in [templates] / [guidelines])
    fails(BASE.replace('[kg]\nname = "k"\n', "") + '[templates]\n"" = "t"\n', "/x/c.toml: the [kg] table is missing")
    fails(BASE.replace('name = "c"\n', ""), "/x/c.toml:1: [campaign] needs name")
    fails(BASE.replace('name = "k"\n', ""), "/x/c.toml:3: [kg] needs name")
    assert read(BASE.replace('name = "c"', 'name = "c"\ndescription = "d"')).description == "d"


# ------------------------------------------------------------------------------------------------ typed values
@pytest.mark.parametrize("value, message", [
    ("true", "must be an integer, got True"),
    ("1.0", "must be an integer, got 1.0"),
    ('"2"', "must be an integer, got '2'"),
    ("[2]", "must be an integer, got [2]"),
])
def test_integers_are_integers(value, message):
    fails(BASE.replace("depth = 2", f"depth = {value}"), f"/x/c.toml:11: pool.depth {message}")


def test_numbers_take_integers_as_floats_and_refuse_the_rest():
    filters = read(BASE + "[filters]\nthreshold = 2\ntype_max_overlap = 0\n").filters
    assert filters.threshold == 2.0 and type(filters.threshold) is float and type(filters.type_max_overlap) is float
    fails(BASE + "[filters]\nthreshold = true\n", "/x/c.toml:13: filters.threshold must be a number, got True")
    fails(BASE + "[filters]\nthreshold = 'x'\n", "/x/c.toml:13: filters.threshold must be a number, got 'x'")
    fails(BASE + "[filters]\nthreshold = inf\n", "/x/c.toml:13: filters.threshold must be a finite number, got inf")
    fails(BASE + "[filters]\nthreshold = nan\n", "/x/c.toml:13: filters.threshold must be a finite number, got nan")
    fails(BASE + "[judging]\nreuse = 1\n", "/x/c.toml:13: judging.reuse must be true or false, got 1")
    fails(BASE + "[sources]\nallowed_domains = 'a.org'\n",
          "/x/c.toml:13: sources.allowed_domains must be a list, got 'a.org'")
    fails(BASE.replace('run = "r.trec"', 'run = "r.trec"\noptions = 1'), "/x/c.toml:8: systems.options must be a "
          "table, got 1")
    fails(BASE.replace('run = "r.trec"', 'run = 1'), "/x/c.toml:7: systems.run must be a string, got 1")


@pytest.mark.parametrize("change, message", [
    (('name = "c"', 'name = "c"\ndescription = 1'), "3: campaign.description must be a string, got 1"),
    (('name = "k"', 'name = "k"\npath = ""'), "5: kg.path must name a file or folder"),
    (('name = "k"', 'name = "k"\ndescription = 1'), "5: kg.description must be a string, got 1"),
    (('name = "k"', 'name = "k"\nentity_names = 1'), "5: kg.entity_names must be a string, got 1"),
    (('name = "s"', 'name = "s s"'), "6: systems.name: system name 's s' must be a slug (letters, digits, -, _, "
                                     "starting with a letter or a digit, at most 100 characters)"),
    (('run = "r.trec"', 'run = "r.trec"\ndescription = 1'), "8: systems.description must be a string, got 1"),
    (('run = "r.trec"', 'run = "r.trec"\nquestions = " "'), "8: systems.questions must name a file or folder"),
    (("size = 3", 'file = ""'), "9: sample.file must name a file or folder"),
    (("depth = 2", "depth = 2\n[filters]\nrules = 'type'"), "13: filters.rules must be a list, got 'type'"),
    (("depth = 2", "depth = 2\n[evaluation]\ndepths = 1"), "13: evaluation.depths must be a list, got 1"),
    (("depth = 2", "depth = 2\n[evaluation]\nprotocols = 'x'"), "13: evaluation.protocols must be a list, got 'x'"),
    (("depth = 2", "depth = 2\n[evaluation]\nnegatives = 'x'"), "13: evaluation.negatives must be a list, got 'x'"),
])
def test_every_setting_is_named_with_its_table(change, message):
    text = BASE.replace(*change)
    assert text != BASE
    fails(text, f"/x/c.toml:{message}")


def test_a_value_of_several_kinds_names_them_all():
    reader = _Reader({}, "", Path("/x/c.toml"))
    with pytest.raises(CampaignFileError, match=whole("/x/c.toml: t.a must be an integer or a number, got 's'")):
        reader.value({"a": "s"}, "a", (int, float), "t")
    assert reader.value({"a": 3}, "a", (int, float), "t") == 3
    assert reader.value({"a": True}, "a", (int, bool), "t") is True
    assert reader.value({}, "a", int, "t", 7) == 7


@pytest.mark.parametrize("key, low, high", [
    ("budget", 0, INT32_MAX), ("assignment_timeout_s", 1, INT32_MAX), ("gold_seed", 0, INT32_MAX),
    ("seed", 0, INT32_MAX),
])
def test_judging_integer_bounds(key, low, high):
    assert getattr(read(BASE + f"[judging]\n{key} = {low}\n").judging, key) == low
    assert getattr(read(BASE + f"[judging]\n{key} = {high}\n").judging, key) == high
    fails(BASE + f"[judging]\n{key} = {low - 1}\n",
          f"/x/c.toml:13: judging.{key} must be from {low} to {high}, got {low - 1}")
    fails(BASE + f"[judging]\n{key} = {high + 1}\n",
          f"/x/c.toml:13: judging.{key} must be from {low} to {high}, got {high + 1}")


@pytest.mark.parametrize("key, low, high", [
    ("gold_rate", 0.0, 0.99), ("gold_threshold", 0.0, 1.0), ("rushed_factor", 0.0, None),
])
def test_judging_number_bounds(key, low, high):
    assert getattr(read(BASE + f"[judging]\n{key} = {low}\n").judging, key) == low
    bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
    fails(BASE + f"[judging]\n{key} = -0.001\n", f"/x/c.toml:13: judging.{key} must be {bounds}, got -0.001")
    if high is not None:
        assert getattr(read(BASE + f"[judging]\n{key} = {high}\n").judging, key) == high
        fails(BASE + f"[judging]\n{key} = {high + 0.001}\n",
              f"/x/c.toml:13: judging.{key} must be {bounds}, got {high + 0.001}")
    else:
        assert getattr(read(BASE + f"[judging]\n{key} = 1e300\n").judging, key) == 1e300


def test_judging_choices_and_every_setting():
    judging = read(BASE + '[judging]\norder = "cal_mix"\nbudget = 5\nassignment_timeout_s = 60\ngold_rate = 0.5\n'
                   'gold_seed = 4\nrushed_factor = 2\ngold_threshold = 0.5\nevidence_policy = "never"\nseed = 9\n'
                   'reuse = false\n').judging
    assert asdict(judging) == {"order": "cal_mix", "budget": 5, "assignment_timeout_s": 60, "gold_rate": 0.5,
                               "gold_seed": 4, "rushed_factor": 2.0, "gold_threshold": 0.5,
                               "evidence_policy": "never", "seed": 9, "reuse": False}
    fails(BASE + '[judging]\nevidence_policy = "always"\n',
          "/x/c.toml:13: judging.evidence_policy must be one of yes, no, both, never, got 'always'")
    fails(BASE + "[judging]\nguidelines = 'x'\n",
          "/x/c.toml:13: [judging] has no setting 'guidelines'; settings: assignment_timeout_s, budget, "
          "evidence_policy, gold_rate, gold_seed, gold_threshold, order, reuse, rushed_factor, seed")


def test_shown_values_are_cut_at_60_characters():
    assert _shown("a" * 58) == "'" + "a" * 58 + "'"
    assert _shown("a" * 59) == "'" + "a" * 56 + "..."
    assert len(_shown("a" * 59)) == 60
    assert _shown(3) == "3"


# ------------------------------------------------------------------------------------------------ names and slugs
def test_slugs_and_pool_names():
    assert read(BASE.replace('name = "c"', f'name = "{"a" * 100}"')).name == "a" * 100
    slug = "letters, digits, -, _, starting with a letter or a digit, at most 100 characters"
    fails(BASE.replace('name = "c"', f'name = "{"a" * 101}"'),
          f"/x/c.toml:2: campaign.name: campaign name {_shown('a' * 101)} must be a slug ({slug})")
    fails(BASE.replace('name = "c"', 'name = "-c"'), f"/x/c.toml:2: campaign.name: campaign name '-c' must be a "
          f"slug ({slug})")
    fails(BASE.replace('name = "c"', 'name = "c+"'), f"/x/c.toml:2: campaign.name: campaign name 'c+' must be a "
          f"slug ({slug})")
    assert read(BASE.replace('name = "c"', 'name = "0_a-B"')).name == "0_a-B"
    fails(BASE.replace('name = "k"', 'name = "k/"'), f"/x/c.toml:4: kg.name: knowledge graph name 'k/' must be a "
          f"slug ({slug})")
    pool = BASE.replace("depth = 2", 'depth = 2\nname = "p+q_r-1"\nchunk_size = 1')
    assert read(pool).pool == PoolSpec(depth=2, systems=None, name="p+q_r-1", chunk_size=1)
    assert read(pool.replace("p+q_r-1", "p" * 200)).pool.name == "p" * 200
    fails(pool.replace("p+q_r-1", "p" * 201), f"/x/c.toml:12: pool.name: pool name {_shown('p' * 201)} must be a "
          "slug (letters, digits, -, _ and +, starting with a letter or a digit, at most 100 characters)")
    fails(pool.replace("p+q_r-1", "+p"), "/x/c.toml:12: pool.name: pool name '+p' must be a slug (letters, digits, "
          "-, _ and +, starting with a letter or a digit, at most 100 characters)")
    fails(BASE.replace("size = 3", 'size = 3\nname = "a b"'),
          f"/x/c.toml:10: sample.name: sample name 'a b' must be a slug ({slug})")
    assert read(BASE.replace("size = 3", 'size = 3\nname = "smp"')).sample.name == "smp"


def test_name_lists():
    two = BASE.replace("[sample]", '[[systems]]\nname = "t"\nrun = "t.trec"\n[sample]')
    assert read(two.replace("depth = 2", 'depth = 2\nsystems = ["t"]')).pool.systems == ("t",)
    assert read(two).pool.systems is None and read(two).pool_systems() == ("s", "t")
    fails(two.replace("depth = 2", 'depth = 2\nsystems = ["t", "t"]'), "/x/c.toml:15: pool.systems lists a name "
          "twice")
    fails(two.replace("depth = 2", 'depth = 2\nsystems = ["t", 1]'), "/x/c.toml:15: pool.systems: 1 is not a name "
          "(letters, digits, - and _)")
    fails(two.replace("depth = 2", 'depth = 2\nsystems = ["t+"]'), "/x/c.toml:15: pool.systems: 't+' is not a name "
          "(letters, digits, - and _)")
    fails(two.replace("depth = 2", 'depth = 2\nsystems = ["u"]'), "/x/c.toml:15: pool.systems names 'u', which no "
          "[[systems]] declares")
    no_systems = BASE.replace('[[systems]]\nname = "s"\nrun = "r.trec"\n', "")
    fails(no_systems, "/x/c.toml:7: a pool needs systems: declare them with [[systems]]")
    assert read(no_systems.replace("depth = 2", "depth = 2\nsystems = []")).pool.systems == ()


def test_files_must_name_something():
    fails(BASE.replace('run = "r.trec"', 'run = "  "'), "/x/c.toml:7: systems.run must name a file or folder")
    fails(BASE.replace('run = "r.trec"', 'run = "r\\u0000"'), "/x/c.toml:7: systems.run must name a file or folder")
    fails(BASE.replace('run = "r.trec"', 'run = ""'), "/x/c.toml:7: systems.run must name a file or folder")
    assert read(BASE.replace('run = "r.trec"', 'run = "/abs/r.trec"')).systems[0].path == "/abs/r.trec"


# ------------------------------------------------------------------------------------------------ tables
def test_the_kg_table_takes_every_metadata_file():
    keys = ("entity_names", "wikidata", "relation_types", "relation_text", "entity_types", "type_labels",
            "relation_labels", "entity_vocab", "relation_vocab")
    text = BASE.replace('name = "k"', 'name = "k"\ndescription = "d"\n' + "\n".join(f'{k} = "{k}.tsv"' for k in keys))
    kg = read(text).kg
    assert kg.description == "d" and kg.files == {k: f"/x/{k}.tsv" for k in keys}
    fails(BASE.replace('name = "k"', 'name = "k"\nnames = "n.tsv"'),
          "/x/c.toml:5: [kg] has no setting 'names'; settings: description, entity_names, entity_types, entity_vocab, "
          "name, path, relation_labels, relation_text, relation_types, relation_vocab, type_labels, wikidata")


def test_the_systems_array():
    fails("systems = 1\n" + BASE.replace('[[systems]]\nname = "s"\nrun = "r.trec"\n', ""),
          "/x/c.toml:1: systems must be an array of tables ([[systems]])")
    fails("systems = [1]\n" + BASE.replace('[[systems]]\nname = "s"\nrun = "r.trec"\n', ""),
          "/x/c.toml:1: systems must be an array of tables ([[systems]])")
    fails(BASE.replace('run = "r.trec"', ""), "/x/c.toml:5: each [[systems]] needs exactly one of train, checkpoint, "
          "scores, run")
    fails(BASE.replace('run = "r.trec"', 'run = "r.trec"\nscores = "s.npz"'),
          "/x/c.toml:5: each [[systems]] needs exactly one of train, checkpoint, scores, run")
    fails(BASE.replace('run = "r.trec"', 'run = "r.trec"\nruns = 1'), "/x/c.toml:8: [systems] has no setting 'runs'; "
          "settings: checkpoint, description, entities, format, k, model, name, options, questions, run, scores, "
          "train")
    fails(BASE.replace('name = "s"\n', ""), "/x/c.toml:5: each [[systems]] needs a name")


def test_systems_that_import_a_file_and_their_options():
    text = BASE.replace('name = "s"\nrun = "r.trec"', 'name = "s"\ncheckpoint = "m.pkl"\nformat = "pykeen"\n'
                        'model = "TransE"\noptions = { a = 1 }\ndescription = "d"')
    assert read(text).systems[0] == SystemSpec(name="s", kind="checkpoint", path="/x/m.pkl", options={
        "format": "pykeen", "model": "TransE", "description": "d", "options": {"a": 1}})
    text = BASE.replace('name = "s"\nrun = "r.trec"', 'name = "s"\nscores = "s.npz"\nentities = "e.tsv"\n'
                        'questions = "q.tsv"\nk = 2147483647')
    assert read(text).systems[0] == SystemSpec(name="s", kind="scores", path="/x/s.npz", options={
        "entities": "/x/e.tsv", "questions": "/x/q.tsv", "k": INT32_MAX})
    assert read(text.replace("k = 2147483647", "k = 1")).systems[0].options["k"] == 1
    fails(text.replace("k = 2147483647", "k = 0"), "/x/c.toml:10: systems.k must be from 1 to 2147483647, got 0")
    fails(text.replace("k = 2147483647", "k = 2147483648"),
          "/x/c.toml:10: systems.k must be from 1 to 2147483647, got 2147483648")
    text = BASE.replace('run = "r.trec"', 'run = "r.trec"\nquestions = "q.tsv"\ndescription = "d"')
    assert read(text).systems[0].options == {"description": "d", "questions": "/x/q.tsv"}


@pytest.mark.parametrize("kind, keys, first", [
    ("checkpoint", "questions = 'q'\nentities = 'e'", "entities"), ("checkpoint", "k = 1", "k"),
    ("scores", "options = {}\nmodel = 'm'", "model"), ("scores", "format = 'f'", "format"),
    ("run", "model = 'm'\nformat = 'f'", "format"), ("run", "options = {}", "options"), ("run", "k = 3", "k"),
    ("run", "entities = 'e'", "entities"), ("run", "model = 'm'", "model"),
    ("checkpoint", "questions = 'q'", "questions"),
    ("scores", "options = {}", "options"),
])
def test_what_each_imported_system_refuses(kind, keys, first):
    text = BASE.replace('run = "r.trec"', f'{kind} = "f"\n{keys}')
    line = 8 + keys.split("\n").index(next(k for k in keys.split("\n") if k.startswith(first)))
    fails(text, f"/x/c.toml:{line}: a {kind} system takes no {first!r}")


def test_trained_systems():
    text = BASE.replace('name = "s"\nrun = "r.trec"', 'train = { architecture = "DistMult", dim = 1, epochs = 1, '
                        'lr = 0.0, batch_size = 1, seed = 0, patience = 0, eval_every = 1, device = "cpu", '
                        'num_threads = 1, hyperparameters = { x = 1 } }\ndescription = "d"')
    system = read(text).systems[0]
    assert system == SystemSpec(name="distmult", kind="train", path=None, options={"description": "d"}, train={
        "architecture": "DistMult", "dim": 1, "epochs": 1, "lr": 0.0, "batch_size": 1, "seed": 0, "patience": 0,
        "eval_every": 1, "device": "cpu", "num_threads": 1, "hyperparameters": {"x": 1}})
    one = BASE.replace('run = "r.trec"', 'train = { architecture = "transe", KEY }')
    for key in ("dim", "epochs", "batch_size", "eval_every", "num_threads"):
        fails(one.replace("KEY", f"{key} = 0"), f"/x/c.toml:7: systems.train.{key} must be from 1 to 2147483647, "
              "got 0")
        assert read(one.replace("KEY", f"{key} = 2147483647")).systems[0].train[key] == INT32_MAX
        fails(one.replace("KEY", f"{key} = 2147483648"), f"/x/c.toml:7: systems.train.{key} must be from 1 to "
              "2147483647, got 2147483648")
    for key in ("seed", "patience"):
        fails(one.replace("KEY", f"{key} = -1"), f"/x/c.toml:7: systems.train.{key} must be from 0 to 2147483647, "
              "got -1")
        fails(one.replace("KEY", f"{key} = 2147483648"), f"/x/c.toml:7: systems.train.{key} must be from 0 to "
              "2147483647, got 2147483648")
    fails(one.replace("KEY", "lr = -0.5"), "/x/c.toml:7: systems.train.lr must be at least 0.0, got -0.5")
    second = one.replace("KEY", "dim = 2").replace("[sample]", '[[systems]]\nname = "t"\ntrain = { architecture = '
                                                  '"a", dim = -64 }\n[sample]')
    fails(second, "/x/c.toml:10: systems.train.dim must be from 1 to 2147483647, got -64")  # the second system's line
    assert read(one.replace("KEY", "lr = 1e12")).systems[0].train["lr"] == 1e12
    fails(one.replace("KEY", "lr = true"), "/x/c.toml:7: systems.train.lr must be a number, got True")
    fails(one.replace("KEY", "dim = 2.0"), "/x/c.toml:7: systems.train.dim must be an integer, got 2.0")
    fails(one.replace("KEY", "device = 0"), "/x/c.toml:7: systems.train.device must be a string, got 0")
    fails(one.replace("KEY", "hyperparameters = 0"), "/x/c.toml:7: systems.train.hyperparameters must be a table, "
          "got 0")
    fails(one.replace("KEY", "depth = 1"), "/x/c.toml:5: [systems] has no setting 'depth'; settings: architecture, "
          "batch_size, device, dim, epochs, eval_every, hyperparameters, lr, num_threads, patience, seed")
    fails(BASE.replace('run = "r.trec"', "train = { dim = 2 }"), "/x/c.toml:7: [systems.train] needs architecture")
    fails(BASE.replace('run = "r.trec"', "train = 1"), "/x/c.toml:7: systems.train must be a table, got 1")
    fails(BASE.replace('run = "r.trec"', 'train = { architecture = "transe" }\nquestions = "q"\nformat = "f"'),
          "/x/c.toml:9: a trained system takes no 'format'")
    # an architecture kgpool does not train is refused with its line (the plan named no file before)
    known = "transe, rotate, distmult, complex, rescal, conve, tucker"
    for bad in ("Rot E", "", "nosuch"):
        fails(BASE.replace('name = "s"\nrun = "r.trec"', f'train = {{ architecture = "{bad}" }}'),
              f"/x/c.toml:6: systems.train.architecture must be one of {known}, got {bad!r}")
    assert read(BASE.replace('run = "r.trec"', 'train = { architecture = "TransE" }')).systems[0].name == "s"
    assert read(BASE.replace('name = "s"\nrun = "r.trec"', 'train = { architecture = "RotatE" }')).systems[0].name \
        == "rotate"


def test_the_sample_table():
    assert read(BASE.replace("size = 3", "size = 3\nseed = 2147483647\nstratified = true")).sample == SampleSpec(
        size=3, seed=INT32_MAX, stratified=True)
    assert read(BASE.replace("size = 3", "size = 2147483647")).sample.size == INT32_MAX
    fails(BASE.replace("size = 3", "size = 2147483648"),
          "/x/c.toml:9: sample.size must be from 1 to 2147483647, got 2147483648")
    fails(BASE.replace("size = 3", "size = 3\nseed = -1"), "/x/c.toml:10: sample.seed must be from 0 to 2147483647, "
          "got -1")
    fails(BASE.replace("size = 3", "size = 3\nseed = 2147483648"),
          "/x/c.toml:10: sample.seed must be from 0 to 2147483647, got 2147483648")
    fails(BASE.replace("size = 3", "size = 3\nstratified = 1"), "/x/c.toml:10: sample.stratified must be true or "
          "false, got 1")
    assert read(BASE.replace("size = 3", 'file = "t.txt"\nname = "n"')).sample == SampleSpec(name="n",
                                                                                               file="/x/t.txt")
    fails(BASE.replace("size = 3", 'file = "t.txt"\nseed = 1'), "/x/c.toml:9: a sample read from a file takes no "
          "seed or stratified")
    fails(BASE.replace("size = 3", 'file = "t.txt"\nstratified = false'), "/x/c.toml:9: a sample read from a file "
          "takes no seed or stratified")
    fails(BASE.replace("size = 3", "seed = 1"), "/x/c.toml:8: [sample] needs a size (drawn with its seed) or a file, "
          "not both")
    fails(BASE.replace("size = 3", "size = 3\nsizes = 1"), "/x/c.toml:10: [sample] has no setting 'sizes'; settings: "
          "file, name, seed, size, stratified")


def test_the_pool_table():
    assert read(BASE.replace("depth = 2", "depth = 2147483647\nchunk_size = 2147483647")).pool == PoolSpec(
        depth=INT32_MAX, chunk_size=INT32_MAX)
    fails(BASE.replace("depth = 2", "depth = 2\nchunk_size = 0"), "/x/c.toml:12: pool.chunk_size must be from 1 to "
          "2147483647, got 0")
    fails(BASE.replace("depth = 2", "depth = 2147483648"), "/x/c.toml:11: pool.depth must be from 1 to 2147483647, "
          "got 2147483648")
    fails(BASE.replace("depth = 2", "depth = 2\nchunk_size = 2147483648"),
          "/x/c.toml:12: pool.chunk_size must be from 1 to 2147483647, got 2147483648")
    fails(BASE.replace("depth = 2", "depth = 2\nsize = 1"), "/x/c.toml:12: [pool] has no setting 'size'; settings: "
          "chunk_size, depth, name, systems")


def test_the_filters_table():
    filters = read(BASE + '[filters]\nrules = ["reflexive", "type"]\nthreshold = 1.0\ntype_source = "roles"\n'
                   'type_min_support = 1\ntype_max_overlap = 0.999999\n').filters
    assert filters == FilterSpec(rules=("type", "reflexive"), threshold=1.0, type_source="roles", type_min_support=1,
                                 type_max_overlap=0.999999)
    assert read(BASE + "[filters]\nrules = []\n").filters.rules == ()
    assert read(BASE + "[filters]\ntype_min_support = 2147483647\n").filters.type_min_support == INT32_MAX
    fails(BASE + '[filters]\nrules = ["type", "size"]\n', "/x/c.toml:13: filters.rules: unknown rule 'size'; rules: "
          "type, cardinality, reflexive")
    fails(BASE + "[filters]\nthreshold = 0.99\n", "/x/c.toml:13: filters.threshold must be at least 1.0, got 0.99")
    fails(BASE + "[filters]\ntype_source = 'kg'\n", "/x/c.toml:13: filters.type_source must be one of dataset, "
          "roles, got 'kg'")
    fails(BASE + "[filters]\ntype_min_support = 0\n", "/x/c.toml:13: filters.type_min_support must be from 1 to "
          "2147483647, got 0")
    fails(BASE + "[filters]\ntype_min_support = 2147483648\n", "/x/c.toml:13: filters.type_min_support must be "
          "from 1 to 2147483647, got 2147483648")
    fails(BASE + "[filters]\ntype_max_overlap = 1\n", "/x/c.toml:13: filters.type_max_overlap must be from 0.0 to "
          "0.999999, got 1.0")
    fails(BASE + "[filters]\ntype_max_overlap = -0.1\n", "/x/c.toml:13: filters.type_max_overlap must be from 0.0 "
          "to 0.999999, got -0.1")
    fails(BASE + "[filters]\nrule = []\n", "/x/c.toml:13: [filters] has no setting 'rule'; settings: rules, "
          "threshold, type_max_overlap, type_min_support, type_source")


def test_templates_and_guidelines():
    spec = read(BASE + '[templates]\nr = "Is {head} r {tail}?"\n[guidelines]\ncampaign = "all"\nr = "' + "g" * 20000
                + '"\n')
    assert spec.templates == {"r": "Is {head} r {tail}?"} and spec.guidelines == {"campaign": "all", "r": "g" * 20000}
    fails(BASE + "[templates]\nq = 1\nr = 2\n", '/x/c.toml:13: templates.q must be a string such as '
          '"Is {head} ... {tail}?"')
    fails(BASE + "[guidelines]\nr = 1\n", "/x/c.toml:13: guidelines.r must be a string (Markdown)")
    fails(BASE + '[guidelines]\nq = "x"\nr = "' + "g" * 20001 + '"\n',
          "/x/c.toml:14: guidelines.r has 20001 characters; at most 20000")


def test_sources():
    assert read(BASE + '[sources]\nallowed_domains = ["a.org", "b.org"]\n').allowed_domains == ("a.org", "b.org")
    # what the campaign would refuse is refused here, with its line (the apply crashed half-way before)
    fails(BASE + "[sources]\nallowed_domains = []\n", "/x/c.toml:13: sources.allowed_domains: give at least one "
          "verified source domain (e.g. wikipedia.org): without one nobody can give an acceptable source, so nobody "
          "can judge")
    for bad in ("https://en.wikipedia.org/wiki", "http://[::1", "en wikipedia.org"):
        fails(BASE + f'[sources]\nallowed_domains = ["a.org", "{bad}"]\n', "/x/c.toml:13: sources.allowed_domains: "
              "give bare domain names such as wikipedia.org")
    assert read(BASE + '[sources]\nallowed_domains = ["*.A.org."]\n').allowed_domains == ("*.A.org.",)
    fails(BASE + '[sources]\nallowed_domains = ["a.org", " "]\n', "/x/c.toml:13: sources.allowed_domains must be a "
          "list of domain names")
    fails(BASE + '[sources]\nallowed_domains = [1]\n', "/x/c.toml:13: sources.allowed_domains must be a list of "
          "domain names")
    fails(BASE + '[sources]\ndomains = []\n', "/x/c.toml:13: [sources] has no setting 'domains'; settings: "
          "allowed_domains")


def test_members():
    members = read(BASE + '[members]\nexpert = ["e"]\nadmin = ["a.b@c+d-e_f", "z", "a.b@c+d-e_f"]\nannotator = []\n'
                   f'adjudicator = ["{"u" * 150}"]\n').members
    assert members == {"admin": ("a.b@c+d-e_f", "z"), "annotator": (), "adjudicator": ("u" * 150,), "expert": ("e",)}
    assert list(members) == ["admin", "annotator", "adjudicator", "expert"]
    fails(BASE + f'[members]\nadmin = ["{"u" * 151}"]\n', f"/x/c.toml:13: members.admin: {_shown('u' * 151)} is not "
          "a username")
    fails(BASE + '[members]\nadmin = [""]\n', "/x/c.toml:13: members.admin: '' is not a username")
    fails(BASE + '[members]\nadmin = ["a b"]\n', "/x/c.toml:13: members.admin: 'a b' is not a username")
    fails(BASE + '[members]\nadmin = [3]\n', "/x/c.toml:13: members.admin: 3 is not a username")
    fails(BASE + '[members]\nadmin = "a"\n', "/x/c.toml:13: members.admin must be a list, got 'a'")
    fails(BASE + '[members]\nowner = ["a"]\n', "/x/c.toml:13: [members] has no setting 'owner'; settings: "
          "adjudicator, admin, annotator, expert")


def test_the_evaluation_table():
    evaluation = read(BASE + '[evaluation]\nwhen = "never"\nsystems = ["s", "x"]\npolicy = "pessimistic"\n'
                      'cutoff = 2147483647\ndepths = [0, 2147483647]\nanalyses = false\nopen_world = false\n'
                      'dp_test = "bootstrap"\ndevice = "cuda"\nprotocols = ["property", "classification", '
                      '"property"]\nnegatives = ["judged", "dataset", "judged"]\nnegatives_dir = "n"\n'
                      'negatives_seed = 2147483647\npair_k = 100000\n').evaluation
    assert asdict(evaluation) == {
        "when": "never", "systems": ("s", "x"), "policy": "pessimistic", "cutoff": INT32_MAX,
        "depths": (0, INT32_MAX), "analyses": False, "open_world": False, "dp_test": "bootstrap", "device": "cuda",
        "protocols": ("property", "classification"), "negatives": ("judged", "dataset"), "negatives_dir": "n",
        "negatives_seed": INT32_MAX, "pair_k": 100000}
    assert read(BASE + "[evaluation]\ndepths = []\ncutoff = 1\npair_k = 1\n").evaluation.depths == ()
    for depths in ("[-1]", "[2147483648]", "[true]", "[1.0]", "[1, 'a']"):
        fails(BASE + f"[evaluation]\ndepths = {depths}\n", "/x/c.toml:13: evaluation.depths must be a list of "
              "integers >= 0")
    for key, bad, message in [
        ("when", "'now'", "must be one of done, never, got 'now'"),
        ("policy", "'x'", "must be one of realistic, optimistic, pessimistic, got 'x'"),
        ("dp_test", "'z'", "must be one of t, bootstrap, got 'z'"),
        ("cutoff", "0", "must be from 1 to 2147483647, got 0"),
        ("cutoff", "2147483648", "must be from 1 to 2147483647, got 2147483648"),
        ("negatives_seed", "-1", "must be from 0 to 2147483647, got -1"),
        ("negatives_seed", "2147483648", "must be from 0 to 2147483647, got 2147483648"),
        ("pair_k", "0", "must be from 1 to 100000, got 0"),
        ("pair_k", "100001", "must be from 1 to 100000, got 100001"),
        ("protocols", "['ranking']", None), ("negatives", "['dataset', 'none']", None),
        ("device", "0", "must be a string, got 0"), ("negatives_dir", "0", "must be a string, got 0"),
        ("analyses", "0", "must be true or false, got 0"), ("open_world", "0", "must be true or false, got 0"),
        ("systems", "['a a']", None),
    ]:
        if key == "protocols":
            expected = "evaluation.protocols: 'ranking' is not one of classification, pair_ranking, property"
        elif key == "negatives":
            expected = ("evaluation.negatives: 'none' is not one of judged, dataset, corrupted-typed, "
                        "corrupted-random")
        elif key == "systems":
            expected = "evaluation.systems: 'a a' is not a name (letters, digits, - and _)"
        else:
            expected = f"evaluation.{key} {message}"
        fails(BASE + f"[evaluation]\n{key} = {bad}\n", f"/x/c.toml:13: {expected}")
    assert read(BASE + "[evaluation]\nprotocols = []\nnegatives = []\n").evaluation.negatives == ()


# ------------------------------------------------------------------------------------------------ the spec's methods
def test_sample_default_names():
    assert SampleSpec(name="n", size=3, file="/a/b.txt").default_name() == "n"
    assert SampleSpec(size=5, seed=2, stratified=True).default_name() == "stratified-5-seed2"
    assert SampleSpec(size=5).default_name() == "uniform-5-seed0"
    assert SampleSpec(file="/a/My Test.v2.txt").default_name() == "my-test-v2"
    assert SampleSpec(file="/a/--a__b--.txt").default_name() == "a__b"
    assert SampleSpec(file="/a/+++.txt").default_name() == "sample"
    assert SampleSpec(file="/a/X-Y.X.txt").default_name() == "x-y-x"
    assert SampleSpec(file="/a/" + "A" * 150 + ".txt").default_name() == "a" * 100


def test_the_specs_are_frozen():
    spec = read(BASE + "[filters]\n[evaluation]\n")
    for value, name in [(spec, "name"), (spec.kg, "name"), (spec.systems[0], "name"), (spec.sample, "size"),
                        (spec.pool, "depth"), (spec.filters, "threshold"), (spec.judging, "budget"),
                        (spec.evaluation, "cutoff")]:
        with pytest.raises(FrozenInstanceError):
            setattr(value, name, 1)


def test_evaluation_options():
    assert EvaluationSpec().options() == {
        "policy": "realistic", "cutoff": 10, "depths": None, "analyses": True, "open_world": True, "dp_test": "t",
        "device": None, "protocols": (), "negatives": ("corrupted-typed",), "negatives_dir": "", "negatives_seed": 0,
        "pair_k": 100}
    options = EvaluationSpec(policy="optimistic", cutoff=3, depths=(0, 4), analyses=False, open_world=False,
                             dp_test="bootstrap", device="cpu", protocols=["property"], negatives=["judged"],
                             negatives_dir="/n", negatives_seed=5, pair_k=7).options()
    assert options == {"policy": "optimistic", "cutoff": 3, "depths": [0, 4], "analyses": False, "open_world": False,
                       "dp_test": "bootstrap", "device": "cpu", "protocols": ("property",), "negatives": ("judged",),
                       "negatives_dir": "/n", "negatives_seed": 5, "pair_k": 7}
    assert type(options["protocols"]) is tuple and type(options["negatives"]) is tuple
    assert EvaluationSpec(depths=()).options()["depths"] is None


def full_spec() -> CampaignSpec:
    return CampaignSpec(
        name="c", description="d", kg=KGSpec(name="k", path="/b/data", description="kd",
                                             files={"wikidata": "/elsewhere/w.tsv", "entity_names": "/b/n.tsv"}),
        systems=(SystemSpec(name="z", kind="train", train={"architecture": "TransE", "dim": 4}),
                 SystemSpec(name="a", kind="scores", path="/b/s.npz",
                            options={"questions": "/b/q.tsv", "k": 3, "description": "sd", "entities": "/b/e.tsv"})),
        sample=SampleSpec(name="smp", size=4, seed=1, stratified=True),
        pool=PoolSpec(depth=2, systems=None, name="p", chunk_size=None),
        filters=FilterSpec(rules=("type",), threshold=2.0),
        templates={"r2": "T2", "r1": "T1"}, guidelines={"b": "B", "campaign": "C", "a": "A"},
        allowed_domains=("a.org",), judging=JudgingSpec(budget=None, seed=3),
        members={"expert": ("e",), "admin": ("b", "a"), "annotator": ()},
        evaluation=EvaluationSpec(systems=("a",), depths=(0, 2), protocols=("property",)),
    )


FULL_TOML = '''# head
version = 1

[campaign]
name = "c"
description = "d"

[kg]
name = "k"
path = "data"
description = "kd"
entity_names = "n.tsv"
wikidata = "/elsewhere/w.tsv"

[[systems]]
name = "z"
train = { architecture = "TransE", dim = 4 }

[[systems]]
name = "a"
scores = "s.npz"
questions = "q.tsv"
k = 3
description = "sd"
entities = "e.tsv"

[sample]
name = "smp"
size = 4
seed = 1
stratified = true

[pool]
depth = 2
systems = ["z", "a"]
name = "p"

[filters]
rules = ["type"]
threshold = 2.0
type_source = "dataset"
type_min_support = 2
type_max_overlap = 0.0

[templates]
r1 = "T1"
r2 = "T2"

[guidelines]
campaign = "C"
a = "A"
b = "B"

[sources]
allowed_domains = ["a.org"]

[judging]
order = "random"
assignment_timeout_s = 1800
gold_rate = 0.05
gold_seed = 0
rushed_factor = 0.25
gold_threshold = 0.8
evidence_policy = "yes"
seed = 3
reuse = true

[members]
admin = ["b", "a"]
annotator = []
expert = ["e"]

[evaluation]
when = "done"
systems = ["a"]
policy = "realistic"
cutoff = 10
depths = [0, 2]
analyses = true
open_world = true
dp_test = "t"
protocols = ["property"]
negatives = ["corrupted-typed"]
negatives_seed = 0
pair_k = 100
'''


def test_the_writer_writes_every_table_exactly(tmp_path):
    spec = full_spec()
    assert spec_to_toml(spec, base=Path("/b"), header="# head") == FULL_TOML
    no_base = spec_to_toml(spec)
    assert no_base.startswith("version = 1\n") and 'path = "/b/data"' in no_base and 'entities = "/b/e.tsv"' in no_base
    assert 'scores = "/b/s.npz"' in no_base and 'questions = "/b/q.tsv"' in no_base
    # the folder itself is "."; a sample from a file, an empty table set and no evaluation
    bare = CampaignSpec(name="c", kg=KGSpec(name="k", path="/b"), sample=SampleSpec(name="n", size=None,
                                                                                    file="/b/s/t.txt"),
                        pool=PoolSpec(depth=1, systems=("x",)),
                        systems=(SystemSpec(name="x", kind="run", path="/b/r.trec"),))
    assert spec_to_toml(bare, base=Path("/b")) == (
        'version = 1\n\n[campaign]\nname = "c"\ndescription = ""\n\n[kg]\nname = "k"\npath = "."\ndescription = ""\n'
        '\n[[systems]]\nname = "x"\nrun = "r.trec"\n\n[sample]\nname = "n"\nfile = "s/t.txt"\n\n[pool]\ndepth = 1\n'
        'systems = ["x"]\n\n[judging]\n'
        'order = "random"\nassignment_timeout_s = 1800\ngold_rate = 0.05\ngold_seed = 0\nrushed_factor = 0.25\n'
        'gold_threshold = 0.8\nevidence_policy = "yes"\nseed = 0\nreuse = true\n\n[members]\n')
    # a chunk size is written; guidelines: the campaign's first, then by relation key (not by text)
    chunked = CampaignSpec(name="c", kg=KGSpec(name="k"), sample=SampleSpec(size=1), guidelines={
        "r2": "A", "r1": "B", "campaign": "Z"}, pool=PoolSpec(depth=1, systems=(), chunk_size=5))
    text = spec_to_toml(chunked)
    assert "[pool]\ndepth = 1\nsystems = []\nchunk_size = 5\n" in text
    assert '[guidelines]\ncampaign = "Z"\nr1 = "B"\nr2 = "A"\n' in text
    # no dataset folder: none written, whatever the base
    assert 'path' not in spec_to_toml(CampaignSpec(name="c", kg=KGSpec(name="k"), sample=SampleSpec(size=1),
                                                   pool=PoolSpec(depth=1, systems=())), base=Path("/b"))
    # written and read back: the same campaign (paths beside the file)
    path = tmp_path / "c.toml"
    spec = spec_from_dict(full_spec().to_dict())
    path.write_text(spec_to_toml(spec, base=tmp_path))
    assert parse_campaign_file(path).canonical()["judging"] == spec.canonical()["judging"]


def test_canonical_and_the_json_form():
    spec = full_spec()
    data = spec.canonical()
    assert [s["name"] for s in data["systems"]] == ["a", "z"]
    assert data["pool"]["systems"] == ["a", "z"]
    assert data["members"] == {"expert": ["e"], "admin": ["a", "b"]}
    assert spec.to_dict()["members"] == {"expert": ["e"], "admin": ["b", "a"], "annotator": []}
    assert spec.to_dict()["pool"]["systems"] is None
    assert spec_from_dict(spec.to_dict()) == spec
    smallest = spec_from_dict({"name": "c", "kg": {"name": "k"}, "sample": {"size": 2}, "pool": {"depth": 1}})
    assert smallest == CampaignSpec(name="c", kg=KGSpec(name="k"), sample=SampleSpec(size=2), pool=PoolSpec(depth=1))
    assert smallest.version == 1 and smallest.description == "" and smallest.judging == JudgingSpec()
    assert spec_from_dict({**smallest.to_dict(), "version": 7}).version == 7
    assert spec_from_dict({**smallest.to_dict(), "judging": None}).judging == JudgingSpec()
    assert spec_from_dict({**smallest.to_dict(), "filters": {"rules": ["type"]}}).filters.rules == ("type",)


# ------------------------------------------------------------------------------------------------ TOML writing
def test_strings_are_escaped_for_toml():
    assert _string('a"b\\c') == '"a\\"b\\\\c"'
    assert _string("\b\t\n\f\r") == '"\\b\\t\\n\\f\\r"'
    assert _string("\x00\x01\x1f\x20\x7f\x80é") == '"\\u0000\\u0001\\u001f \\u007f\x80é"'
    assert _string("") == '""'
    assert _string("X\tXx") == '"X\\tXx"'
    for text in ("\x00\x1f\x7f\"\\\b", "plain X", "é\u2028"):
        assert tomllib.loads(f"x = {_string(text)}") == {"x": text}


def test_scalars():
    assert _scalar(True) == "true" and _scalar(False) == "false"
    assert _scalar(0) == "0" and _scalar(-12) == "-12"
    assert _scalar(0.1) == "0.1" and _scalar(1e300) == "1e+300" and _scalar(2.0) == "2.0"
    assert _scalar("x") == '"x"'
    assert _scalar([1, "a", [True]]) == '[1, "a", [true]]' and _scalar((1, 2)) == "[1, 2]" and _scalar([]) == "[]"
    assert _scalar({"a": 1, "b c": {"d": []}}) == '{ a = 1, "b c" = { d = [] } }' and _scalar({}) == "{}"
    with pytest.raises(ValueError, match=whole("inf cannot be written in a campaign file")):
        _scalar(float("inf"))
    with pytest.raises(ValueError, match=whole("nan cannot be written in a campaign file")):
        _scalar(float("nan"))
    with pytest.raises(TypeError, match=whole("cannot write set in a campaign file")):
        _scalar({1})
    with pytest.raises(TypeError, match=whole("cannot write NoneType in a campaign file")):
        _scalar(None)


def test_dumps_orders_scalars_then_tables_then_arrays_of_tables():
    document = {"a": 1, "t": {"k": "v", "x y": 2}, "l": [1, 2], "rows": [{"x": 1}, {"x": 2}], "e": [], "b": True,
                "a-b_9": 0, "é": 1}
    assert dumps(document) == ('a = 1\nl = [1, 2]\ne = []\nb = true\na-b_9 = 0\n"é" = 1\n\n[t]\nk = "v"\n'
                               '"x y" = 2\n\n[[rows]]\nx = 1\n\n[[rows]]\nx = 2\n')
    assert tomllib.loads(dumps(document)) == document
    assert dumps({}) == "\n"
    assert dumps({"t": {}}) == "\n[t]\n"
    assert dumps({"m": [{"x": 1}, 2]}) == "\n"  # a list mixing tables and values has no TOML form: left out


def test_the_examples_read():
    for example in ("quickstart.toml", "fb15k237-case-study.toml"):
        spec = parse_campaign_file(ROOT / "examples" / example)
        assert spec.pool.depth == 10
        assert parse_campaign_text(spec_to_toml(spec, base=ROOT / "examples"),
                                   ROOT / "examples" / "again.toml").canonical() == spec.canonical()
