"""`rnnsearch average` (`rnnsearch_tf.cli.average_checkpoints`, run as `rnnsearch average`)
on a tiny random model directory: `--source` and `--count` pick the checkpoints, the result is what
`--checkpoint=averaged` reads, and a mistake ends in an error naming the flag or the folder with nothing
written. The averaging itself is tested in test_checkpoint_averaging.py."""

import os
import sys

import numpy as np
import pytest
import tensorflow as tf

from conftest import REPO_ROOT
from helpers.model_test_utils import randomize_weights
from helpers.serving_test_utils import write_model_dir
from helpers.translation_test_data import translate
from helpers import preimported
from rnnsearch_tf.models.model_dir import ModelDir


def _average(*args):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return preimported.run([sys.executable, "-m", "rnnsearch_tf.average_checkpoints", *args], cwd=REPO_ROOT,
                           env=environment, capture_output=True, text=True, timeout=300)


# `large`: the default suite runs the command on checkpoints of other weights (below) and translates from an
# averaged checkpoint (tests/test_evaluate.py)
@pytest.mark.large
def test_average_checkpoints_command(tmp_path):
    path = write_model_dir(tmp_path / "model")
    with pytest.raises(FileNotFoundError, match="run `rnnsearch average --model_dir="):
        ModelDir(path).checkpoint_path("averaged")
    completed = preimported.run(
        [sys.executable, "-m", "rnnsearch_tf.average_checkpoints", f"--model_dir={path}", "--count=3"],
        cwd=REPO_ROOT, capture_output=True, text=True, check=True,
    )
    first, averaged = os.path.join(path, "checkpoints", "ckpt-1"), os.path.join(path, "averaged", "ckpt-1")
    assert completed.stdout == (f"averaged 1 checkpoint ({first}) into {averaged}: only 1 checkpoint of the "
                                f"--count=3 asked in {os.path.join(path, 'checkpoints')}\n")
    expected, _ = translate(str(path))
    actual, checkpoint = translate(str(path), "averaged")  # the average of one checkpoint is that checkpoint
    assert checkpoint.endswith("averaged/ckpt-1")
    np.testing.assert_array_equal(actual["translation"], expected["translation"])
    np.testing.assert_allclose(actual["score"], expected["score"], rtol=1e-6)


def test_count_averages_the_newest_checkpoints_of_the_source(tmp_path):
    path = write_model_dir(tmp_path / "model")  # checkpoints/ckpt-1
    model_dir = ModelDir(path)
    model = model_dir.build_model()
    saved = {}
    for source, directory, steps in (("latest", model_dir.checkpoint_dir, (2, 3, 4)),
                                     ("best", model_dir.best_checkpoint_dir, (5, 6))):
        manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model), directory, max_to_keep=10)
        for step in steps:
            randomize_weights(model, seed=step)
            saved[step] = [variable.numpy() for variable in model.weights]
            manager.save(checkpoint_number=step)
    completed = _average(f"--model_dir={path}", "--count=2")
    assert completed.returncode == 0, completed.stderr[-3000:]
    newest = [os.path.join(model_dir.checkpoint_dir, f"ckpt-{step}") for step in (3, 4)]
    averaged = os.path.join(model_dir.averaged_checkpoint_dir, "ckpt-4")
    assert completed.stdout == f"averaged 2 checkpoints ({', '.join(newest)}) into {averaged}\n"
    reader = tf.train.load_checkpoint(averaged)
    names = [name for name in reader.get_variable_to_shape_map() if name.startswith("model/")]
    assert len(names) == len(model.weights)
    model, _ = model_dir.load_model("averaged")
    for variable, third, fourth in zip(model.weights, saved[3], saved[4]):
        np.testing.assert_allclose(variable.numpy(), (third + fourth) / 2, rtol=1e-6, atol=1e-7, err_msg=variable.path)
    completed = _average(f"--model_dir={path}", "--source=best", "--count=5")
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.startswith("averaged 2 checkpoints (") and "best/ckpt-5, " in completed.stdout
    fewer = f": only 2 checkpoints of the --count=5 asked in {model_dir.best_checkpoint_dir}\n"
    assert completed.stdout.endswith(fewer)
    assert tf.train.latest_checkpoint(model_dir.averaged_checkpoint_dir).endswith("averaged/ckpt-6")


@pytest.mark.parametrize(
    "args, message",
    [
        (("--count=0",), "flag --count=0: 0 is not a positive integer"),
        (("--source=best",), "error: no checkpoint in {model}/best"),
        (("--source=newest",), "flag --source=newest: value should be one of <latest|best>"),
        (("extra",), "error: unexpected arguments: ['extra'] (--help lists the flags)"),
    ],
    ids=["count_below_one", "no_best_checkpoint", "unknown_source", "stray_argument"],
)
def test_a_mistake_is_named_and_writes_nothing(tmp_path, args, message):
    path = write_model_dir(tmp_path / "model")  # one checkpoint, no best/ yet
    completed = _average(f"--model_dir={path}", *args)
    assert completed.returncode == 1, completed.stderr[-3000:]
    assert message.format(model=path) in completed.stderr.splitlines()[0], completed.stderr[-3000:]
    assert "Traceback" not in completed.stderr
    assert not (path / "averaged").exists()
