"""The models of the two papers, their configuration, model directories and ensembles."""

from rnnsearch_tf.models.encoder_decoder_model import EncoderDecoderModel
from rnnsearch_tf.models.ensemble import Ensemble
from rnnsearch_tf.models.model_config import ModelConfig
from rnnsearch_tf.models.model_dir import MODEL_CLASSES, ModelDir
from rnnsearch_tf.models.rnn_enc_dec import RNNEncDec
from rnnsearch_tf.models.rnn_search import RNNSearch

__all__ = ["EncoderDecoderModel", "Ensemble", "MODEL_CLASSES", "ModelConfig", "ModelDir", "RNNEncDec", "RNNSearch"]
