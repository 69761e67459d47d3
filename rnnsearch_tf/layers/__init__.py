"""Keras layers of RNNsearch and RNNencdec."""

from rnnsearch_tf.layers.alignment_model import AlignmentModel
from rnnsearch_tf.layers.bidirectional_encoder import BidirectionalEncoder
from rnnsearch_tf.layers.decoder import Decoder
from rnnsearch_tf.layers.deep_output import DeepOutput
from rnnsearch_tf.layers.gated_recurrent_unit import GatedRecurrentUnit
from rnnsearch_tf.layers.unidirectional_encoder import UnidirectionalEncoder

__all__ = [
    "AlignmentModel",
    "BidirectionalEncoder",
    "Decoder",
    "DeepOutput",
    "GatedRecurrentUnit",
    "UnidirectionalEncoder",
]
