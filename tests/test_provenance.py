"""bench.provenance: what a results file records of its commit and machine, and how a report is written."""

import json
import pathlib
import subprocess

from bench.provenance import cpu, cpu_kind, cpu_summary, emit, provenance, uncommitted_changes


def test_provenance_names_the_commit_and_the_machine():
    record = provenance()
    assert len(record["commit"]) == 40 and isinstance(record["dirty"], bool)
    assert record["cores"] >= 1 and record["date"].endswith("+00:00")


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
