r"""Continued training on new data (`rnnsearch train --init_from`) as JSON: each model's BLEU on every test set.

    python -m bench.finetune --data_dir=work_dirs/finetune/data/tatoeba_from_multi30k \
        --eval_dirs=test_2016:work_dirs/finetune/eval/multi30k_test,tatoeba_test:work_dirs/finetune/eval/tatoeba_test \
        --output=bench/results/finetune.json

Reads the `metrics.json` of `rnnsearch evaluate` output folders (each evaluated the same models on one test
set) and, per model, its model directory: the training it had (updates, hours, best dev BLEU of its own dev
set), the model it started from (`parent.json`) and the flags it was trained with (`flags.txt`). Adds the
words of the new data outside the parent's vocabularies (`--data_dir`'s `metadata.json`, built with
`--vocabulary_from`) and `provenance()`. `tests/test_readme.py` checks that docs/training.md shows the BLEU.
"""

import json
import pathlib

from absl import app, flags

from bench.bench_flags import define_named_list, evaluate_output_folder
from bench.provenance import provenance, run_report
from data_pipeline.data_dir import DataDir
from rnnsearch_tf.evaluation.evaluator import METRICS_FILE
from rnnsearch_tf.models.model_dir import ModelDir

_EVAL_DIRS = define_named_list("eval_dirs", None, "TEST_SET:EVALUATE_OUTPUT_DIR pairs.", separator=":",
                               value_name="EVALUATE_OUTPUT_DIR", check=evaluate_output_folder, required=True)
_DATA_DIR = flags.DEFINE_string("data_dir", None, "The new data, built with --vocabulary_from (its outside counts).")


def model_row(metrics):
    """What a model's evaluation and directory say of its training."""
    model_dir = ModelDir(metrics["model_dir"])
    training = metrics.get("training") or {}
    return {
        "model_dir": model_dir.path,
        "checkpoint": metrics["checkpoint"],
        "updates": training.get("step"),
        "hours": round(training["hours"], 3) if "hours" in training else None,
        "data_dir": model_dir.read_data_info().get("data_dir"),
        "best_dev_bleu": round(training["best_dev_bleu"], 2) if "best_dev_bleu" in training else None,
        "parent": model_dir.read_parent(),
        "flags": pathlib.Path(model_dir.flags_file).read_text(encoding="utf-8").splitlines(),
    }


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    models = {}
    for test_set, folder in _EVAL_DIRS.value:
        evaluated = json.loads((pathlib.Path(folder) / METRICS_FILE).read_text(encoding="utf-8"))
        for name, metrics in evaluated["models"].items():
            row = models.setdefault(name, model_row(metrics))
            row.setdefault("bleu", {})[test_set] = {
                "source": evaluated["source"],
                "sentences": metrics["sentences"],
                "bleu": round(metrics["bleu"], 2),
                # None: a model without attention replaces no <unk>
                "bleu_unk_replaced": metrics["bleu_unk_replaced"] and round(metrics["bleu_unk_replaced"], 2),
                "signature": metrics["signature"],
            }
    report = {"provenance": provenance(), "rows": models}
    if _DATA_DIR.value:
        vocabularies = DataDir(_DATA_DIR.value).read_metadata()["vocabularies"]
        report["new_data"] = {"data_dir": _DATA_DIR.value, "vocabulary_from": vocabularies["source"].get("from"),
                              "outside_vocabulary": {side: vocabularies[side].get("outside") for side in vocabularies}}
    return report


if __name__ == "__main__":
    run_report(main)
