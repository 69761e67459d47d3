"""rnnsearch_tf/training/checkpoint_averaging.py: checkpoints_to_average picks the newest checkpoints of
checkpoints/ or best/, oldest first; average_checkpoints writes the mean of their weights, model only, to
averaged/ckpt-N of a real tiny model directory."""

import numpy as np
import pytest
import tensorflow as tf

from helpers.model_test_utils import randomize_weights
from helpers.serving_test_utils import write_model_dir
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.training.checkpoint_averaging import average_checkpoints, checkpoints_to_average, read_averaging


def _saved_weights(model_dir, directory, steps):
    """Saves one checkpoint of random weights per step in `directory`; returns the weights of each."""
    model = model_dir.build_model()
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model), directory, max_to_keep=10)
    saved = []
    for step in steps:
        randomize_weights(model, seed=step)
        saved.append([variable.numpy() for variable in model.weights])
        manager.save(checkpoint_number=step)
    return saved


def test_averaged_checkpoint_is_the_mean_of_the_weights(tmp_path):
    path = write_model_dir(tmp_path / "model")
    model_dir = ModelDir(path)
    model = model_dir.build_model()
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model), model_dir.checkpoint_dir, 10)
    saved = []
    for step, seed in ((10, 1), (20, 2), (30, 3)):
        randomize_weights(model, seed=seed)
        saved.append([variable.numpy() for variable in model.weights])
        manager.save(checkpoint_number=step)
    paths = checkpoints_to_average(model_dir, "latest", count=2)
    assert [p.rsplit("-", 1)[1] for p in paths] == ["20", "30"]
    averaged_path = average_checkpoints(model_dir, paths)
    assert averaged_path.endswith("averaged/ckpt-30")
    averaged_model, loaded_path = model_dir.load_model("averaged")
    assert loaded_path == averaged_path
    for variable, second, third in zip(averaged_model.weights, saved[1], saved[2]):
        np.testing.assert_allclose(variable.numpy(), (second + third) / 2, rtol=1e-6)
    with pytest.raises(FileNotFoundError, match="no checkpoint in .*best"):
        checkpoints_to_average(model_dir, "best", count=2)


def test_the_newest_checkpoints_oldest_first_from_checkpoints_or_best(tmp_path):
    model_dir = ModelDir(write_model_dir(tmp_path / "model"))  # one checkpoint: checkpoints/ckpt-1
    _saved_weights(model_dir, model_dir.best_checkpoint_dir, (4, 9, 12))
    numbers = lambda paths: [int(path.rsplit("-", 1)[1]) for path in paths]
    assert numbers(checkpoints_to_average(model_dir, "best", count=2)) == [9, 12]
    assert numbers(checkpoints_to_average(model_dir, "best", count=5)) == [4, 9, 12]  # fewer than count: all
    assert checkpoints_to_average(model_dir, "latest", count=5) == [str(tmp_path / "model" / "checkpoints" / "ckpt-1")]
    with pytest.raises(FileNotFoundError, match=rf"no checkpoint in {tmp_path}/empty/checkpoints"):
        checkpoints_to_average(ModelDir(tmp_path / "empty"), "latest", count=5)


def test_the_average_of_three_and_of_one_checkpoint_repeated(tmp_path):
    model_dir = ModelDir(write_model_dir(tmp_path / "model"))
    saved = _saved_weights(model_dir, model_dir.checkpoint_dir, (5, 6, 7))
    paths = checkpoints_to_average(model_dir, "latest", count=3)
    average_checkpoints(model_dir, paths)
    averaged, _ = model_dir.load_model("averaged")
    for variable, *weights in zip(averaged.weights, *saved):
        np.testing.assert_allclose(variable.numpy(), np.mean(weights, axis=0), rtol=1e-6, atol=1e-7)
    assert average_checkpoints(model_dir, [paths[0], paths[0]]).endswith("averaged/ckpt-5")
    averaged, _ = model_dir.load_model("averaged")
    for variable, weights in zip(averaged.weights, saved[0]):
        np.testing.assert_array_equal(variable.numpy(), weights)


def test_the_averaged_checkpoint_holds_the_model_only(tmp_path):
    model_dir = ModelDir(write_model_dir(tmp_path / "model"))
    path = average_checkpoints(model_dir, checkpoints_to_average(model_dir))
    names = [name for name, _ in tf.train.list_variables(path)]
    # no optimizer slots, step or data iterator: only the weights and the Checkpoint's own save counter
    assert {name.split("/")[0] for name in names} == {"model", "save_counter", "_CHECKPOINTABLE_OBJECT_GRAPH"}
    assert sum(name.startswith("model/") for name in names) == len(model_dir.build_model().weights)


def test_nothing_to_average_is_refused(tmp_path):
    model_dir = ModelDir(write_model_dir(tmp_path / "model"))
    with pytest.raises(ValueError, match="no checkpoint to average"):
        average_checkpoints(model_dir, [])
    assert not (tmp_path / "model" / "averaged").exists()


def test_an_average_replaces_the_earlier_one_and_what_a_killed_save_left(tmp_path):
    model_dir = ModelDir(write_model_dir(tmp_path / "model"))
    saved = _saved_weights(model_dir, model_dir.checkpoint_dir, (5, 6))
    average_checkpoints(model_dir, checkpoints_to_average(model_dir, "latest", count=2))
    averaged = tmp_path / "model" / "averaged"
    (averaged / "ckpt-5_temp").mkdir()  # as a killed save of an average of other checkpoints leaves it
    path = average_checkpoints(model_dir, checkpoints_to_average(model_dir, "latest", count=1))
    assert sorted(child.name for child in averaged.iterdir()) == ["averaging.json", "checkpoint",
                                                                  "ckpt-6.data-00000-of-00001", "ckpt-6.index"]
    reader = tf.train.load_checkpoint(path)
    name = next(name for name in reader.get_variable_to_shape_map() if name.startswith("model/"))
    assert any(np.array_equal(reader.get_tensor(name), weights) for weights in saved[1])


def test_the_average_records_what_it_averaged_and_the_next_one_replaces_the_record(tmp_path):
    """`rnnsearch average` recorded nothing: averaged/ckpt-7 said neither which checkpoints nor how many."""
    model_dir = ModelDir(write_model_dir(tmp_path / "model"))
    assert read_averaging(model_dir) is None  # none yet
    _saved_weights(model_dir, model_dir.best_checkpoint_dir, (4, 9, 12))
    paths = checkpoints_to_average(model_dir, "best", count=2)
    path = average_checkpoints(model_dir, paths, "best")
    assert read_averaging(model_dir) == dict(checkpoint=path, source="best", count=2, checkpoints=[
        dict(path=paths[0], step=9), dict(path=paths[1], step=12)])
    path = average_checkpoints(model_dir, checkpoints_to_average(model_dir, "latest"), "latest")
    latest = str(tmp_path / "model" / "checkpoints" / "ckpt-1")
    assert read_averaging(model_dir) == dict(checkpoint=path, source="latest", count=1,
                                             checkpoints=[dict(path=latest, step=1)])
