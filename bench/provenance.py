"""What a benchmark result was measured on: the commit, the date, the CPU and its flags.

Every bench writes `provenance()` into its JSON, so a results file says which code and which machine
its numbers belong to (machines of one kind differ by 2x in speed; a ratio counts only within one sitting).
"""

import datetime
import json
import os
import pathlib
import subprocess

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


def provenance():
    """{"commit", "dirty", "date", "cpu", "cpu_flags", "cores"} of this checkout and machine, now."""
    model, flags = cpu()
    return dict(
        commit=_git("rev-parse", "HEAD").strip() or "unknown",
        dirty=uncommitted_changes(),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        cpu=model,
        cpu_flags=flags,
        cores=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
    )


def emit(report, output=None):
    """Prints a bench's JSON report, and writes it to `output` too when given (its folder made)."""
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if output:
        pathlib.Path(output).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(output).write_text(text + "\n", encoding="utf-8")
