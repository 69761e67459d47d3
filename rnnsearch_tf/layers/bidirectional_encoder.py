"""The RNNsearch encoder: a bidirectional RNN of gated units (Bahdanau et al. 2014, A.2.1)."""

import keras
import tensorflow as tf

from data_pipeline.constants import PAD_ID
from rnnsearch_tf.layers.source_encoder import SourceEncoder


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class BidirectionalEncoder(SourceEncoder):
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

    def build(self, source_ids_shape):
        super().build(source_ids_shape)
        self.forward_rnn = self.gated_unit("forward_rnn", source_ids_shape)
        self.backward_rnn = self.gated_unit("backward_rnn", source_ids_shape)

    def call(self, source_ids, training=None):
        embedded = self.embed(source_ids, training)  # [batch, src_len, m]
        source_mask = tf.not_equal(source_ids, PAD_ID)  # [batch, src_len]
        lengths = tf.reduce_sum(tf.cast(source_mask, tf.int32), axis=1)  # [batch]
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
