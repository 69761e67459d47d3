"""The alignment model a(s_{i-1}, h_j) of RNNsearch (Bahdanau et al. 2014, 3.1, A.1.2, A.2.2)."""

import keras
import tensorflow as tf

from rnnsearch_tf.layers.initializers import initialized_dense, initializer


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class AlignmentModel(keras.layers.Layer):
    """Soft alignment of one decoder state against all annotations of a sentence.

        e_ij = v_a^T tanh(W_a s_{i-1} + b_a + U_a h_j)
        α_ij = exp(e_ij) / Σ_k exp(e_ik)          (over real source positions only)
        c_i  = Σ_j α_ij h_j

    Built on `keras.layers.AdditiveAttention`, which computes `v_a^T tanh(q + k)` with its scale
    vector as v_a (`_AdditiveScores`: as one product with v_a); the projections W_a (with bias b_W_a)
    and U_a are this layer's. U_a h_j does not depend on i, so `precompute_keys` computes it once per
    sentence and the decoder passes it back in.

    Initialisation "paper" (Appendix B.1): W_a, U_a ~ N(0, 0.001²); v_a and b_W_a zero. With v_a = 0
    every α starts uniform and W_a, U_a get no gradient until v_a moves; "uniform" and "xavier"
    (`initializers.py`) start v_a random.

    Args:
        alignment_dim: n', hidden units of the alignment model.
        initializer: "paper", "uniform" or "xavier" (`initializers.INITIALIZERS`).

    Call arguments:
        previous_state: s_{i-1}, float `(batch_size, n)`, or `(batch_size, queries, n)`: several states
            of each sentence (the queries of `keras.layers.AdditiveAttention`) align against its
            annotations, keys, values and mask, which are then read once for all of them.
        annotations: h, float `(batch_size, src_len, 2n)`.
        source_mask: bool `(batch_size, src_len)`, False at padding; α is exactly 0 there.
        keys: optional U_a h from `precompute_keys`, float `(batch_size, src_len, n')`; computed when
            absent. A decoder passes it at every step so that U_a h is computed once per sentence.
        values: optional, what α_i averages instead of h: float `(batch_size, src_len, d)`. A linear
            map of the annotations, such as C h, gives the same map of c_i (Σ_j α_ij C h_j = C c_i), so a
            decoder that projects the annotations once per sentence skips C c_i at every step.

    Returns:
        `(context, alignment_weights)`, one per state of `previous_state`: c_i `(batch_size, [queries,] 2n)`
        (Σ_j α_ij values_j `(batch_size, [queries,] d)` with `values`) and α_i `(batch_size, [queries,] src_len)`.

    Example:
    >>> alignment = AlignmentModel(alignment_dim=5)
    >>> h = tf.ones((2, 4, 6))
    >>> context, weights = alignment(tf.ones((2, 3)), h,
    ...                              tf.constant([[True] * 4, [True, True, False, False]]))
    >>> context.shape, weights.shape
    (TensorShape([2, 6]), TensorShape([2, 4]))
    """

    def __init__(self, alignment_dim, initializer="paper", **kwargs):
        super().__init__(**kwargs)
        self.alignment_dim = alignment_dim
        self.initializer = initializer

    def build(self, previous_state_shape, annotations_shape, source_mask_shape=None, keys_shape=None):
        self.query_projection = initialized_dense(
            self.alignment_dim, self.initializer, "alignment", dtype=self.dtype_policy, name="W_a"
        )
        self.query_projection.build(previous_state_shape)
        self.key_projection = initialized_dense(
            self.alignment_dim, self.initializer, "alignment", use_bias=False, dtype=self.dtype_policy, name="U_a"
        )
        self.key_projection.build(annotations_shape)
        self.attention = _AdditiveScores(use_scale=True, dtype=self.dtype_policy, name="v_a")
        batch, src_len = annotations_shape[0], annotations_shape[1]
        self.attention.build(
            [(batch, 1, self.alignment_dim), tuple(annotations_shape), (batch, src_len, self.alignment_dim)]
        )
        v_a = initializer(self.initializer, "alignment_vector", vector_length=self.alignment_dim)
        self.attention.scale.assign(v_a(self.attention.scale.shape, self.attention.scale.dtype))

    def precompute_keys(self, annotations):
        """U_a h_j for every position: `(batch, src_len, 2n)` -> `(batch, src_len, n')`."""
        return self.key_projection(annotations)

    def call(self, previous_state, annotations, source_mask, keys=None, values=None):
        if keys is None:
            keys = self.precompute_keys(annotations)  # [batch, src_len, n']
        values = annotations if values is None else values
        batch = tf.shape(keys)[0]
        one_query = previous_state.shape.rank == 2
        query = self.query_projection(
            previous_state if one_query else tf.reshape(previous_state, [-1, previous_state.shape[-1]])
        )  # W_a s_{i-1} + b_a: [batch * queries, n'], one matrix product
        query = tf.reshape(query, [batch, -1, self.alignment_dim])  # [batch, queries, n']
        context, alignment_weights = self.attention(
            [query, values, keys], mask=[None, source_mask], return_attention_scores=True
        )  # [batch, queries, d], [batch, queries, src_len]
        if not one_query:
            return context, alignment_weights
        return (
            tf.reshape(context, [batch, values.shape[-1]]),  # [batch, d]
            tf.reshape(alignment_weights, [batch, tf.shape(keys)[1]]),  # [batch, src_len]
        )

    def paper_weights(self):
        """W_a `[n, n']`, b_W_a `[n']`, U_a `[2n, n']`, v_a `[n']`."""
        return {
            "W_a": keras.ops.convert_to_numpy(self.query_projection.kernel),
            "b_W_a": keras.ops.convert_to_numpy(self.query_projection.bias),
            "U_a": keras.ops.convert_to_numpy(self.key_projection.kernel),
            "v_a": keras.ops.convert_to_numpy(self.attention.scale),
        }

    def get_config(self):
        config = super().get_config()
        config.update({"alignment_dim": self.alignment_dim, "initializer": self.initializer})
        return config


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class _AdditiveScores(keras.layers.AdditiveAttention):
    """`keras.layers.AdditiveAttention` with e = tanh(q + k) v_a as one product with v_a instead of an
    element-wise product summed: one pass less over the `[batch, Tq, Tv, n']` tanh, forward and backward."""

    def _calculate_scores(self, query, key):
        # expand_dims, not [:, :, tf.newaxis]: a slice's gradient is a StridedSliceGrad, expand_dims' a reshape.
        hidden = tf.tanh(tf.expand_dims(query, 2) + tf.expand_dims(key, 1))  # [batch, Tq, Tv, n']
        # One 2-D matmul, written out: tf.tensordot's gradient inside the decoder's scan transposes by a computed
        # permutation that XLA (`jit_compile`) cannot compile on the training input's dynamic shapes, and
        # tf.linalg.matvec's broadcast batch matmul returns garbage (or crashes) for some shapes under oneDNN on CPU.
        scores = tf.matmul(
            tf.reshape(hidden, [-1, self.scale.shape[0]]), tf.expand_dims(self.scale, 1)
        )  # [batch * Tq * Tv, 1]
        return tf.reshape(scores, tf.shape(hidden)[:-1])  # [batch, Tq, Tv]
