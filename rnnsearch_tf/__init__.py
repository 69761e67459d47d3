"""rnnsearch-tf: RNNsearch (Bahdanau et al. 2014) and RNNencdec (Cho et al. 2014) in TensorFlow/Keras."""

from rnnsearch_tf.model_config import ModelConfig
from rnnsearch_tf.rnn_enc_dec import RNNEncDec
from rnnsearch_tf.rnn_search import RNNSearch
from rnnsearch_tf.training_diverged_error import TrainingDivergedError

__all__ = ["ModelConfig", "RNNEncDec", "RNNSearch", "TrainingDivergedError"]
