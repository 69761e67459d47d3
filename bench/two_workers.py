"""Training on one machine as one process, as one process of two CPU replicas, and as two worker processes.

    python -m bench.two_workers --data_dir=work_dirs/data/multi30k --output=bench/results/two_workers.json

(`scripts/quickstart.sh` builds work_dirs/data/multi30k; run it with -m from the repository root.)

Not a speed claim: two workers on one 2-core machine share its cores, so the run shows what the collective
ops of `MultiWorkerMirroredStrategy` (gRPC on 127.0.0.1, the coordination service) cost beside the
in-process all-reduce of `--cpu_replicas=2`, at the same global batch. Each run is `python -m
rnnsearch_tf.train` with the quickstart model (configs/quickstart.flags) for `--steps` updates, no
validation; the rate is the median of the chief's logged sentences/s (global: every worker's sentences)
over the windows of `--log_every` updates after the first (which traces the update), and `seconds` is the
whole command's wall time (for two workers, until both ended).
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app
from absl import flags

from bench.provenance import REPO_ROOT, provenance, run_report
from bench.served_model import free_port

_DATA_DIR = flags.DEFINE_string("data_dir", "work_dirs/data/multi30k", "A built Multi30k data directory.")
_STEPS = flags.DEFINE_integer("steps", 300, "Updates per run.")
_LOG_EVERY = flags.DEFINE_integer("log_every", 50, "Updates per logged window.")

_RATE = re.compile(r"\| ([\d.]+) sentences/s \|")


def _command(model_dir, extra):
    return [sys.executable, "-m", "rnnsearch_tf.train", "--flagfile=configs/quickstart.flags",
            f"--data_dir={_DATA_DIR.value}", f"--model_dir={model_dir}", f"--train_steps={_STEPS.value}",
            f"--log_every={_LOG_EVERY.value}", "--validate_every=0", f"--checkpoint_every={_STEPS.value}",
            "--max_hours=10", *extra]


def _run(name, folder, extra=(), workers=1):
    """Runs one configuration; returns its result dict."""
    model_dir = os.path.join(folder, name)
    cluster = {"worker": [f"127.0.0.1:{free_port()}" for _ in range(workers)]}
    processes, started = [], time.monotonic()
    for index in range(workers):
        environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        if workers > 1:
            environment["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})
        processes.append(subprocess.Popen(_command(model_dir, extra), cwd=REPO_ROOT, env=environment,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    outputs = [process.communicate()[1] for process in processes]
    seconds = time.monotonic() - started
    for process, stderr in zip(processes, outputs):
        if process.returncode:
            raise RuntimeError(f"{name} failed:\n{stderr[-3000:]}")
    rates = [float(rate) for rate in _RATE.findall(outputs[0])][1:]  # the first window traces the update
    return {"processes": workers, "flags": list(extra), "seconds": round(seconds, 1),
            "sentences_per_second": round(statistics.median(rates), 1), "windows": len(rates)}


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    with tempfile.TemporaryDirectory() as folder:
        runs = {
            "one_process": _run("one_process", folder),
            "one_process_two_cpu_replicas": _run("replicas", folder, ["--cpu_replicas=2"]),
            "two_worker_processes": _run("workers", folder, workers=2),
        }
    single = runs["one_process"]["sentences_per_second"]
    for result in runs.values():
        result["rate_against_one_process"] = round(result["sentences_per_second"] / single, 2)
    return {"provenance": provenance(), "data_dir": _DATA_DIR.value, "steps": _STEPS.value,
            "model": "configs/quickstart.flags (batch 96)", "runs": runs}


if __name__ == "__main__":
    run_report(main)
