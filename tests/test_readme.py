"""The README's result rows show what the benchmarks measured (`bench/results/*.json`)."""

import json
import pathlib

import pytest

from conftest import REPO_ROOT

RESULTS = sorted((pathlib.Path(REPO_ROOT) / "bench" / "results").glob("*.json"))
README = (pathlib.Path(REPO_ROOT) / "README.md").read_text(encoding="utf-8")
TABLE_ROWS = [[cell.strip().strip("*") for cell in line.strip().strip("|").split("|")]
              for line in README.splitlines() if line.startswith("|")]


def _row_with(*values):
    return [row for row in TABLE_ROWS if all(value in row for value in values)]


@pytest.mark.parametrize("path", [p for p in RESULTS if "models" in json.loads(p.read_text())], ids=lambda p: p.name)
def test_every_evaluated_model_has_its_readme_row(path):
    for name, model in json.loads(path.read_text())["models"].items():
        test_sets = [key for key in model if key.startswith("test_")]
        values = [f"{model[test_set]['bleu']:.2f}" for test_set in test_sets]
        if model["updates"] is not None:
            values += [str(model["updates"]), f"{model['hours']:.2f}", f"{model['best_dev_bleu']:.2f}"]
        assert _row_with(*values), f"{path.name}: no README table row shows {name}'s {values}"


@pytest.mark.parametrize("path", [p for p in RESULTS if p.name.startswith("peer_comparison")], ids=lambda p: p.name)
def test_peer_comparison_rows_show_the_bench_json(path):
    report = json.loads(path.read_text())
    for side in ("peer", "ours"):
        values = [f"{report[side]['train_tgt_tok_per_s']:,.0f}", f"{report[side]['translate_sents_per_s']:.1f}",
                  f"{report[side]['detokenized_bleu']:.2f}"]
        assert _row_with(*values), f"{path.name}: no README table row shows the {side} numbers {values}"
