"""The quickstart, as a new user runs it, with a shortened training (slow: marked large)."""

import os
import pathlib
import subprocess

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.large
def test_quickstart_runs_every_stage(data_root, tmp_path):
    environment = dict(os.environ, RNNSEARCH_DATA=str(data_root), QUICKSTART_DIR=str(tmp_path),
                       QUICKSTART_TRAIN_STEPS="400")
    result = subprocess.run(["bash", "scripts/quickstart.sh"], cwd=REPO_ROOT, env=environment,
                            capture_output=True, text=True, timeout=3000)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    data = tmp_path / "data" / "multi30k"
    assert len(list(data.glob("train-*.tfrecord.gz"))) == 4 and (data / "metadata.json").exists()
    model = tmp_path / "quickstart"
    assert (model / "checkpoints" / "ckpt-400.index").exists() and (model / "best" / "ckpt-400.index").exists()
    assert list((model / "train").glob("events.out.tfevents.*")) and list((model / "dev").glob("events.out.tfevents.*"))
    assert (tmp_path / "exports" / "rnnsearch" / "1" / "saved_model.pb").exists() and (model / "shortlist.npz").exists()
    served = result.stdout.split("==> 6/7")[1].split("Attention:")[0].strip().splitlines()[1:]
    # translation<TAB>score; 400 updates are enough for a model to say something
    assert len(served) == 3 and all(line.split("\t")[0].strip() for line in served), served
    assert result.stdout.count(" <- ") >= 3  # each target word with its most-attended source word
    assert "quickstart: BLEU" in result.stdout and (model / "eval_test2016" / "report.md").exists()
    assert "shortlist: full vocabulary" in result.stdout  # as the README row it is printed beside
    assert "this run: test_2016 BLEU" in result.stdout and "README row:" in result.stdout
    assert "tensorboard --logdir" in result.stdout
    assert "rnnsearch serve" in result.stdout and "http://127.0.0.1:8501/" in result.stdout  # the page
