"""What a benchmark result was measured on (the commit, the date, the CPU and its flags, the command line), and
how a bench writes it.

Every bench writes `provenance()` into its JSON, so a results file says which code, which machine and which command
made its numbers (machines of one kind differ by 2x in speed; a ratio counts only within one sitting). Every bench
runs as a command through `run_report`: its report printed, and written to `--output` only once the bench has
succeeded.
"""

import datetime
import json
import os
import pathlib
import shlex
import subprocess
import sys

from absl import app
from absl import flags as absl_flags  # `flags` here are the CPU's

from rnnsearch_tf.cli.errors import parse_flags, with_one_line_errors

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
# The CPU features that decide which kernels TensorFlow and PyTorch run.
CPU_FLAGS = ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "avx512_vnni", "avx_vnni", "amx_bf16", "amx_int8",
             "amx_tile")


def _git(*args, root=REPO_ROOT):
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""


def uncommitted_changes(root=REPO_ROOT):
    """Whether tracked files differ from the commit, results files aside: those a sitting wrote before this bench
    do not change the code it measures."""
    return bool(_git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/results", root=root).strip())


def cpu():
    """(model name, the flags of CPU_FLAGS it has) from /proc/cpuinfo; ("unknown", []) elsewhere."""
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown", []
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    fields = {key.strip(): value.strip() for key, value in fields.items()}
    flags = set(fields.get("flags", "").split())
    return fields.get("model name", "unknown"), [flag for flag in CPU_FLAGS if flag in flags]


def cpu_summary():
    """{"model", "cores", "avx512_bf16", "amx"}: the "cpu" block the peer comparison and results summaries keep."""
    model, flags = cpu()
    return {"model": model, "cores": os.cpu_count(), "avx512_bf16": "avx512_bf16" in flags, "amx": "amx_bf16" in flags}


def cpu_kind(model=None, flags=None):
    """A short name of a CPU's kind for results files: the vendor's server family and its fastest matmuls
    (`xeon_amx`, `xeon_bf16`, `epyc_bf16`, `epyc_avx512`, `epyc_avx2`, ...); this machine's by default."""
    if model is None:
        model, flags = cpu()
    family = "xeon" if "intel" in model.lower() else "epyc" if "amd" in model.lower() else "cpu"
    matmuls = next((name for flag, name in (("amx_bf16", "amx"), ("avx512_bf16", "bf16"), ("avx512f", "avx512"),
                                            ("avx2", "avx2")) if flag in flags), "baseline")
    return f"{family}_{matmuls}"


def command_line():
    """`python -m MODULE FLAGS...` of this process (`sys.argv`): how a bench's file was made."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    program = ["python", "-m", spec.name] if spec and spec.name else sys.argv[:1]
    return shlex.join([*program, *sys.argv[1:]])


def provenance():
    """{"commit", "dirty", "date", "cpu", "cpu_flags", "cores", "command"} of this checkout, machine and process."""
    model, flags = cpu()
    return dict(
        commit=_git("rev-parse", "HEAD").strip() or "unknown",
        dirty=uncommitted_changes(),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        cpu=model,
        cpu_flags=flags,
        cores=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        command=command_line(),
    )


def emit(report, output=None):
    """Prints a bench's JSON report, and writes it to `output` too when given (its folder made)."""
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if output:
        pathlib.Path(output).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(output).write_text(text + "\n", encoding="utf-8")


def run_report(main):
    """Runs a bench's `main(argv)`, which returns its JSON report, as the command (`absl.app.run`): the report is
    printed and, with `--output=FILE`, written there only once `main` has returned, so a failing bench leaves the
    file as it was (a shell's `> FILE` would have emptied it first). A bad flag or input ends it in one `error: ...`
    line (`rnnsearch_tf.cli.errors`); a `main` that returns None (a helper mode whose caller reads its stdout)
    writes nothing."""
    output = absl_flags.DEFINE_string(
        "output", None, "Also write the JSON report to this file, once the bench has succeeded (it is always printed).")

    def main_and_emit(argv):
        report = main(argv)
        if report is not None:
            emit(report, output.value)

    app.run(with_one_line_errors(main_and_emit), flags_parser=parse_flags)
