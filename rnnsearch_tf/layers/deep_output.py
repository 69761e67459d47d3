"""The deep output with a single maxout layer (Bahdanau et al. 2014, A.2.2; Pascanu et al. 2014)."""

import keras
import tensorflow as tf

from rnnsearch_tf.layers.initializers import initialized_dense


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class DeepOutput(keras.layers.Layer):
    """Next-word logits from a decoder state, the previous word's embedding and the context.

        t̃_i = U_o s + b_U_o + V_o E y_{i-1} + C_o c_i          (2l units)
        t_i  = [max(t̃_{i,2j-1}, t̃_{i,2j})]_{j=1..l}             (maxout over adjacent pairs)
        logits_i = W_o t_i + b_W_o                               (p(y_i | ...) = softmax(logits_i))

    Which state s feeds it (s_i or s_{i-1}) is the decoder's choice (`ModelConfig.readout_state`).
    Works on any number of leading dimensions, so teacher forcing computes all positions at once.

    Args:
        maxout_dim: l.
        vocab_size: K_y.
        initializer: "paper", "uniform" or "xavier" (`initializers.INITIALIZERS`).
        dropout: dropout rate on t_i before W_o during training (0: none, the paper).

    Call arguments:
        state: float `(..., n)`.
        previous_embedding: E y_{i-1}, float `(..., m)`, or None with `projected_embedding`.
        context: c_i, float `(..., context_dim)`, or None with `projected_context`.
        training: whether dropout is applied.
        projected_context: optional C_o c_i, float `(..., 2l)`, instead of c_i: a decoder that averages
            C_o h with α_i (`project_context` once per sentence) reads a `2l`-wide context per position.
        projected_embedding: optional V_o E y_{i-1}, float `(..., 2l)`, instead of E y_{i-1}: a search
            over a shortlist projects each candidate word once (`Decoder.restrict`).
        output_columns: optional `(W_o[:, ids], b_W_o[ids])` of `output_columns(ids)`: the logits of
            those words only, `(..., len(ids))` (a vocabulary shortlist, Jean et al. 2015).

    Returns:
        logits: `(..., vocab_size)`, or `(..., len(ids))` with `output_columns`.

    Example:
    >>> readout = DeepOutput(maxout_dim=3, vocab_size=7)
    >>> readout(tf.ones((2, 5, 4)), tf.ones((2, 5, 2)), tf.ones((2, 5, 8))).shape
    TensorShape([2, 5, 7])
    """

    def __init__(self, maxout_dim, vocab_size, initializer="paper", dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.maxout_dim = maxout_dim
        self.vocab_size = vocab_size
        self.initializer = initializer
        self.dropout = dropout

    def build(self, state_shape, previous_embedding_shape, context_shape):
        def dense(units, name, use_bias, input_shape):
            layer = initialized_dense(units, self.initializer, use_bias=use_bias, dtype=self.dtype_policy, name=name)
            layer.build(input_shape)
            return layer

        self.state_projection = dense(2 * self.maxout_dim, "U_o", True, state_shape)
        self.embedding_projection = dense(2 * self.maxout_dim, "V_o", False, previous_embedding_shape)
        self.context_projection = dense(2 * self.maxout_dim, "C_o", False, context_shape)
        self.maxout_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy, name="maxout_dropout")
        self.output_projection = dense(self.vocab_size, "W_o", True, (*state_shape[:-1], self.maxout_dim))

    def project_context(self, context):
        """C_o c for any number of leading dimensions: `(..., context_dim)` -> `(..., 2l)`."""
        return self.context_projection(context)

    def output_columns(self, ids):
        """The columns of W_o `[l, len(ids)]` and entries of b_W_o `[len(ids)]` of the words `ids` (int32
        `[len(ids)]`), in the compute dtype: gathered once per batch for `call`'s `output_columns`."""
        kernel = tf.gather(self.output_projection.kernel, ids, axis=1)  # [l, len(ids)]
        bias = tf.gather(self.output_projection.bias, ids)  # [len(ids)]
        return tf.cast(kernel, self.compute_dtype), tf.cast(bias, self.compute_dtype)

    def call(self, state, previous_embedding=None, context=None, training=None, projected_context=None,
             projected_embedding=None, output_columns=None):
        if projected_embedding is None:
            if previous_embedding is None:
                raise ValueError("DeepOutput needs E y_{i-1} or its projection V_o E y_{i-1} (projected_embedding)")
            projected_embedding = self.embedding_projection(previous_embedding)  # V_o E y_{i-1}: [..., 2l]
        if projected_context is None:
            if context is None:
                raise ValueError("DeepOutput needs the context c_i or its projection C_o c_i (projected_context)")
            projected_context = self.project_context(context)  # C_o c_i: [..., 2l]
        pre_maxout = (
            self.state_projection(state) + projected_embedding + projected_context
        )  # t̃: [..., 2l]
        pairs = tf.reshape(
            pre_maxout, tf.concat([tf.shape(pre_maxout)[:-1], [self.maxout_dim, 2]], axis=0)
        )  # [..., l, 2]
        # The maximum of each pair by tf.maximum, whose gradient is one select: tf.reduce_max's shares
        # ties and is slower (docs/performance.md, "In the code").
        maxout = self.maxout_dropout(tf.maximum(*tf.unstack(pairs, axis=-1)), training=training)  # t: [..., l]
        if output_columns is None:
            return self.output_projection(maxout)  # [..., K_y]
        kernel, bias = output_columns  # [l, ids], [ids]
        return tf.matmul(maxout, kernel) + bias  # [..., ids] (rank 2: the decoder's step)

    def compute_output_shape(self, state_shape, previous_embedding_shape=None, context_shape=None):
        return (*state_shape[:-1], self.vocab_size)

    def paper_weights(self):
        """U_o `[n, 2l]`, b_U_o, V_o `[m, 2l]`, C_o `[context_dim, 2l]`, W_o `[l, K_y]`, b_W_o."""
        to_numpy = keras.ops.convert_to_numpy
        return {
            "U_o": to_numpy(self.state_projection.kernel),
            "b_U_o": to_numpy(self.state_projection.bias),
            "V_o": to_numpy(self.embedding_projection.kernel),
            "C_o": to_numpy(self.context_projection.kernel),
            "W_o": to_numpy(self.output_projection.kernel),
            "b_W_o": to_numpy(self.output_projection.bias),
        }

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "maxout_dim": self.maxout_dim,
                "vocab_size": self.vocab_size,
                "initializer": self.initializer,
                "dropout": self.dropout,
            }
        )
        return config
