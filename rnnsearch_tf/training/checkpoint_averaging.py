"""The average of several checkpoints of one training run, saved as a checkpoint of its own."""

import json
import os
import shutil

import keras
import numpy as np
import tensorflow as tf

from rnnsearch_tf.training.checkpointing import checkpoint_step


def checkpoints_to_average(model_dir, source="latest", count=5):
    """The newest `count` checkpoint paths of `model_dir` (a `ModelDir`), oldest first.

    Args:
        source: "latest" (`checkpoints/`, the last ones saved) or "best" (`best/`, the last
            improvements of dev BLEU: keep more of them with `--keep_best_checkpoints`).
        count: how many.
    """
    directory = {"latest": model_dir.checkpoint_dir, "best": model_dir.best_checkpoint_dir}[source]
    state = tf.train.get_checkpoint_state(directory)
    paths = list(state.all_model_checkpoint_paths) if state else []
    if not paths:
        raise FileNotFoundError(f"no checkpoint in {directory}")
    return paths[-count:]


def average_checkpoints(model_dir, checkpoint_paths, source=None):
    """Writes the mean of the models' weights in `checkpoint_paths` to `model_dir/averaged/`.

    Every floating-point weight is averaged (Junczys-Dowmunt et al. 2016; OpenNMT's
    `average_models`); other model variables (dropout seeds) are those of the last checkpoint. Only the
    model is saved: the averaged checkpoint translates, it does not resume training. It replaces the folder's
    earlier average, removed before it is written. Beside it, `ModelDir.averaging_file` records what it averaged
    (`read_averaging`), which evaluate's metrics.json repeats: the checkpoint's own name says the last step only.

    Args:
        model_dir: a `ModelDir`.
        checkpoint_paths: checkpoints of that model directory.
        source: where they were picked ("latest" or "best": `checkpoints_to_average`), recorded; None: given.

    Returns:
        the path of the averaged checkpoint, `averaged/ckpt-N` with N the last checkpoint's number.
    """
    if not checkpoint_paths:
        raise ValueError("no checkpoint to average")
    model = model_dir.build_model(to_restore=True)
    weights = [variable for variable in model.weights if keras.backend.is_float_dtype(variable.dtype)]
    totals = [np.zeros(variable.shape, np.float64) for variable in weights]
    for path in checkpoint_paths:
        tf.train.Checkpoint(model=model).read(path).expect_partial().assert_existing_objects_matched()
        for total, variable in zip(totals, weights):
            total += keras.ops.convert_to_numpy(variable)
    for total, variable in zip(totals, weights):
        variable.assign(total / len(checkpoint_paths))
    number = checkpoint_step(checkpoint_paths[-1])
    # The earlier average goes first: TensorFlow rewrites a checkpoint of the same name in place, so a kill during
    # that save left one that did not read; now it leaves none, which `translate` names, and no `*_temp*` folder.
    shutil.rmtree(model_dir.averaged_checkpoint_dir, ignore_errors=True)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model), model_dir.averaged_checkpoint_dir, 1)
    path = manager.save(checkpoint_number=number)
    checkpoints = [dict(path=os.fspath(checkpoint), step=checkpoint_step(checkpoint))
                   for checkpoint in checkpoint_paths]
    with open(model_dir.averaging_file, "w", encoding="utf-8") as stream:
        json.dump(dict(checkpoint=path, source=source, count=len(checkpoints), checkpoints=checkpoints), stream,
                  indent=2)
        stream.write("\n")
    return path


def read_averaging(model_dir):
    """What `average_checkpoints` recorded of `model_dir`'s (a `ModelDir`) averaged checkpoint: `checkpoint` (its
    path), `source` ("latest", "best", or None), `count` and `checkpoints` (each averaged one's `path` and `step`,
    oldest first); None for an average written before it was recorded, or none."""
    if not os.path.exists(model_dir.averaging_file):
        return None
    with open(model_dir.averaging_file, encoding="utf-8") as stream:
        return json.load(stream)
