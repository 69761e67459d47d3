"""What readers of an export (`serving/export.py`) rely on: its newest version folder and its settings.

Here, below every package, so that the server (`serving/servable.py`) starts without importing the model code.
"""

import os

import tensorflow as tf


def newest_version(model_base_path):
    """(version, path) of the largest integer subfolder holding a saved_model.pb, as TF Serving picks it.

    Folders being written (`.incomplete-<N>`), other names and integer folders without a saved_model.pb
    are not versions.

    Raises:
        FileNotFoundError: `model_base_path` is missing or holds no version.
    """
    model_base_path = os.fspath(model_base_path)
    versions = []
    if tf.io.gfile.isdir(model_base_path):
        for name in tf.io.gfile.listdir(model_base_path):
            name = name.strip("/")
            if name.isdigit() and tf.io.gfile.exists(os.path.join(model_base_path, name, "saved_model.pb")):
                versions.append(int(name))
    if not versions:
        model_dir = " (it holds model.json: a model directory, which --model_dir reads)" if tf.io.gfile.exists(
            os.path.join(model_base_path, "model.json")) else ""
        raise FileNotFoundError(
            f"no version folder (an integer name with a saved_model.pb) in {model_base_path}{model_dir}"
        )
    return max(versions), os.path.join(model_base_path, str(max(versions)))


def read_settings(loaded):
    """The `settings` signature of a loaded export (`Translator.serving_signatures`), by name, as Python
    values: str, int, float (float32 values widened) or bool."""
    return {
        name: value.numpy().decode("utf-8") if value.dtype == tf.string else value.numpy().item()
        for name, value in loaded.signatures["settings"]().items()
    }
