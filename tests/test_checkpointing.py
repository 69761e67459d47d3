"""Checkpointing: saved weights restore exactly, an unreadable newest checkpoint falls back to the one
before it, unfinished saves are removed, no step is saved twice, and earlier checkpoints still read."""

import logging

import keras
import numpy as np
import pytest
import tensorflow as tf

from helpers.model_test_utils import randomize_weights, small_config
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.models.rnn_search import RNNSearch
from rnnsearch_tf.training.checkpointing import Checkpointing, InputPipelineMismatchError, saved_object_names


def run_state(seed):
    """A model with N(0, 0.5²) weights of `seed` and a step counter: what a training run checkpoints."""
    model = RNNSearch(small_config())
    randomize_weights(model, seed=seed)
    return model, tf.Variable(np.int64(seed), trainable=False, name="step")


def checkpointing(path, model, step, keep_checkpoints=5):
    return Checkpointing(ModelDir(path), keep_checkpoints, 2, model=model, step=step)


def assert_same_weights(actual, expected):
    assert len(actual.weights) == len(expected.weights)
    for mine, theirs in zip(actual.weights, expected.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=mine.path)


def saved_run(path, *steps):
    """Saves the state of seed `step` as the checkpoint of each of `steps`; returns {step: model}."""
    models = {}
    for step in steps:
        model, counter = run_state(step)
        checkpointing(path, model, counter).save(step)
        models[step] = model
    return models


def test_restore_gives_back_the_saved_weights_and_step(tmp_path):
    saved = saved_run(tmp_path, 4)[4]
    model, step = run_state(seed=99)
    path = checkpointing(tmp_path, model, step).restore()
    assert path == str(tmp_path / "checkpoints" / "ckpt-4")
    assert int(step) == 4
    assert_same_weights(model, saved)


def test_a_new_model_directory_has_nothing_to_restore(tmp_path):
    model, step = run_state(seed=1)
    before = [weight.numpy() for weight in model.weights]
    assert checkpointing(tmp_path, model, step).restore() is None
    assert int(step) == 1
    for weight, value in zip(model.weights, before):
        np.testing.assert_array_equal(weight.numpy(), value)


@pytest.mark.parametrize("cut_short", ["index", "data"])
def test_an_unreadable_newest_checkpoint_falls_back_to_the_one_before(tmp_path, caplog, cut_short):
    saved = saved_run(tmp_path, 4, 8)
    written = next((tmp_path / "checkpoints").glob(f"ckpt-8.{cut_short}*"))
    written.write_bytes(written.read_bytes()[:20])  # a write cut short
    model, step = run_state(seed=99)
    with caplog.at_level(logging.WARNING):
        path = checkpointing(tmp_path, model, step).restore()
    assert path.endswith("ckpt-4") and int(step) == 4
    assert_same_weights(model, saved[4])
    assert "ckpt-8 does not read" in caplog.text
    assert "resuming from" in caplog.text and "the newer checkpoints do not read" in caplog.text


def test_the_next_save_of_the_unreadable_step_replaces_it(tmp_path):
    saved_run(tmp_path, 4, 8)
    index = tmp_path / "checkpoints" / "ckpt-8.index"
    index.write_bytes(index.read_bytes()[:20])
    model, step = run_state(seed=99)
    resumed = checkpointing(tmp_path, model, step)
    resumed.restore()
    resumed.save(8)
    restored, _ = run_state(seed=7)
    assert checkpointing(tmp_path, restored, tf.Variable(np.int64(0))).restore().endswith("ckpt-8")
    assert_same_weights(restored, model)


def test_no_readable_checkpoint_is_an_error_that_says_what_to_do(tmp_path):
    saved_run(tmp_path, 4)
    index = tmp_path / "checkpoints" / "ckpt-4.index"
    index.write_bytes(index.read_bytes()[:20])
    model, step = run_state(seed=99)
    with pytest.raises(RuntimeError, match="no checkpoint in .*checkpoints reads; move the folder away"):
        checkpointing(tmp_path, model, step).restore()


def test_a_data_iterator_of_another_input_pipeline_is_named_not_taken_for_a_write_cut_short(tmp_path, caplog):
    # Batches of 2, then the same numbers shuffled first: TensorFlow reads an iterator's state only into a dataset
    # of the transformations that saved it.
    model, step = run_state(seed=4)
    batches = iter(tf.data.Dataset.range(10).batch(2))
    saving = Checkpointing(ModelDir(tmp_path), 5, 1, model=model, step=step, iterator=batches)
    for number in (2, 4):
        next(batches)
        saving.save(number)
    model, step = run_state(seed=99)
    shuffled = iter(tf.data.Dataset.range(10).shuffle(10, seed=1).batch(2))
    resuming = Checkpointing(ModelDir(tmp_path), 5, 1, model=model, step=step, iterator=shuffled)
    with caplog.at_level(logging.WARNING), pytest.raises(InputPipelineMismatchError) as refusal:
        resuming.restore()
    assert str(refusal.value).startswith(f"{tmp_path / 'checkpoints' / 'ckpt-4'}: everything in it reads but its "
                                         "data iterator, which is of another input pipeline than this run's "
                                         "(Failed to restore dataset iterator from checkpoint: Iterator::")
    assert "does not read" not in caplog.text  # not a write cut short: ckpt-2 is not tried
    # A checkpoint cut short whose iterator also fails is still one that does not read.
    index = tmp_path / "checkpoints" / "ckpt-4.index"
    index.write_bytes(index.read_bytes()[:20])
    with pytest.raises(InputPipelineMismatchError, match="ckpt-2: everything in it reads"):
        resuming.restore()


def test_the_newest_finite_checkpoint_is_the_newest_without_a_non_finite_value(tmp_path):
    model, step = run_state(seed=3)
    run = checkpointing(tmp_path, model, step)
    assert run.newest_finite_checkpoint() is None
    run.save(2)
    weight = model.trainable_variables[5]
    weight.assign(tf.tensor_scatter_nd_update(weight, [[0] * len(weight.shape)], [np.nan]))  # one value of one weight
    run.save(4)
    assert run.newest_finite_checkpoint() == str(tmp_path / "checkpoints" / "ckpt-2")


def test_values_in_memory_are_judged_finite_as_their_checkpoint_is_read_optimizer_slots_too(tmp_path):
    model, step = run_state(seed=3)
    optimizer = keras.optimizers.Adam()
    optimizer.build(model.trainable_variables)
    run = Checkpointing(ModelDir(tmp_path), 5, 2, model=model, step=step, optimizer=optimizer)
    assert run.holds_finite_values()
    run.save(2)
    slot = optimizer.variables[-1]  # a moment of the last weight: the weights themselves stay finite
    slot.assign(tf.fill(slot.shape, np.inf))
    assert all(np.isfinite(weight.numpy()).all() for weight in model.weights)
    assert not run.holds_finite_values()
    run.save(4)
    assert run.newest_finite_checkpoint() == str(tmp_path / "checkpoints" / "ckpt-2")  # the same judgement


def test_restore_removes_what_an_unfinished_save_left(tmp_path, caplog):
    saved_run(tmp_path, 4)
    leftovers = [tmp_path / "checkpoints" / "ckpt-8_temp", tmp_path / "best" / "ckpt-8_temp_1234"]
    for leftover in leftovers:
        leftover.mkdir(parents=True)
        (leftover / "part-00000-of-00001").write_bytes(b"half a checkpoint")
    model, step = run_state(seed=99)
    with caplog.at_level(logging.WARNING):
        assert checkpointing(tmp_path, model, step).restore().endswith("ckpt-4")
    assert not any(leftover.exists() for leftover in leftovers)
    assert "left by a checkpoint save that did not finish" in caplog.text


def test_a_step_already_saved_is_not_saved_again(tmp_path):
    model, step = run_state(seed=3)
    run = checkpointing(tmp_path, model, step)
    run.save(4)
    run.save_best(4)
    written = {path: path.stat().st_mtime_ns for path in tmp_path.glob("*/ckpt-4*")}
    randomize_weights(model, seed=5)
    run.save_unless_saved(4)
    run.save_best(4)
    assert {path: path.stat().st_mtime_ns for path in tmp_path.glob("*/ckpt-4*")} == written
    run.save_unless_saved(5)
    assert [path.rsplit("/", 1)[-1] for path in run.latest.checkpoints] == ["ckpt-4", "ckpt-5"]
    assert run.best_checkpoint.endswith("ckpt-4")


def test_only_the_last_checkpoints_are_kept_and_best_holds_the_same_objects(tmp_path):
    model, step = run_state(seed=3)
    run = checkpointing(tmp_path, model, step, keep_checkpoints=2)
    for number in (2, 4, 6):
        run.save(number)
    run.save_best(6)
    assert [path.rsplit("/", 1)[-1] for path in run.latest.checkpoints] == ["ckpt-4", "ckpt-6"]
    latest = dict(tf.train.list_variables(run.latest_checkpoint))
    assert dict(tf.train.list_variables(run.best_checkpoint)) == latest
    assert "step/.ATTRIBUTES/VARIABLE_VALUE" in latest
    assert any(name.startswith("model/") for name in latest)


def test_a_checkpoint_written_before_checkpointing_existed_resumes(tmp_path):
    """The trainer used to save `tf.train.Checkpoint(model=..., step=..., ...)` through a plain
    `CheckpointManager`; the same names restore with `Checkpointing`."""
    saved, saved_step = run_state(seed=4)
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=saved, step=saved_step), str(tmp_path / "checkpoints"), 5
    )
    manager.save(checkpoint_number=4)
    model, step = run_state(seed=99)
    assert checkpointing(tmp_path, model, step).restore() == manager.latest_checkpoint
    assert int(step) == 4
    assert_same_weights(model, saved)


def test_restore_step_goes_back_to_a_kept_step_and_names_a_missing_one(tmp_path):
    saved = saved_run(tmp_path, 4, 8)
    model, step = run_state(seed=99)
    kept = checkpointing(tmp_path, model, step)
    assert kept.restore() == str(tmp_path / "checkpoints" / "ckpt-8")
    assert kept.restore_step(4) == str(tmp_path / "checkpoints" / "ckpt-4") and int(step) == 4
    assert_same_weights(model, saved[4])
    with pytest.raises(RuntimeError, match="has no checkpoint of step 6, the newest that every worker has"):
        kept.restore_step(6)


def test_a_checkpoint_names_the_objects_it_was_saved_with(tmp_path):
    model, step = run_state(seed=1)
    saving = checkpointing(tmp_path, model, step)
    assert saving.saved_names() is None  # no checkpoint yet
    path = saving.save(3)
    # the objects given, TensorFlow's save counter and object graph
    assert saved_object_names(path) == {"model", "step", "save_counter", "_CHECKPOINTABLE_OBJECT_GRAPH"}
    assert saving.saved_names() == saved_object_names(path)
