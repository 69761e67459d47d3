"""The quickstart, as a new user runs it, with a shortened training (slow: marked large); its training stage
alone, on the toy corpus with a tiny model, as a user stops it with Ctrl-C or meets an `error:` of the trainer."""

import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / "scripts" / "quickstart.sh"
TINY_RUN = ("--embedding_dim=8", "--hidden_dim=16", "--maxout_dim=8", "--alignment_dim=16", "--batch_size=16",
            "--sort_window=5", "--log_every=1", "--validate_every=0", "--checkpoint_every=1000")


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


def start_training_stage(tmp_path, toy_data, steps, *flags):
    """scripts/quickstart.sh's settings and its training stage (its text from `MODEL_DIR=` to `EXPORT_DIR=`) run
    into `tmp_path` on the toy corpus (as `$OUT/data/multi30k`), `rnnsearch train` given `flags` after the script's
    own (a tiny model), `steps` updates; in a session of its own, as a terminal's foreground job, whose processes all
    get the test's Ctrl-C (`os.killpg`)."""
    text = SCRIPT.read_text()
    settings = text[:text.index('\nsay "1/7')]
    stage = text[text.index("\nMODEL_DIR="):text.index("\nEXPORT_DIR=")]
    rnnsearch = tmp_path / "rnnsearch"
    rnnsearch.write_text(f'#!/bin/bash\nexec {sys.executable} -m rnnsearch_tf.cli.main "$@" {" ".join(flags)}\n')
    rnnsearch.chmod(0o755)
    (tmp_path / "data").mkdir(exist_ok=True)
    if not (tmp_path / "data" / "multi30k").exists():
        (tmp_path / "data" / "multi30k").symlink_to(toy_data)
    script = f"{settings}\nPY={sys.executable}\nRNNSEARCH={rnnsearch}\n{stage}\necho stage done\n"
    environment = dict(os.environ, QUICKSTART_DIR=str(tmp_path), QUICKSTART_TRAIN_STEPS=str(steps))
    # $0 is the script's path: it goes to the repository as the script does.
    return subprocess.Popen(["bash", "-c", script, str(SCRIPT)], env=environment, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def finished(process, interrupt_at=None):
    """`process`'s output once it ended, sending its session Ctrl-C (SIGINT) after the first line `interrupt_at`
    matches; whatever is left of it is killed after."""
    lines = []
    try:
        for line in process.stdout:
            lines.append(line)
            if interrupt_at and re.search(interrupt_at, line):
                os.killpg(process.pid, signal.SIGINT)
                interrupt_at = None
        process.wait(timeout=600)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return "".join(lines)


def newest_checkpoint(model_dir):
    steps = [int(path.name[5:-6]) for path in (model_dir / "checkpoints").glob("ckpt-*.index")]
    return model_dir / "checkpoints" / f"ckpt-{max(steps)}" if steps else None


# Three runs of the stage: `large`. The default suite runs the stage stopped before it saved (below), and the
# trainer's summary of a signal and its resume in-process (tests/test_trainer.py)
@pytest.mark.large
def test_training_stage_says_what_ctrl_c_saved_and_shows_the_trainers_errors(toy_data, tmp_path):
    model_dir = tmp_path / "quickstart"
    # Ctrl-C: the console shows that the training heard it, and names the checkpoint the trainer's summary reports.
    process = start_training_stage(tmp_path, toy_data, 100_000, *TINY_RUN)
    output = finished(process, interrupt_at=r"step 2 \|")
    assert process.returncode == 130, output
    saved = newest_checkpoint(model_dir)
    assert re.search(r"SIGTERM: training stops after this update", output), output
    assert f"training stopped with a checkpoint of its last update, {saved}; run the quickstart again to resume it" \
        in output and "stage done" not in output
    # Run again, it resumes there.
    step = int(saved.name[5:])
    process = start_training_stage(tmp_path, toy_data, step + 1, *TINY_RUN)
    output = finished(process)
    assert process.returncode == 0 and f"step {step + 1} |" in output and "stage done" in output, output
    assert f"Resumed from {saved} at step {step}" in (tmp_path / "train.log").read_text()
    # An `error:` of the trainer (here another model in the model directory) is shown, and no resume promised.
    process = start_training_stage(tmp_path, toy_data, step + 2, *TINY_RUN, "--hidden_dim=32")
    output = finished(process)
    assert process.returncode == 1, output
    errors = [line for line in output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "holds a different model" in errors[0], output
    assert "quickstart failed during: 3/7" in output and "fails the same way until that is fixed" in output
    assert "resumes from its last checkpoint" not in output


def test_training_stage_stopped_before_it_saved_does_not_claim_a_checkpoint(toy_data, tmp_path):
    # Ctrl-C while the trainer starts, before it listens for signals: SIGTERM ends it at once (exit status 143), as
    # a second Ctrl-C does later; nothing was saved.
    process = start_training_stage(tmp_path, toy_data, 100_000, *TINY_RUN)
    log = tmp_path / "train.log"
    deadline = time.time() + 300
    while not (log.exists() and "TensorBoard: tensorboard --logdir" in log.read_text()) and time.time() < deadline:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    output = finished(process)
    assert process.returncode == 130, output
    assert newest_checkpoint(tmp_path / "quickstart") is None
    assert "training stopped at once, without a checkpoint of its last updates; running the quickstart again starts " \
        "it afresh" in output and "with a checkpoint" not in output, output


def test_only_the_newest_three_export_versions_are_kept_whatever_the_folder_is_called(tmp_path):
    """The export stage's pruning (`keep_newest`), under a QUICKSTART_DIR with a space: `xargs` cut such a path at
    the space and removed the folder named by its first part."""
    text = SCRIPT.read_text()
    settings = text[:text.index('\nsay "1/7')]
    base = tmp_path / "sp ace" / "exports" / "rnnsearch"
    for version in (1, 2, 10, 3, 4):
        (base / str(version)).mkdir(parents=True)
    (base / "4.tmp").mkdir()  # not a version TF Serving loads: kept
    neighbour = tmp_path / "sp"
    neighbour.mkdir()
    (neighbour / "notes.txt").write_text("mine")
    subprocess.run(["bash", "-c", f'{settings}\nkeep_newest "$1" 3', str(SCRIPT), str(base)], check=True, timeout=60)
    assert sorted(path.name for path in base.iterdir()) == ["10", "3", "4", "4.tmp"]
    assert (neighbour / "notes.txt").read_text() == "mine"
