"""rnnsearch-tf: RNNsearch (Bahdanau et al. 2014) and RNNencdec (Cho et al. 2014) in TensorFlow/Keras.

Packages, each importing only those below it (`tests/test_architecture.py` keeps it so):
`cli` > `training` > `evaluation` > `inference` > `models` | `search` > `layers` > `utils`.

The names below are imported on first use, so that the command line (`rnnsearch_tf.cli.main`) decides
how TensorFlow starts (quietly) before anything imports it.
"""

import importlib

_EXPORTS = {
    "ModelConfig": "rnnsearch_tf.models",
    "RNNEncDec": "rnnsearch_tf.models",
    "RNNSearch": "rnnsearch_tf.models",
    "TrainingDivergedError": "rnnsearch_tf.training.training_diverged_error",
}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'rnnsearch_tf' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
