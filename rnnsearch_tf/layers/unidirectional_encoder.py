"""The RNN Encoder-Decoder's encoder: one RNN of gated units summarised by c (Cho et al. 2014, A.1)."""

import keras
import tensorflow as tf

from rnnsearch_tf.constants import PAD_ID
from rnnsearch_tf.layers.gated_recurrent_unit import GatedRecurrentUnit
from rnnsearch_tf.layers.initializers import initializer


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class UnidirectionalEncoder(keras.layers.Layer):
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

    def __init__(self, vocab_size, embedding_dim, units, initializer="paper", embedding_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.embedding_dim = embedding_dim
        self.units = units
        self.initializer = initializer
        self.embedding_dropout = embedding_dropout

    def build(self, source_ids_shape):
        self.source_embedding = keras.layers.Embedding(
            self.vocab_size,
            self.embedding_dim,
            embeddings_initializer=initializer(self.initializer, "embedding"),
            dtype=self.dtype_policy,
            name="E_src",
        )
        self.source_embedding.build(source_ids_shape)
        self.source_embedding_dropout = keras.layers.Dropout(
            self.embedding_dropout, dtype=self.dtype_policy, name="source_embedding_dropout"
        )
        self.rnn = GatedRecurrentUnit(self.units, self.initializer, dtype=self.dtype_policy, name="rnn")
        self.rnn.build((*source_ids_shape, self.embedding_dim))
        self.summary = keras.layers.Dense(
            self.units,
            activation="tanh",
            kernel_initializer=initializer(self.initializer, "dense"),
            bias_initializer=initializer(self.initializer, "bias"),
            dtype=self.dtype_policy,
            name="V",
        )
        self.summary.build((None, self.units))

    def call(self, source_ids, training=None):
        if source_ids.shape.rank != 2:
            raise ValueError(
                f"UnidirectionalEncoder expects source_ids (batch_size, src_len), right-padded with 0; got shape "
                f"{source_ids.shape}"
            )
        lengths = tf.reduce_sum(tf.cast(tf.not_equal(source_ids, PAD_ID), tf.int32), axis=1)  # [batch]
        embedded = self.source_embedding_dropout(
            self.source_embedding(source_ids), training=training
        )  # [batch, src_len, m]
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

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocab_size": self.vocab_size,
                "embedding_dim": self.embedding_dim,
                "units": self.units,
                "initializer": self.initializer,
                "embedding_dropout": self.embedding_dropout,
            }
        )
        return config
