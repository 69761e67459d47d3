"""rnnsearch_tf/inference/word_alignment.py: the attention over words against a NumPy transcription."""

import numpy as np
import tensorflow as tf

from rnnsearch_tf.inference.word_alignment import word_alignment


def test_word_alignment_sums_source_pieces_and_averages_target_pieces():
    rng = np.random.default_rng(0)
    alignment = rng.dirichlet(np.ones(5), size=(2, 4)).astype(np.float32)  # [batch, tgt_len, src_len]
    target_index = np.array([[0, 0, 1, 2], [0, 1, -1, -1]], np.int32)
    source_index = np.array([[0, 1, 1, 2, 3], [0, 0, 0, 1, -1]], np.int32)
    expected = np.zeros((2, 3, 4), np.float32)
    for batch in range(2):
        for target_word in range(3):
            rows = alignment[batch][target_index[batch] == target_word]
            if len(rows):
                for source_word in range(4):
                    expected[batch, target_word, source_word] = rows[:, source_index[batch] == source_word].sum(1).mean()
    actual = word_alignment(tf.constant(alignment), tf.constant(target_index), tf.constant(source_index))
    np.testing.assert_allclose(actual, expected, rtol=1e-6)
    np.testing.assert_allclose(actual.numpy()[0].sum(axis=1), 1.0, rtol=1e-6)  # a full row stays a distribution
