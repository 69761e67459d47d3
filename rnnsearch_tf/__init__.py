"""rnnsearch-tf: RNNsearch (Bahdanau et al. 2014) and RNNencdec (Cho et al. 2014) in TensorFlow/Keras.

Packages, each importing only those below it (`tests/test_architecture.py` keeps it so):
`cli` > `training` > `evaluation` > `inference` > `models` | `search` > `layers` > `utils`.
"""

from rnnsearch_tf.models import ModelConfig, RNNEncDec, RNNSearch
from rnnsearch_tf.training.training_diverged_error import TrainingDivergedError

__all__ = ["ModelConfig", "RNNEncDec", "RNNSearch", "TrainingDivergedError"]
