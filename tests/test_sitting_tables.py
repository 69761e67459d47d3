"""bench.sitting_tables: a CPU kind's tables rendered from its results files, as docs/performance.md and the README
show them."""

import pathlib
import re

import pytest

from bench.sitting_tables import label, replace_tables, tables

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
# The CPU kinds measured by a sitting: those whose whole commands are named by their kind (a kind may end in _bf16,
# as a bf16 peer comparison does; the commands have one file a kind).
KINDS = sorted(re.fullmatch(r"command_latency_(.+)\.json", path.name)[1]
               for path in RESULTS.glob("command_latency_*.json"))


def test_cpu_kinds_are_labelled_as_the_docs_name_them():
    assert label("xeon_amx") == "Xeon-AMX" and label("epyc_bf16") == "EPYC-BF16"
    assert label("epyc_avx2") == "EPYC-AVX2" and label("cpu_baseline") == "CPU-BASELINE"


@pytest.mark.parametrize("kind", KINDS)
def test_every_table_of_a_measured_kind_stands_in_the_performance_page_as_rendered(kind):
    page = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    found = tables(kind, RESULTS)
    assert {"peer_comparison", "command_latency", "profile"} <= set(found), f"{kind}: a sitting's file is missing"
    for key, table in found.items():
        if key != "readme":
            assert "\n".join(table) + "\n" in page, (
                f"docs/performance.md has not {kind}'s {key} table as `python -m bench.sitting_tables --name={kind}` "
                f"prints it (--write=docs/performance.md puts it in place)")


@pytest.mark.parametrize("kind", KINDS)
def test_the_readme_speed_table_shows_each_measured_kinds_cells(kind):
    rows = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    cells = {cell.strip() for line in rows for cell in line.strip("|").split("|")}
    for cell in tables(kind, RESULTS)["readme"]:
        assert cell in cells, f"README.md's speed table has no cell {cell!r} of {kind}"


def test_a_table_replaces_the_one_with_its_header_and_leaves_the_prose():
    page = "Before.\n\n| system (X) | a |\n|---|---|\n| old | 1 |\n| older | 2 |\nAfter.\n\n| step (X) | b |\n"
    found = {"peer_comparison": ["| system (X) | a |", "|---|---|", "| new | 3 |"],
             "command_latency": ["| command (X) | c |", "|---|---|"], "readme": ["3x"]}
    text, missing = replace_tables(page, found)
    assert text == "Before.\n\n| system (X) | a |\n|---|---|\n| new | 3 |\nAfter.\n\n| step (X) | b |\n"
    assert missing == ["command_latency"]


def test_only_the_files_present_give_tables(tmp_path):
    for name in ("peer_comparison_epyc_bf16.json", "command_latency_epyc_bf16.json"):
        (tmp_path / name).write_bytes((RESULTS / name).read_bytes())
    found = tables("epyc_bf16", tmp_path)
    assert set(found) == {"peer_comparison", "command_latency", "readme"}
    training, decoding, one_sentence, test_set, client = found["readme"]
    assert training.endswith("x the peer") and "bf16" not in training  # no bf16 file: no bf16 figure
    assert re.fullmatch(r"\d+\.\d\d s / \d+\.\d\d s", one_sentence) and "bf16 weights" in test_set
    assert tables("xeon_bf16", tmp_path) == {}
