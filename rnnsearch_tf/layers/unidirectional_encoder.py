"""The RNN Encoder-Decoder's encoder: one RNN of gated units summarised by c (Cho et al. 2014, A.1)."""

import keras
import tensorflow as tf

from data_pipeline.constants import PAD_ID
from rnnsearch_tf.layers.initializers import initialized_dense
from rnnsearch_tf.layers.source_encoder import SourceEncoder


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class UnidirectionalEncoder(SourceEncoder):
    """Reads a source sentence left to right and returns the fixed-length summary c = tanh(V h_T).

    Cho et al. 2014, Appendix A.1: h_t is the gated hidden unit (same form as `GatedRecurrentUnit`),
    h_T the state after the last real word (padding is never read), and c = tanh(V h_T + b_V).

    Args:
        vocab_size: K_x.
        embedding_dim: m.
        units: n.
        initializer: "paper", "uniform" or "xavier" (`initializers.INITIALIZERS`).
        embedding_dropout: dropout rate on the word embeddings during training (0: none, the paper).

    Call arguments:
        source_ids: int `(batch_size, src_len)`, right-padded with 0 (`PAD_ID`).

    Returns:
        summary c: float `(batch_size, units)`.

    Example:
    >>> encoder = UnidirectionalEncoder(vocab_size=10, embedding_dim=4, units=3)
    >>> encoder(tf.constant([[5, 6, 2], [7, 2, 0]])).shape
    TensorShape([2, 3])
    """

    def build(self, source_ids_shape):
        super().build(source_ids_shape)
        self.rnn = self.gated_unit("rnn", source_ids_shape)
        self.summary = initialized_dense(self.units, self.initializer, activation="tanh", dtype=self.dtype_policy,
                                         name="V")
        self.summary.build((None, self.units))

    def call(self, source_ids, training=None):
        embedded = self.embed(source_ids, training)  # [batch, src_len, m]
        lengths = tf.reduce_sum(tf.cast(tf.not_equal(source_ids, PAD_ID), tf.int32), axis=1)  # [batch]
        states = self.rnn(embedded)  # [batch, src_len, n]
        last_states = tf.gather(states, lengths - 1, axis=1, batch_dims=1)  # h_T: [batch, n]
        return self.summary(last_states)  # c: [batch, n]

    def compute_output_shape(self, source_ids_shape):
        return (source_ids_shape[0], self.units)

    def paper_weights(self):
        """Ē as "E_src", the gated unit's weights with suffix "_enc", V and b_V (all `[in, out]`)."""
        weights = {"E_src": keras.ops.convert_to_numpy(self.source_embedding.embeddings)}
        weights.update(self.rnn.paper_weights("_enc"))
        weights["V"] = keras.ops.convert_to_numpy(self.summary.kernel)
        weights["b_V"] = keras.ops.convert_to_numpy(self.summary.bias)
        return weights
