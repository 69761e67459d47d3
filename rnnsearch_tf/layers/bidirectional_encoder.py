"""The RNNsearch encoder: a bidirectional RNN of gated units (Bahdanau et al. 2014, A.2.1)."""

import keras
import tensorflow as tf

from rnnsearch_tf.constants import PAD_ID
from rnnsearch_tf.layers.gated_recurrent_unit import GatedRecurrentUnit
from rnnsearch_tf.layers.initializers import initializer


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class BidirectionalEncoder(keras.layers.Layer):
    """Maps source word ids to annotations h_j = [→h_j ; ←h_j].

    Bahdanau et al. 2014, Section 3.2 and Appendix A.2.1. One embedding matrix Ē ("E_src") is shared by
    the forward and the backward RNN; each direction has its own gated-unit weights. The backward RNN
    reads each sentence from its own last real word, so right padding never changes a real position's
    annotation; annotations at padded positions are zero.

    Args:
        vocab_size: K_x.
        embedding_dim: m.
        units: n, per direction.
        initializer: "paper", "uniform" or "xavier" (`initializers.INITIALIZERS`).
        embedding_dropout: dropout rate on the word embeddings during training (0: none, the paper).

    Call arguments:
        source_ids: int `(batch_size, src_len)`, right-padded with 0 (`PAD_ID`).

    Returns:
        annotations: float `(batch_size, src_len, 2 * units)`; `[..., :units]` forward states,
        `[..., units:]` backward states.

    Example:
    >>> encoder = BidirectionalEncoder(vocab_size=10, embedding_dim=4, units=3)
    >>> encoder(tf.constant([[5, 6, 2], [7, 2, 0]])).shape
    TensorShape([2, 3, 6])
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
        embedded_shape = (*source_ids_shape, self.embedding_dim)
        self.forward_rnn = GatedRecurrentUnit(self.units, self.initializer, dtype=self.dtype_policy, name="forward_rnn")
        self.forward_rnn.build(embedded_shape)
        self.backward_rnn = GatedRecurrentUnit(
            self.units, self.initializer, dtype=self.dtype_policy, name="backward_rnn"
        )
        self.backward_rnn.build(embedded_shape)

    def call(self, source_ids, training=None):
        if source_ids.shape.rank != 2:
            raise ValueError(
                f"BidirectionalEncoder expects source_ids (batch_size, src_len), right-padded with 0; got shape "
                f"{source_ids.shape}"
            )
        source_mask = tf.not_equal(source_ids, PAD_ID)  # [batch, src_len]
        lengths = tf.reduce_sum(tf.cast(source_mask, tf.int32), axis=1)  # [batch]
        embedded = self.source_embedding_dropout(
            self.source_embedding(source_ids), training=training
        )  # [batch, src_len, m]
        forward_states = self.forward_rnn(embedded)  # [batch, src_len, n]
        # Reverse each sentence within its own length; padding stays at the end.
        reversed_embedded = tf.reverse_sequence(embedded, lengths, seq_axis=1, batch_axis=0)
        backward_states = tf.reverse_sequence(
            self.backward_rnn(reversed_embedded), lengths, seq_axis=1, batch_axis=0
        )  # [batch, src_len, n]
        annotations = tf.concat([forward_states, backward_states], axis=-1)  # [batch, src_len, 2n]
        return annotations * tf.cast(source_mask, annotations.dtype)[:, :, tf.newaxis]

    def compute_output_shape(self, source_ids_shape):
        return (*source_ids_shape, 2 * self.units)

    def paper_weights(self):
        """Ē as "E_src" `[K_x, m]`, and each direction's weights with suffix "_fwd" / "_bwd"."""
        weights = {"E_src": keras.ops.convert_to_numpy(self.source_embedding.embeddings)}
        weights.update(self.forward_rnn.paper_weights("_fwd"))
        weights.update(self.backward_rnn.paper_weights("_bwd"))
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
