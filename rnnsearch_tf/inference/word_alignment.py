"""The attention over words of a subword translation, from the attention over its pieces."""

import tensorflow as tf


def word_alignment(alignment, target_word_index, source_word_index):
    """The attention over words from the attention over tokens: a word's source tokens summed (a row
    stays a distribution over the source), its target tokens averaged (each of them attends).

    Args:
        alignment: float32 `[batch, target_length, source_length]`, α_ij of token i on token j.
        target_word_index: int32 `[batch, target_length]`, word of each target token, -1 for padding
            (`TextCodec.words`).
        source_word_index: int32 `[batch, source_length]`, the same for the source.

    Returns:
        float32 `[batch, target_words, source_words]`.

    Example:
    >>> word_alignment(tf.constant([[[0.5, 0.25, 0.25], [0.0, 1.0, 0.0]]]), tf.constant([[0, 0]]),
    ...                tf.constant([[0, 0, 1]]))  # two target pieces of one word, two source words
    <tf.Tensor: shape=(1, 1, 2), dtype=float32, numpy=array([[[0.875, 0.125]]], dtype=float32)>
    """
    target_words = tf.reduce_max(target_word_index) + 1
    source_words = tf.reduce_max(source_word_index) + 1
    source_onehot = tf.one_hot(source_word_index, tf.maximum(source_words, 0))  # [batch, src_len, src_words]
    target_onehot = tf.one_hot(target_word_index, tf.maximum(target_words, 0))  # [batch, tgt_len, tgt_words]
    summed = tf.linalg.matmul(alignment, source_onehot)  # [batch, tgt_len, src_words]
    totals = tf.linalg.matmul(target_onehot, summed, transpose_a=True)  # [batch, tgt_words, src_words]
    counts = tf.reduce_sum(target_onehot, axis=1)  # [batch, tgt_words]
    return tf.math.divide_no_nan(totals, counts[:, :, None])
