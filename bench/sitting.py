r"""One sitting beside the peer on this CPU: every results file of one CPU kind's tables in docs/performance.md.

    RNNSEARCH_DATA=../shared/data python -m bench.sitting      # named by this CPU: xeon_amx, epyc_bf16, ...

A ratio to the peer counts only between runs of one sitting on one machine (machines of one kind differ by 2x,
one machine drifts by tens of percent within an hour), so a CPU kind's numbers are measured together, one bench
after the other, nothing else running (install the peer first: `bash ../shared/peer/install.sh`):

1. `float32`: `bench.peer_comparison --precision=float32` (both systems trained `--updates` updates, then
   `--decode_rounds` rounds of decoding) -> `peer_comparison_NAME.json`.
2. `auto`: the same with `--precision=auto` (bf16 where this CPU's bf16 products are faster than float32), the
   peer's training of step 1 reused and its decoding timed again in the rounds -> `peer_comparison_NAME_bf16.json`.
3. `commands`: `rnnsearch shortlist` of step 1's model, then `bench.command_latency --shortlist` on step 1's two
   models with bf16 and int8 weights as variants -> `command_latency_NAME.json`.
4. `profile`: `bench.profile_step --peer`, then `--step_precision=mixed_bfloat16` -> `profile_NAME.json`,
   `profile_NAME_bf16.json`.

Where `--precision=auto` takes float32 (this CPU's bf16 products are not faster), step 2 and the bf16 profile are
left out: they would measure float32 again, or bf16 where no one would use it. NAME is `--name`, by default this
CPU's kind (`provenance.cpu_kind`). A bench's JSON replaces the file in
`--output_dir` only once the bench has succeeded, with a provenance note naming the sitting, its times and the
command; a failing bench stops the sitting and leaves the earlier files in place. `python -m bench.sitting_tables`
then prints (and with `--write` puts in place) the tables of docs/performance.md and the README cells that show the
files; the prose around them is written by hand.
"""

import datetime
import json
import pathlib
import shutil
import subprocess
import sys

from absl import app, flags

from bench.peer import PEER, PEER_VENV
from bench.provenance import cpu_kind
from rnnsearch_tf.cli.errors import parse_flags, with_one_line_errors
from data_pipeline.constants import METADATA_FILE

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
STEPS = ("float32", "auto", "commands", "profile")
# Our translate again with other weights (`bench.command_latency --variants`), each over the shortlist.
COMMAND_VARIANTS = ("bf16=--precision=mixed_bfloat16+--shortlist,int8=--quantize=int8+--shortlist,"
                    "int8_bf16=--precision=mixed_bfloat16+--quantize=int8+--shortlist")


def bench_runs(name, workdir, output_dir, data_dir, steps=STEPS, updates=300, log_every=50, decode_rounds=3,
               command_rounds=5, profile_calls=None, bf16=True):
    """[(results file, argv)] of the sitting's benches in order, those in bf16 only if `bf16`; an argv whose file is
    None writes none."""
    python = [sys.executable, "-m"]
    float32_dir, auto_dir = workdir / "float32", workdir / "auto"
    comparison = [f"--updates={updates}", f"--log_every={log_every}", f"--decode_rounds={decode_rounds}",
                  f"--data_dir={data_dir}"]
    profile = [f"--timed_calls={profile_calls}"] if profile_calls else []
    runs = {
        "float32": [(f"peer_comparison_{name}.json", python + [
            "bench.peer_comparison", "--precision=float32", f"--workdir={float32_dir}", *comparison])],
        "auto": [(f"peer_comparison_{name}_bf16.json", python + [
            "bench.peer_comparison", "--precision=auto", "--reuse", f"--workdir={auto_dir}", *comparison])],
        "commands": [
            (None, python + ["rnnsearch_tf.cli.main", "shortlist", f"--model_dir={float32_dir / 'ours'}"]),
            (f"command_latency_{name}.json", python + [
                "bench.command_latency", f"--workdir={float32_dir}", f"--data_dir={data_dir}", "--shortlist",
                f"--rounds={command_rounds}", f"--variants={COMMAND_VARIANTS}"]),
        ],
        "profile": [(f"profile_{name}.json", python + ["bench.profile_step", "--peer", *profile])],
    }
    if bf16:
        runs["profile"].append((f"profile_{name}_bf16.json", python + [
            "bench.profile_step", "--step_precision=mixed_bfloat16", *profile]))
    else:
        steps = [step for step in steps if step != "auto"]
    return [(file and output_dir / file, argv) for step in steps for file, argv in runs[step]]


def auto_takes_bf16():
    """Whether `--precision=auto` takes bf16 on this machine: its own measurement, in a process of its own."""
    code = "from rnnsearch_tf.utils.precision import dtype_policy; print(dtype_policy('auto'))"
    output = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True, check=True)
    return output.stdout.split()[-1] == "mixed_bfloat16"


def missing_prerequisites(data_dir, peer_venv=PEER_VENV):
    """What the sitting needs and does not find, each with the command that makes it."""
    missing = []
    if not (pathlib.Path(data_dir) / METADATA_FILE).exists():
        missing.append(f"no built Multi30k in {data_dir}: rnnsearch build-data --flagfile=configs/data/multi30k.flags "
                       f"--output_dir={data_dir}")
    if not (pathlib.Path(peer_venv) / "bin" / "python").exists():
        missing.append(f"the peer is not installed in {peer_venv}: bash {PEER / 'install.sh'}")
    return missing


def prepare(workdir, argv):
    """Makes what a bench starts from: a fresh training directory, and for the `auto` run the peer of `float32`."""
    if "bench.peer_comparison" not in argv:
        return
    run_dir = pathlib.Path(next(arg for arg in argv if arg.startswith("--workdir=")).split("=", 1)[1])
    shutil.rmtree(run_dir, ignore_errors=True)
    if "--reuse" in argv:
        peer = workdir / "float32" / "peer"
        if not (peer / "report.txt").exists():
            raise app.UsageError(f"{peer}: no finished peer run to reuse; run the sitting's float32 step first")
        shutil.copytree(peer, run_dir / "peer")


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def run_bench(file, argv, sitting):
    """Runs one bench (its stderr shown) and writes its JSON to `file` with the sitting's note in its provenance."""
    started = _now()
    print(f"[sitting {started:%H:%M} UTC] {' '.join(argv[2:])}", file=sys.stderr, flush=True)
    output = subprocess.run(argv, cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True)
    if output.returncode != 0:
        raise SystemExit(f"bench.sitting: `{' '.join(argv[2:])}` failed with status {output.returncode}; "
                         f"{file or 'nothing'} left as it was")
    if file is None:
        return
    report = json.loads(output.stdout)
    report["provenance"]["note"] = (f"{sitting}; this bench {started:%H:%M}-{_now():%H:%M} UTC: "
                                    f"`python -m {' '.join(argv[2:])}`")
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    missing = missing_prerequisites(REPO_ROOT / _DATA_DIR.value)
    if missing:
        raise app.UsageError("; ".join(missing))
    name = _NAME.value or cpu_kind()
    workdir = pathlib.Path(_WORKDIR.value or f"work_dirs/sitting_{name}").resolve()
    steps = [step for step in STEPS if step in _STEPS.value]
    bf16 = auto_takes_bf16()
    if not bf16:
        print("bench.sitting: --precision=auto takes float32 on this CPU: no bf16 runs", file=sys.stderr)
    runs = bench_runs(name, workdir, pathlib.Path(_OUTPUT_DIR.value), _DATA_DIR.value, steps, _UPDATES.value,
                      _LOG_EVERY.value, _DECODE_ROUNDS.value, _COMMAND_ROUNDS.value, _PROFILE_CALLS.value, bf16)
    sitting = f"`python -m bench.sitting` ({', '.join(steps)}) of {_now():%Y-%m-%d %H:%M} UTC as {name}"
    for file, bench_argv in runs:
        prepare(workdir, bench_argv)
        run_bench(file, bench_argv, sitting)
    print(f"bench.sitting: wrote {', '.join(str(file) for file, _ in runs if file)}; their tables: python -m "
          f"bench.sitting_tables --name={name} --results_dir={_OUTPUT_DIR.value}", file=sys.stderr)


if __name__ == "__main__":
    # Flags only when run as a command: tests import this module beside benches whose flags share names (--step).
    _NAME = flags.DEFINE_string("name", None, "The CPU kind in the files' names (default: provenance.cpu_kind()).")
    _STEPS = flags.DEFINE_multi_enum("step", list(STEPS), STEPS, "The steps to run, in their order.")
    _WORKDIR = flags.DEFINE_string("workdir", None, "Where the models are trained (default: work_dirs/sitting_NAME).")
    _OUTPUT_DIR = flags.DEFINE_string("output_dir", "bench/results", "Where the results files go.")
    _DATA_DIR = flags.DEFINE_string("data_dir", "work_dirs/data/multi30k", "Our built Multi30k En-Fr.")
    _UPDATES = flags.DEFINE_integer("updates", 300, "Training updates of each system.", lower_bound=1)
    _LOG_EVERY = flags.DEFINE_integer("log_every", 50, "Our training statistics window; the first is the warm-up.",
                                      lower_bound=1)
    _DECODE_ROUNDS = flags.DEFINE_integer("decode_rounds", 3, "Decoding rounds of the peer comparison.", lower_bound=1)
    _COMMAND_ROUNDS = flags.DEFINE_integer("command_rounds", 5, "Rounds of every whole command.", lower_bound=1)
    _PROFILE_CALLS = flags.DEFINE_integer("profile_calls", None,
                                          "Timed calls of a profiled step (the bench's default).")
    app.run(with_one_line_errors(main), flags_parser=parse_flags)
