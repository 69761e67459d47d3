"""What the two encoders share: their arguments, the source embedding Ē with its dropout, the input check."""

import keras

from rnnsearch_tf.layers.gated_recurrent_unit import GatedRecurrentUnit
from rnnsearch_tf.layers.initializers import initializer


class SourceEncoder(keras.layers.Layer):
    """The base of `BidirectionalEncoder` and `UnidirectionalEncoder`.

    Args:
        vocab_size: K_x.
        embedding_dim: m.
        units: n, per RNN.
        initializer: "paper", "uniform" or "xavier" (`initializers.INITIALIZERS`).
        embedding_dropout: dropout rate on the word embeddings during training (0: none, the paper).

    Subclasses build their RNNs with `gated_unit(name)` in `build` after `super().build`, and read the
    embedded source with `embed` in `call`.
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

    def gated_unit(self, name, source_ids_shape):
        """A built `GatedRecurrentUnit` of n units reading the embedded source."""
        unit = GatedRecurrentUnit(self.units, self.initializer, dtype=self.dtype_policy, name=name)
        unit.build((*source_ids_shape, self.embedding_dim))
        return unit

    def embed(self, source_ids, training=None):
        """Ē x with dropout in training: int `(batch, src_len)` -> `(batch, src_len, m)`."""
        if source_ids.shape.rank != 2:
            raise ValueError(
                f"{type(self).__name__} expects source_ids (batch_size, src_len), right-padded with 0; got shape "
                f"{source_ids.shape}"
            )
        return self.source_embedding_dropout(self.source_embedding(source_ids), training=training)

    def get_config(self):
        config = super().get_config()
        arguments = ("vocab_size", "embedding_dim", "units", "initializer", "embedding_dropout")
        config.update({name: getattr(self, name) for name in arguments})
        return config
