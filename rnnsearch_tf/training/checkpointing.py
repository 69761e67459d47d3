"""The checkpoints of a training run: the latest ones, the best ones, and resuming from them."""

import glob
import os
import re
import shutil

import keras
import numpy as np
import tensorflow as tf
from absl import logging


class Checkpointing:
    """One `tf.train.Checkpoint` of everything a resumed run needs, saved into two folders.

    `checkpoints/` keeps the last `keep_checkpoints` checkpoints (`save`); `best/` keeps the last
    `keep_best_checkpoints` checkpoints of a new best dev BLEU (`save_best`). Both hold the same objects
    under the same names, so either resumes a run and either loads into `ModelDir.load_model`.

    `restore` makes a killed run resumable: it removes the `*_temp*` folders a save leaves when it is
    killed before its rename, and when the newest checkpoint does not read (a write cut short) it
    resumes from the one before it, saying so. A checkpoint whose objects read but whose data iterator does not
    fit this run's (a `tf.data.Iterator` of a dataset of another structure) is no write cut short: `restore` raises
    `InputPipelineMismatchError` instead.

    Args:
        model_dir: the `ModelDir` whose `checkpoint_dir` and `best_checkpoint_dir` receive the checkpoints.
        keep_checkpoints: latest checkpoints kept.
        keep_best_checkpoints: best checkpoints kept.
        **objects: the checkpoint's trackable objects by name (`model=`, `optimizer=`, ...); the names
            are the keys in the files, so a run resumes only from checkpoints written with the same names.

    Example:

    ```python
    checkpointing = Checkpointing(ModelDir(path), 5, 1, model=model, step=step)
    checkpointing.restore()  # None in a new model directory
    checkpointing.save(int(step))
    ```
    """

    def __init__(self, model_dir, keep_checkpoints, keep_best_checkpoints, **objects):
        self.model_dir = model_dir
        self.keep_checkpoints = keep_checkpoints
        self.keep_best_checkpoints = keep_best_checkpoints
        self.objects = objects
        self.checkpoint = tf.train.Checkpoint(**objects)
        self.latest = tf.train.CheckpointManager(self.checkpoint, model_dir.checkpoint_dir, keep_checkpoints)
        self.best = tf.train.CheckpointManager(self.checkpoint, model_dir.best_checkpoint_dir, keep_best_checkpoints)

    @property
    def latest_checkpoint(self):
        """The path of the newest checkpoint in `checkpoints/`, or None."""
        return self.latest.latest_checkpoint

    @property
    def best_checkpoint(self):
        """The path of the newest checkpoint in `best/`, or None."""
        return self.best.latest_checkpoint

    def saved_names(self):
        """The names of the objects in the newest checkpoint that reads (the `**objects` it was saved with), or
        None without one: what a resumed run must still checkpoint."""
        for path in reversed(self.latest.checkpoints):
            try:
                return saved_object_names(path)
            except (tf.errors.OpError, ValueError):  # a write cut short: `restore` warns of it
                continue
        return None

    def save(self, step):
        """Writes `checkpoints/ckpt-{step}`, over one of that step that `restore` found unreadable."""
        return self.latest.save(checkpoint_number=step)

    def save_unless_saved(self, step):
        """`save` unless the newest checkpoint is already of `step`: no step is written twice."""
        if not is_of_step(self.latest_checkpoint, step):
            self.save(step)

    def save_best(self, step):
        """Writes `best/ckpt-{step}`, unless it is the newest there: a run killed after writing it and
        before the latest checkpoint of that step validates that step again when it resumes."""
        if not is_of_step(self.best_checkpoint, step):
            self.best.save(checkpoint_number=step)

    def restore(self):
        """Removes unfinished saves, then restores the newest checkpoint that reads; returns its path, or
        None when there is none (a new run). Raises RuntimeError when checkpoints exist but none reads, and
        `InputPipelineMismatchError` when the newest one reads but for its data iterators."""
        self._remove_unfinished_saves()
        for path in reversed(self.latest.checkpoints):
            try:
                self.checkpoint.restore(path).assert_existing_objects_matched()
            except (tf.errors.OpError, ValueError, AssertionError, IndexError) as error:  # IndexError: data cut short
                self._raise_if_only_the_iterators_differ(path, error)
                logging.warning("%s does not read (%s); trying the checkpoint before it", path, str(error)[:300])
                continue
            if path != self.latest_checkpoint:
                logging.warning("resuming from %s: the newer checkpoints do not read", path)
            return path
        if self.latest.checkpoints:
            raise RuntimeError(
                f"no checkpoint in {self.model_dir.checkpoint_dir} reads; move the folder away to start afresh"
            )
        return None

    def restore_step(self, step):
        """Restores `checkpoints/ckpt-{step}` (the step every worker of a multi-worker run has); returns its path.
        Raises RuntimeError when it is not among the kept checkpoints."""
        for path in self.latest.checkpoints:
            if is_of_step(path, step):
                self.checkpoint.restore(path).assert_existing_objects_matched()
                return path
        raise RuntimeError(
            f"{self.model_dir.checkpoint_dir} has no checkpoint of step {step}, the newest that every worker has; "
            "move every worker's model directory away to start afresh"
        )

    def holds_finite_values(self):
        """Whether every floating-point variable the checkpoints save (`is_finite`'s set, read in memory) is finite
        now: a save it allows is one `newest_finite_checkpoint` can name."""
        variables = [trackable for trackable in tf.train.TrackableView(self.checkpoint).descendants()
                     if isinstance(trackable, (tf.Variable, keras.Variable))]
        return _all_finite((variable.dtype, variable.numpy()) for variable in variables)

    def newest_finite_checkpoint(self):
        """The newest of the kept checkpoints whose floating-point values (weights, optimizer slots, run state) are
        all finite, or None: a diverged run's last checkpoints may hold an update that made weights non-finite."""
        for path in reversed(self.latest.checkpoints):
            if is_finite(path):
                return path
        return None

    def _raise_if_only_the_iterators_differ(self, path, error):
        """Raises `InputPipelineMismatchError` when `error`, of restoring `path`, is TensorFlow's refusal of a
        dataset of another structure than the one saved and every other object of the checkpoint reads."""
        refusal = re.search(r"Failed to restore dataset iterator from checkpoint: [^ ]*[^. ]", str(error))
        if not isinstance(error, tf.errors.NotFoundError) or refusal is None:
            return
        others = {name: value for name, value in self.objects.items() if not isinstance(value, tf.data.Iterator)}
        try:
            tf.train.Checkpoint(**others).read(path).expect_partial().assert_existing_objects_matched()
        except (tf.errors.OpError, ValueError, AssertionError, IndexError):
            return
        raise InputPipelineMismatchError(
            f"{path}: everything in it reads but its data iterator, which is of another input pipeline than this "
            f"run's ({refusal.group(0)})"
        )

    def _remove_unfinished_saves(self):
        """A save writes `ckpt-N_temp*/` and renames it when complete; a kill in between leaves it behind."""
        for directory in (self.model_dir.checkpoint_dir, self.model_dir.best_checkpoint_dir):
            for leftover in glob.glob(os.path.join(directory, "*_temp*")):
                logging.warning("removing %s, left by a checkpoint save that did not finish", leftover)
                shutil.rmtree(leftover, ignore_errors=True)


class InputPipelineMismatchError(ValueError):
    """A checkpoint reads but for its data iterator: the run that saved it built its dataset of other
    transformations (`tf.data` restores an iterator only into a dataset of the same structure)."""


def is_finite(path):
    """Whether every floating-point value in the checkpoint `path` is finite."""
    reader = tf.train.load_checkpoint(path)
    return _all_finite((dtype, reader.get_tensor(name)) for name, dtype in reader.get_variable_to_dtype_map().items()
                       if dtype.is_floating)  # first: a data iterator's state (a variant) has no array


def _all_finite(values):
    """Whether every value of a floating-point type among `values` ((dtype, array) pairs) is finite."""
    return all(np.isfinite(array).all() for dtype, array in values if tf.as_dtype(dtype).is_floating)


def checkpoint_step(path):
    """The update a checkpoint `path` (`.../ckpt-N`) was saved after: N."""
    return int(os.fspath(path).rsplit("-", 1)[-1])


def is_of_step(path, step):
    """Whether the checkpoint `path` (`.../ckpt-N`, or None) is the one of `step`."""
    return path is not None and path.endswith(f"-{step}")


def run_variables(**initial_values):
    """{name: a non-trainable `tf.Variable` of that initial value and name}: state a run keeps beside the model
    (its budget, early stopping) and checkpoints under these names."""
    return {name: tf.Variable(value, trainable=False, name=name) for name, value in initial_values.items()}


def saved_object_names(path):
    """The names of the objects the checkpoint `path` was saved with (`tf.train.Checkpoint(**objects)`'s keys:
    "model", "optimizer", ...), read from its index."""
    return {name.split("/")[0] for name, _ in tf.train.list_variables(path)}
