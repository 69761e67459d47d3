r"""Whole commands as a user waits for them: ours beside the peer's, one sentence and a test set.

    RNNSEARCH_DATA=../shared/data python -m bench.command_latency --workdir=work_dirs/peer_comparison \
        --output=bench/results/command_latency.json

`--workdir` is a `bench.peer_comparison` workdir: `peer/` (the peer's trained model and its report) and
`ours/` (our model directory at the peer's size). Each case is a whole process, from its start to its
exit, run `--rounds` times with the cases interleaved (this machine's speed drifts within minutes);
each figure is the median, with every round and the peak resident memory in the JSON:

- `one_sentence`: the first sentence of test_2016_flickr; `test_set`: its 1000 sentences (batches of
  80). Ours: `rnnsearch translate --model_dir` on the raw text; the peer: `onmt_translate` on the
  Moses-tokenized text (its bench tokenizes beforehand). Both beam 5 with the peer's length
  normalisation and bound (1.25 x source + 5).
- `client_one_sentence`: `rnnsearch client --rest_url` of one sentence while `rnnsearch serve` runs an
  export of our model (written under the workdir once): a client that imports no TensorFlow.
- `ours` decodes over the whole vocabulary (`--noshortlist`); with `--shortlist`, our two translate cases
  again with `--shortlist` (`ours_shortlist`: what a plain `translate` does once the model directory has
  a shortlist); `--variants=NAME=FLAGS` adds them again with other flags (`ours_NAME`: bf16, int8).
- Our translate keeps its traced search in a `--function_cache` folder of this run: the rounds time what
  every command after the first does (it loads the search); `first_run_s` is one run of each of our
  cases beforehand with that folder empty (it traces the search and writes it), once per case.

Prints one JSON object with the provenance of this checkout and machine.
"""

import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app, flags

from bench.peer import PEER_VENV, peer_environment, peer_translate_argv, read_peer_report
from bench.bench_flags import define_named_list
from bench.provenance import provenance, run_report
from bench.served_model import ServedModel

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
RNNSEARCH = [sys.executable, "-m", "rnnsearch_tf.cli.main"]
# The peer's search (its bench's settings), for ours.
PEER_SEARCH = ["--beam_size=5", "--length_normalization=length", "--maximum_length_a=1.25", "--maximum_length_b=5"]

_WORKDIR = flags.DEFINE_string("workdir", "work_dirs/peer_comparison", "A bench.peer_comparison workdir.")
_DATA_DIR = flags.DEFINE_string("data_dir", "work_dirs/data/multi30k", "Our built Multi30k En-Fr.")
_ROUNDS = flags.DEFINE_integer("rounds", 3, "Runs of every case, interleaved.", lower_bound=1)
_CLIENT = flags.DEFINE_boolean("client", True, "Also time the REST client against `rnnsearch serve`.")
_SHORTLIST = flags.DEFINE_boolean(
    "shortlist", False, "Also time our translate with --shortlist (run `rnnsearch shortlist` on ours/ first)."
)
_VARIANTS = define_named_list(
    "variants", [], "NAME=FLAG[+FLAG...] entries: our two translate cases again with these flags as `ours_NAME`, "
    "e.g. bf16=--precision=mixed_bfloat16+--shortlist,int8=--quantize=int8+--shortlist."
)


def timed(command, env=None):
    """Runs `command` to its end: (wall seconds, peak resident MiB of the process)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed: {stderr.decode(errors='replace')[-2000:]}")
    return seconds, usage.ru_maxrss / 1024


def cases(workdir, report, scratch):
    """{case: {system: (command, environment)}}."""
    data_dir = pathlib.Path(_DATA_DIR.value).resolve()
    peer_dir, our_dir = workdir / "peer", workdir / "ours"
    peer_source = pathlib.Path(report["config"]["src_test"])
    (scratch / "one.tok.en").write_text(peer_source.read_text(encoding="utf-8").splitlines()[0] + "\n")
    raw = (data_dir / "test.source.txt").read_text(encoding="utf-8").splitlines()
    (scratch / "one.en").write_text(raw[0] + "\n")
    onmt = [str(PEER_VENV / "bin" / "onmt_translate")]
    ours = [*RNNSEARCH, "translate", f"--model_dir={our_dir}", "--checkpoint=latest", "--batch_size=80",
            "--output=/dev/null", "--noprogress", f"--function_cache={scratch / 'functions'}", *PEER_SEARCH]
    plan = {
        "one_sentence": {
            "peer": ([*onmt, *peer_translate_argv(peer_dir, report, scratch / "one.tok.en", "/dev/null")],
                     peer_environment(report)),
            "ours": ([*ours, "--noshortlist", f"--input={scratch / 'one.en'}"], None),
        },
        "test_set": {
            "peer": ([*onmt, *peer_translate_argv(peer_dir, report, peer_source, "/dev/null")],
                     peer_environment(report)),
            "ours": ([*ours, "--noshortlist", f"--input={data_dir / 'test.source.txt'}"], None),
        },
    }
    variants = dict(_VARIANTS.value)
    if _SHORTLIST.value:
        variants["shortlist"] = "--shortlist"
    for case in plan.values():
        for name, extra in variants.items():
            # After --noshortlist: absl keeps a flag's last value.
            case[f"ours_{name}"] = ([*case["ours"][0], *extra.split("+")], None)
    return plan


def first_run_seconds(plan, scratch):
    """{(case, system): seconds} of each of our translate cases run once with an empty function cache
    (a folder of its own), whose file then joins the rounds' folder (`scratch/functions`)."""
    seconds = {}
    for case, systems in plan.items():
        for system, (command, env) in systems.items():
            if not system.startswith("ours"):
                continue
            folder = scratch / f"first-{case}-{system}"
            seconds[case, system] = round(timed(
                [f"--function_cache={folder}" if arg.startswith("--function_cache=") else arg for arg in command], env
            )[0], 2)
            shutil.copytree(folder, scratch / "functions", dirs_exist_ok=True)
    return seconds


def client_case(workdir, scratch):
    """The REST client's case, and the server process to stop afterwards."""
    export_dir = workdir / "ours_export"
    if not export_dir.exists():
        subprocess.run([*RNNSEARCH, "export", f"--model_dir={workdir / 'ours'}", "--checkpoint=latest",
                        f"--export_dir={export_dir}", *PEER_SEARCH], check=True, cwd=REPO_ROOT, capture_output=True)
    server = ServedModel(export_dir)
    sentence = (scratch / "one.en").read_text(encoding="utf-8").strip()
    return {"ours": ([*RNNSEARCH, "client", f"--rest_url={server.rest_url}", sentence], None)}, server


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    workdir = pathlib.Path(_WORKDIR.value).resolve()
    report = read_peer_report(workdir / "peer")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        plan, server = cases(workdir, report, scratch), None
        first_runs = first_run_seconds(plan, scratch)
        if _CLIENT.value:
            plan["client_one_sentence"], server = client_case(workdir, scratch)
        runs = {case: {system: [] for system in systems} for case, systems in plan.items()}
        try:
            for _ in range(_ROUNDS.value):
                for case, systems in plan.items():
                    for system, (command, env) in systems.items():
                        runs[case][system].append(timed(command, env))
        finally:
            if server is not None:
                server.stop()
    results = {}
    for case, systems in runs.items():
        results[case] = {
            system: dict(wall_s=round(statistics.median(s for s, _ in rounds), 2),
                         wall_s_rounds=[round(s, 2) for s, _ in rounds],
                         peak_mib=round(max(m for _, m in rounds)))
            for system, rounds in systems.items()
        }
        for system in results[case]:
            if (case, system) in first_runs:
                results[case][system]["first_run_s"] = first_runs[case, system]
        if "peer" in results[case]:
            for system in [name for name in results[case] if name.startswith("ours")]:
                results[case][f"ratio_{system}_over_peer"] = round(
                    results[case][system]["wall_s"] / results[case]["peer"]["wall_s"], 2)
    return dict(provenance=provenance(), rounds=_ROUNDS.value, cases=results)


if __name__ == "__main__":
    run_report(main)
