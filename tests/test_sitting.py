"""bench.sitting: one CPU kind's benches in one sitting, each file written with its note once its bench succeeded."""

import json
import os
import pathlib
import subprocess
import sys

import pytest
from absl import app

from bench.peer import PEER_VENV
from bench.sitting import STEPS, bench_runs, missing_prerequisites, prepare, run_bench

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]


def _flag(argv, name):
    return next(arg.split("=", 1)[1] for arg in argv if arg.startswith(f"--{name}="))


def test_the_sitting_runs_the_benches_of_one_cpu_kinds_tables_in_order(tmp_path):
    runs = bench_runs("xeon_amx", tmp_path / "work", tmp_path / "results", "data/m30k", updates=300)
    files = [file.name for file, _ in runs if file]
    assert files == ["peer_comparison_xeon_amx.json", "peer_comparison_xeon_amx_bf16.json",
                     "command_latency_xeon_amx.json", "profile_xeon_amx.json", "profile_xeon_amx_bf16.json"]
    (_, float32), (_, auto), (_, shortlist), (_, commands), (_, profile), (_, profile_bf16) = runs
    assert "--precision=float32" in float32 and "--precision=auto" in auto and "--reuse" in auto
    assert _flag(float32, "workdir") != _flag(auto, "workdir")
    assert _flag(float32, "updates") == _flag(auto, "updates") == "300"
    # The whole commands translate with the float32 sitting's models, over the shortlist built from its model.
    assert _flag(shortlist, "model_dir") == str(tmp_path / "work" / "float32" / "ours")
    assert _flag(commands, "workdir") == _flag(float32, "workdir") and "--shortlist" in commands
    assert "--peer" in profile and "--step_precision=mixed_bfloat16" in profile_bf16


def test_steps_can_be_run_alone_and_keep_the_sittings_order(tmp_path):
    runs = bench_runs("epyc_bf16", tmp_path, tmp_path, "data", steps=["profile"], profile_calls=4)
    assert [file.name for file, _ in runs] == ["profile_epyc_bf16.json", "profile_epyc_bf16_bf16.json"]
    assert all("--timed_calls=4" in argv for _, argv in runs)
    assert STEPS.index("float32") < STEPS.index("auto") < STEPS.index("commands")


def test_without_fast_bf16_products_the_sitting_measures_float32_only(tmp_path):
    runs = bench_runs("epyc_avx2", tmp_path, tmp_path, "data", bf16=False)
    assert [file.name for file, _ in runs if file] == [
        "peer_comparison_epyc_avx2.json", "command_latency_epyc_avx2.json", "profile_epyc_avx2.json"]
    arguments = [arg for _, argv in runs for arg in argv]
    assert "--precision=auto" not in arguments and "--step_precision=mixed_bfloat16" not in arguments


def test_the_auto_run_starts_from_a_copy_of_the_float32_runs_peer(tmp_path):
    (_, float32), (_, auto) = bench_runs("x", tmp_path, tmp_path, "data", steps=["float32", "auto"])
    with pytest.raises(app.UsageError, match="no finished peer run"):
        prepare(tmp_path, auto)
    peer = tmp_path / "float32" / "peer"
    peer.mkdir(parents=True)
    (peer / "report.txt").write_text("train_tgt_tok_per_s 1619\n")
    stale = tmp_path / "auto" / "ours" / "checkpoint"
    stale.parent.mkdir(parents=True)
    stale.write_text("an earlier sitting's training")
    prepare(tmp_path, auto)
    assert (tmp_path / "auto" / "peer" / "report.txt").read_text() == "train_tgt_tok_per_s 1619\n"
    assert not stale.exists(), "our model of an earlier sitting would be reused"
    prepare(tmp_path, float32)
    assert not peer.exists(), "a float32 run starts from an empty directory"


def test_what_the_sitting_needs_is_named_with_the_command_that_makes_it(tmp_path):
    missing = missing_prerequisites(tmp_path / "multi30k", peer_venv=tmp_path / "peer")
    assert len(missing) == 2
    assert "rnnsearch build-data --flagfile=configs/data/multi30k.flags" in missing[0] and "install.sh" in missing[1]
    (tmp_path / "multi30k").mkdir()
    (tmp_path / "multi30k" / "metadata.json").write_text("{}")
    (tmp_path / "peer" / "bin").mkdir(parents=True)
    (tmp_path / "peer" / "bin" / "python").write_text("")
    assert missing_prerequisites(tmp_path / "multi30k", peer_venv=tmp_path / "peer") == []


def _command(code):
    return [sys.executable, "-c", code]


def test_a_benchs_json_is_written_with_the_sittings_note(tmp_path):
    file = tmp_path / "results" / "profile_x.json"
    run_bench(file, _command("import json; print(json.dumps({'provenance': {'commit': 'c'}, 'ms': 503.0}))"),
              "the sitting of today")
    report = json.loads(file.read_text(encoding="utf-8"))
    assert report["ms"] == 503.0 and report["provenance"]["commit"] == "c"
    assert report["provenance"]["note"].startswith("the sitting of today; this bench ")


def test_a_failing_bench_stops_the_sitting_and_leaves_the_earlier_file(tmp_path):
    file = tmp_path / "profile_x.json"
    file.write_text('{"an earlier": "sitting"}\n')
    with pytest.raises(SystemExit, match="failed with status 3.*left as it was"):
        run_bench(file, _command("print('{\"partial\": 1}'); raise SystemExit(3)"), "sitting")
    assert json.loads(file.read_text()) == {"an earlier": "sitting"}


@pytest.fixture
def multi30k(tmp_path, data_root):
    """Multi30k En-Fr built as the peer comparison reads it (about 10 s)."""
    subprocess.run([sys.executable, "-m", "rnnsearch_tf.cli.main", "build-data",
                    "--flagfile=configs/data/multi30k.flags", f"--output_dir={tmp_path / 'multi30k'}"],
                   cwd=REPO_ROOT, check=True, env=dict(os.environ, RNNSEARCH_DATA=str(data_root)))
    return tmp_path / "multi30k"


@pytest.mark.large
@pytest.mark.skipif(not PEER_VENV.exists(), reason="the peer is not installed (bash ../shared/peer/install.sh)")
def test_a_short_sitting_writes_every_file_with_both_systems_ratios(tmp_path, multi30k):
    command = [sys.executable, "-m", "bench.sitting", "--name=test_kind", f"--workdir={tmp_path / 'work'}",
               f"--output_dir={tmp_path / 'results'}", f"--data_dir={multi30k}", "--updates=30",
               "--log_every=10", "--decode_rounds=1", "--command_rounds=1", "--profile_calls=2"]
    subprocess.run(command, cwd=REPO_ROOT, check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    results = {path.name: json.loads(path.read_text()) for path in (tmp_path / "results").iterdir()}
    assert sorted(results) == sorted(["peer_comparison_test_kind.json", "peer_comparison_test_kind_bf16.json",
                                      "command_latency_test_kind.json", "profile_test_kind.json",
                                      "profile_test_kind_bf16.json"])
    for name, report in results.items():
        assert "bench.sitting" in report["provenance"]["note"], name
    float32, auto = results["peer_comparison_test_kind.json"], results["peer_comparison_test_kind_bf16.json"]
    assert float32["ratios_ours_over_peer"]["train_tgt_tok_per_s"] > 0
    assert auto["peer"]["train_tgt_tok_per_s"] == float32["peer"]["train_tgt_tok_per_s"]  # the same peer run
    assert "ours_shortlist" in json.dumps(results["command_latency_test_kind.json"]["cases"])
