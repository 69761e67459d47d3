"""RNN Encoder-Decoder (Cho et al. 2014), the baseline of Bahdanau et al. 2014."""

import keras

from rnnsearch_tf.models.encoder_decoder_model import EncoderDecoderModel
from rnnsearch_tf.layers.unidirectional_encoder import UnidirectionalEncoder


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class RNNEncDec(EncoderDecoderModel):
    """Gated-unit encoder summarised into one vector c, and a decoder conditioned on c at every step.

    Cho et al. 2014, Appendix A: c = tanh(V h_T + b_V), s_0 = tanh(V' c + b_V'); c feeds every gate
    (C, C_z, C_r) and the deep output (C_o) at every step. The decoder is RNNsearch's (`Decoder`) with
    the context fixed to c, as Bahdanau et al. 2014 (A.2.2) describe the baseline; its reset gate
    multiplies U s_{i-1} only (Cho et al.'s original multiplies U h + C c), a deliberate choice so both
    models share one gated unit.

    Args:
        config: `ModelConfig` (`alignment_dim` unused).

    Example:
    >>> config = ModelConfig(source_vocab_size=20, target_vocab_size=20, embedding_dim=8,
    ...                      hidden_dim=16, maxout_dim=4)
    >>> RNNEncDec(config).token_log_probs([[5, 6, 2]], [[7, 2]]).shape
    TensorShape([1, 2])
    """

    encoder_class = UnidirectionalEncoder
    uses_attention = False
    initial_state_name = "V_prime"

    def encoder_outputs_shape(self):
        return {"s": (None, self.config.hidden_dim), "context": (None, self.config.hidden_dim)}

    def encoder_outputs(self, source_ids, training=None):
        summary = self.encoder(source_ids, training=training)  # c: [batch, n]
        return {"s": self.initial_state_projection(summary), "context": summary}
