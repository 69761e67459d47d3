r"""The quickstart recipe's learning curves: dev and test_2016 BLEU against updates and minutes, per trial; prints JSON.

    python -m bench.quickstart_curves --trials=baseline=work_dirs/t0,dropout_0.1=work_dirs/t1,... \
        --baseline=baseline --test_set=test_2016 --output=bench/results/quickstart_curves.json

(Run it with -m from the repository root: as a script, this file would shadow the package.)

Reads what training and `evaluate` left in each trial's model directory: `flags.txt` (the settings; a
trial's are the flags that differ from the `--baseline` trial's, budgets and paths left out),
`training_state.json` (dev BLEU at every validation, with the training hours spent, validations
included) and `eval_<test_set>/ckpt-N/metrics.json` (`rnnsearch evaluate --checkpoint=.../ckpt-N`).
Updates per minute are the last validated step over its hours (the whole recipe: updates and
validations), and the median of the training updates/s that TensorBoard logged (updates alone): times
of the machine the trials ran on, shared or not. `--update_times` adds `bench.train_throughput` runs of
the batch sizes compared, timed in alternating rounds (the fair comparison of updates per minute).
"""

import json
import pathlib
import statistics

from absl import app, flags
from tensorboard.backend.event_processing import event_accumulator
import tensorflow as tf

from bench.bench_flags import define_named_list
from bench.provenance import provenance, run_report
from rnnsearch_tf.models.model_dir import ModelDir

_TRIALS = define_named_list("trials", None, "NAME=MODEL_DIR of each trial, in the order to report.",
                            value_name="MODEL_DIR", required=True)
_BASELINE = flags.DEFINE_string("baseline", None, "The trial the others' settings are told against.", required=True)
_TEST_SET = flags.DEFINE_string("test_set", "test_2016", "Name of the test set in eval_<name>/ folders.")
_UPDATE_TIMES = define_named_list(
    "update_times", [], "NAME=FILE,...: bench.train_throughput JSON files (one preset each), timed in one sitting "
    "on a machine with nothing else running; their median step seconds are reported as updates/min per NAME.")

# Flags that say where and for how long a run went, not how it learns.
_NOT_SETTINGS = ("model_dir", "data_dir", "train_steps", "max_hours", "keep_checkpoints", "flagfile")


def _flags(model_dir):
    """{name: value} of a model directory's flags.txt."""
    settings = {}
    for line in pathlib.Path(ModelDir(model_dir).flags_file).read_text().splitlines():
        if line.startswith("--") and "=" in line:
            name, value = line[2:].split("=", 1)
            settings[name] = value
        elif line.startswith("--"):  # a boolean, --name or --noname: kept as written
            settings[line[2:]] = "set"
    return {name: value for name, value in settings.items() if name not in _NOT_SETTINGS}


def _median_updates_per_second(model_dir):
    accumulator = event_accumulator.EventAccumulator(str(model_dir / "train"), size_guidance={"tensors": 0})
    accumulator.Reload()
    if "updates_per_second" not in accumulator.Tags()["tensors"]:
        return None
    rates = [float(tf.make_ndarray(event.tensor_proto)) for event in accumulator.Tensors("updates_per_second")]
    return statistics.median(rates)


def _tests(model_dir, test_set):
    """{step: BLEU} of the checkpoints evaluated under eval_<test_set>/ckpt-N."""
    results = {}
    for metrics_file in sorted((model_dir / f"eval_{test_set}").glob("ckpt-*/metrics.json")):
        metrics = next(iter(json.loads(metrics_file.read_text())["models"].values()))
        results[int(metrics_file.parent.name.removeprefix("ckpt-"))] = round(metrics["bleu"], 2)
    return dict(sorted(results.items()))


def trial(model_dir, baseline_flags, test_set):
    """One trial's settings (against the baseline), dev and test curves and speed."""
    model_dir = pathlib.Path(model_dir)
    settings = _flags(model_dir)
    history = ModelDir(model_dir).read_training_state()["history"]
    tests = _tests(model_dir, test_set)
    last = history[-1]
    per_second = _median_updates_per_second(model_dir)
    return {
        "model_dir": str(model_dir),
        "settings": {name: value for name, value in settings.items() if baseline_flags.get(name) != value},
        "curve": [
            {"step": entry["step"], "minutes": round(entry["hours"] * 60, 2), "epoch": round(entry["epoch"], 2),
             "dev_bleu": round(entry["dev_bleu"], 2), test_set: tests.get(entry["step"])}
            for entry in history
        ],
        "updates_per_minute_with_validation": round(last["step"] / (last["hours"] * 60), 1),
        "updates_per_minute_training": per_second and round(per_second * 60, 1),
    }


def _update_times(entries):
    """{NAME: {batch_size, median_step_seconds, updates_per_minute}} of [(NAME, FILE)]; NAME repeated: one round
    each."""
    times = {}
    for name, path in entries:
        report = json.loads(pathlib.Path(path).read_text())
        times.setdefault(name, []).append(report)
    return {
        name: {
            "batch_size": reports[0]["settings"]["batch_size"],
            "median_step_seconds": [report["median_step_seconds"] for report in reports],
            "updates_per_minute": round(60 / statistics.median(r["median_step_seconds"] for r in reports), 1),
        }
        for name, reports in times.items()
    }


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    trials = dict(_TRIALS.value)
    if _BASELINE.value not in trials:
        raise app.UsageError(f"--baseline={_BASELINE.value} is none of the --trials: {', '.join(trials)}")
    baseline_flags = _flags(pathlib.Path(trials[_BASELINE.value]))
    report = {
        "baseline": _BASELINE.value,
        "baseline_flags": baseline_flags,
        "test_set": _TEST_SET.value,
        "trials": {name: trial(model_dir, baseline_flags, _TEST_SET.value) for name, model_dir in trials.items()},
        "update_times": _update_times(_UPDATE_TIMES.value),
        "provenance": provenance(),
    }
    return report


if __name__ == "__main__":
    run_report(main)
