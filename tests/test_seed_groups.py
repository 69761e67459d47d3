"""bench/seed_groups.py: the mean and range of runs that differ in seed, from bench.subwords's per-model rows."""

import re

import pytest

from bench.seed_groups import parse_groups, summarize_groups


def _run(updates, seed, test, test2017, equal=None):
    run = {"training": {"updates": updates, "seed": seed},
           "bleu": {"test": {"searched": test}, "test2017": {"searched": test2017}}}
    if equal is not None:
        run["equal_updates"] = {"bleu": {"test": {"searched": equal}, "test2017": {"searched": equal - 8}}}
    return run


def test_parse_groups_reads_names_and_members():
    measured = {"w": "dir_w", "w_s1": "dir_1", "w_s2": "dir_2", "b": "dir_b"}
    assert parse_groups(["words=w+w_s1+w_s2", "bpe=b"], measured) == {"words": ["w", "w_s1", "w_s2"], "bpe": ["b"]}


@pytest.mark.parametrize("entry", ["words", "=a+b", "words="])
def test_parse_groups_names_a_bad_entry(entry):
    with pytest.raises(ValueError, match=re.escape(f"--groups entry {entry!r}")):
        parse_groups([entry], {"a": "dir_a", "b": "dir_b"})


def test_summary_is_the_mean_and_range_of_each_split():
    models = {"w": _run(1188, 1234, 54.28, 45.72, 52.18), "w_s1": _run(1201, 1, 53.0, 46.5, 51.0),
              "w_s2": _run(1170, 2, 53.5, 44.0, 50.0), "other": _run(900, 1, 10.0, 9.0)}
    summary = summarize_groups(models, {"words": ["w", "w_s1", "w_s2"]})
    assert list(summary) == ["words"]
    words = summary["words"]
    assert words["members"] == ["w", "w_s1", "w_s2"]
    assert words["seeds"] == [1234, 1, 2]
    assert words["updates"] == [1188, 1201, 1170]
    assert words["bleu"]["test"] == {"mean": round((54.28 + 53.0 + 53.5) / 3, 2), "min": 53.0, "max": 54.28}
    assert words["bleu"]["test2017"] == {"mean": round((45.72 + 46.5 + 44.0) / 3, 2), "min": 44.0, "max": 46.5}
    assert words["equal_updates_bleu"]["test"] == {"mean": 51.06, "min": 50.0, "max": 52.18}


def test_equal_updates_are_left_out_unless_every_run_has_them():
    models = {"a": _run(10, 1, 1.0, 2.0, 3.0), "b": _run(10, 2, 1.0, 2.0)}
    assert "equal_updates_bleu" not in summarize_groups(models, {"g": ["a", "b"]})["g"]


def test_a_member_that_is_not_measured_is_named():
    with pytest.raises(ValueError, match=r"group 'g' names models that are not measured: \['missing'\]"):
        parse_groups(["g=a+missing"], {"a": "dir_a"})
