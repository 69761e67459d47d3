"""bench.provenance: what a results file records of its commit, machine and command, and how a report is written."""

import json
import os
import pathlib
import shlex
import subprocess
import sys

import pytest

from bench.provenance import REPO_ROOT, command_line, cpu, cpu_kind, cpu_summary, emit, provenance, uncommitted_changes


def test_provenance_names_the_commit_and_the_machine():
    record = provenance()
    assert len(record["commit"]) == 40 and isinstance(record["dirty"], bool)
    assert record["cores"] >= 1 and record["date"].endswith("+00:00")
    assert record["command"] == command_line() and record["command"].endswith(shlex.join(sys.argv[1:]))


def test_only_changes_outside_the_results_files_make_a_checkout_dirty(tmp_path):
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "peer_comparison_x.json").write_text("{}\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "a sitting's start")
    assert not uncommitted_changes(tmp_path)
    (tmp_path / "bench" / "results" / "peer_comparison_x.json").write_text('{"written": "by the sitting"}\n')
    assert not uncommitted_changes(tmp_path), "a results file written earlier in the sitting is not a code change"
    (tmp_path / "code.py").write_text("x = 2\n")
    assert uncommitted_changes(tmp_path)


def test_the_cpu_summary_reads_the_cpu_flags_of_proc_cpuinfo():
    summary, (model, flags) = cpu_summary(), cpu()
    assert summary["model"] == model == provenance()["cpu"]
    cpuinfo = pathlib.Path("/proc/cpuinfo")
    listed = set(cpuinfo.read_text().split()) if cpuinfo.exists() else set()
    assert summary["avx512_bf16"] == ("avx512_bf16" in listed) == ("avx512_bf16" in flags)
    assert summary["amx"] == ("amx_bf16" in listed)


def test_a_cpu_kind_is_named_by_its_vendor_and_its_fastest_matmuls():
    assert cpu_kind("Intel(R) Xeon(R) Platinum 8481C", ["avx2", "avx512f", "avx512_bf16", "amx_bf16"]) == "xeon_amx"
    assert cpu_kind("Intel(R) Xeon(R) Platinum 8581C", ["avx2", "avx512f", "avx512_bf16"]) == "xeon_bf16"
    assert cpu_kind("AMD EPYC", ["avx2", "avx512f", "avx512_bf16", "avx512_vnni"]) == "epyc_bf16"
    assert cpu_kind("AMD EPYC 7B12", ["avx2"]) == "epyc_avx2"
    assert cpu_kind("Intel(R) Xeon(R) CPU @ 2.50GHz", ["avx2", "avx512f"]) == "xeon_avx512"
    assert cpu_kind("unknown", []) == "cpu_baseline"
    model, flags = cpu()
    assert cpu_kind() == cpu_kind(model, flags)


def test_emit_prints_the_report_and_writes_it_where_asked(tmp_path, capsys):
    report = {"name": "Tromsø", "value": 1.5}
    emit(report, tmp_path / "results" / "bench.json")
    assert json.loads(capsys.readouterr().out) == report
    assert json.loads((tmp_path / "results" / "bench.json").read_text(encoding="utf-8")) == report
    emit(report)
    assert "Tromsø" in capsys.readouterr().out


# A bench as `bench.provenance.run_report` runs one: `main` returns the report, or raises a user's error.
_TINY_BENCH = """
from absl import flags
from bench.provenance import provenance, run_report

_FAIL = flags.DEFINE_string("fail", None, "Raise ValueError with this message.")


def main(argv):
    if _FAIL.value:
        raise ValueError(_FAIL.value)
    return {"provenance": provenance(), "name": "Tromsø"}


if __name__ == "__main__":
    run_report(main)
"""


def _run_bench(module, *args, cwd):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=os.pathsep.join([str(cwd), str(REPO_ROOT)]))
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=environment, capture_output=True,
                          text=True, timeout=600)


def test_a_bench_prints_its_report_writes_it_to_output_and_records_its_command_line(tmp_path):
    (tmp_path / "tiny_bench.py").write_text(_TINY_BENCH, encoding="utf-8")
    output = tmp_path / "results" / "tiny.json"
    result = _run_bench("tiny_bench", f"--output={output}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(output.read_text(encoding="utf-8"))
    assert json.loads(result.stdout) == report and report["name"] == "Tromsø"
    assert report["provenance"]["command"] == f"python -m tiny_bench --output={output}"
    printed = _run_bench("tiny_bench", cwd=tmp_path)
    assert json.loads(printed.stdout)["provenance"]["command"] == "python -m tiny_bench"


@pytest.mark.parametrize("arguments, error", [
    (["--fail=the model folder is missing"], "error: the model folder is missing"),
    (["--no_such_flag=1"], "error: Unknown command line flag 'no_such_flag' (--help lists the flags)"),
])
def test_a_failing_bench_leaves_its_output_file_as_it_was_and_says_why_in_one_line(tmp_path, arguments, error):
    (tmp_path / "tiny_bench.py").write_text(_TINY_BENCH, encoding="utf-8")
    output = tmp_path / "tiny.json"
    output.write_text('{"measured": "before"}\n', encoding="utf-8")
    result = _run_bench("tiny_bench", *arguments, f"--output={output}", cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip().splitlines()[-1] == error and "Traceback" not in result.stderr
    assert output.read_text(encoding="utf-8") == '{"measured": "before"}\n'


@pytest.mark.large  # a real bench's process (TensorFlow imported); its parts are the tests above
def test_a_real_bench_that_fails_leaves_the_committed_results_file_as_it_was(tmp_path):
    """bench.search_sweep with a --data_dir that is not one: the review's case, where `> FILE` left FILE empty."""
    output = tmp_path / "search_sweep.json"
    output.write_bytes((REPO_ROOT / "bench" / "results" / "search_sweep.json").read_bytes())
    result = _run_bench("bench.search_sweep", f"--model_dir={tmp_path}", f"--data_dir={tmp_path / 'missing'}",
                        f"--output={output}", cwd=REPO_ROOT)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith(f"error: flag --data_dir={tmp_path / 'missing'}: ")
    assert output.read_bytes() == (REPO_ROOT / "bench" / "results" / "search_sweep.json").read_bytes()


# Commands of bench/ that write no JSON report of their own: the sitting writes the files of the benches it runs
# (each once it has succeeded), its tables are Markdown, and the peer's profiler runs in the peer's virtualenv.
_NO_REPORT = {"sitting", "sitting_tables", "peer_profile"}


def test_every_bench_that_reports_writes_its_report_through_run_report():
    """One rule for every results file: printed, and written to --output only once the bench has succeeded."""
    commands = {path.stem: path.read_text(encoding="utf-8") for path in (REPO_ROOT / "bench").glob("*.py")
                if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")}
    assert _NO_REPORT <= set(commands)
    assert [name for name, text in sorted(commands.items())
            if name not in _NO_REPORT and "    run_report(main)\n" not in text] == []
