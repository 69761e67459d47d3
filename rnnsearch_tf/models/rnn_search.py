"""RNNsearch (Bahdanau, Cho, Bengio 2014)."""

import keras
import tensorflow as tf

from data_pipeline.constants import PAD_ID
from rnnsearch_tf.models.encoder_decoder_model import EncoderDecoderModel
from rnnsearch_tf.layers.bidirectional_encoder import BidirectionalEncoder


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class RNNSearch(EncoderDecoderModel):
    """Bidirectional gated-unit encoder + decoder that searches the annotations with soft alignment.

    Bahdanau et al. 2014, Section 3 and Appendix A.2: annotations h_j = [→h_j; ←h_j]; the decoder's
    s_0 = tanh(W_s ←h_1 + b_W_s); at every step the alignment model turns s_{i-1} and the annotations
    into α_i and the context c_i, which feed the gates and the deep output.

    Args:
        config: `ModelConfig`.

    Example:
    >>> config = ModelConfig(source_vocab_size=20, target_vocab_size=20, embedding_dim=8,
    ...                      hidden_dim=16, maxout_dim=4, alignment_dim=12)
    >>> model = RNNSearch(config)
    >>> model.token_log_probs([[5, 6, 2]], [[7, 2]]).shape
    TensorShape([1, 2])
    """

    encoder_class = BidirectionalEncoder
    uses_attention = True
    initial_state_name = "W_s"

    def encoder_outputs_shape(self):
        n = self.config.hidden_dim
        return {"s": (None, n), "annotations": (None, None, 2 * n), "source_mask": (None, None)}

    def encoder_outputs(self, source_ids, training=None):
        annotations = self.encoder(source_ids, training=training)  # [batch, src_len, 2n]
        first_backward_state = annotations[:, 0, self.config.hidden_dim :]  # ←h_1: [batch, n]
        return {
            "s": self.initial_state_projection(first_backward_state),  # s_0
            "annotations": annotations,
            "source_mask": tf.not_equal(source_ids, PAD_ID),
        }
