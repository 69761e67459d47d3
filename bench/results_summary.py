r"""The results table of the README and docs/results.md as JSON: what `evaluate` measured on each test set, per model.

    python -m bench.results_summary --eval_dirs=test_2016:work_dirs/eval/test2016,test_2017:work_dirs/eval/test2017 \
        --output=bench/results/multi30k.json

Reads each `evaluate` output folder's `metrics.json` and writes, per model name, the training it had
(updates, epochs, hours, best dev BLEU) and per test set BLEU All / No UNK / UNK replaced and chrF, with the
date and this machine's CPU. `tests/test_readme.py` checks that the tables of the README and docs/ show them.
"""

import json
import pathlib
import time

from absl import app, flags

from bench.bench_flags import define_named_list, evaluate_output_folder
from bench.provenance import cpu_summary, provenance, run_report
from rnnsearch_tf.evaluation.evaluator import METRICS_FILE

_EVAL_DIRS = define_named_list("eval_dirs", None, "TEST_SET:EVALUATE_OUTPUT_DIR pairs (required).", separator=":",
                               value_name="EVALUATE_OUTPUT_DIR", check=evaluate_output_folder)
_COMMAND = flags.DEFINE_string("command", "", "How the models were trained and evaluated, for the record.")


def summarize(metrics):
    training = metrics.get("training") or {}
    return {
        "checkpoint": metrics["checkpoint"],
        "updates": training.get("step"),
        "epochs": round(training["epoch"], 2) if "epoch" in training else None,
        "hours": round(training["hours"], 2) if "hours" in training else None,
        "best_dev_bleu": round(training["best_dev_bleu"], 2) if "best_dev_bleu" in training else None,
    }


def test_set_scores(metrics):
    """One model's `evaluate` metrics on one test set -> the table's numbers (chrF where `evaluate` gave it)."""
    scores = {
        "bleu": round(metrics["bleu"], 2),
        "bleu_no_unk": round(metrics["bleu_no_unk"], 2),
        "no_unk_sentences": metrics["no_unk_sentences"],
        "bleu_by_length": [b["bleu"] and round(b["bleu"], 2) for b in metrics["bleu_by_length"]],
    }
    if metrics["bleu_unk_replaced"] is not None:  # None: a model without attention replaces no <unk>
        scores["bleu_unk_replaced"] = round(metrics["bleu_unk_replaced"], 2)
    if "chrf" in metrics:
        scores["chrf"] = round(metrics["chrf"], 2)
    return scores


def summarize_eval_dirs(eval_dirs):
    """{test set name: `evaluate` output folder} -> {model name: its training and each test set's scores}."""
    models = {}
    for test_set, folder in eval_dirs.items():
        evaluated = json.loads((pathlib.Path(folder) / METRICS_FILE).read_text())
        for name, metrics in evaluated["models"].items():
            models.setdefault(name, summarize(metrics))[test_set] = test_set_scores(metrics)
    return models


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    models = summarize_eval_dirs(dict(_EVAL_DIRS.value))
    return {"date": time.strftime("%Y-%m-%d"), "cpu": cpu_summary(), "command": _COMMAND.value, "models": models,
            "provenance": provenance()}


if __name__ == "__main__":
    flags.mark_flags_as_required(["eval_dirs"])  # here, not at import: tests import the module
    run_report(main)
