"""rnnsearch_tf/search/target_prefix.py: the lengths of right-padded prefixes, the forced token of each step,
the first free position and the room a prefix needs."""

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline import constants
from rnnsearch_tf.search.target_prefix import TargetPrefix

PAD = constants.PAD_ID


def numpy_forced_ids(prefixes, step):
    """NumPy: the token each prefix forces at `step`, -1 where the sentence is free."""
    return [prefix[step] if step < len(prefix) else -1 for prefix in prefixes]


def test_forced_ids_and_the_first_free_position_of_each_sentence():
    prefixes = [[4, 5], [], [7, 3, 2], [6]]  # forced tokens may be forbidden ones (3: <unk>) or EOS (2)
    width = 4
    prefix = TargetPrefix(tf.constant([p + [PAD] * (width - len(p)) for p in prefixes]))
    np.testing.assert_array_equal(prefix.lengths.numpy(), [len(p) for p in prefixes])
    assert prefix.static_length == width
    for step in range(width + 3):  # beyond the prefixes' width too
        np.testing.assert_array_equal(prefix.forced_ids(tf.constant(step)).numpy(), numpy_forced_ids(prefixes, step))
        np.testing.assert_array_equal(prefix.is_first_free(tf.constant(step)).numpy(),
                                      [len(p) == step for p in prefixes])


def test_the_last_token_that_is_not_padding_ends_the_prefix():
    prefix = TargetPrefix([[4, PAD, 5, PAD], [PAD, PAD, PAD, PAD]])
    np.testing.assert_array_equal(prefix.lengths.numpy(), [3, 0])
    np.testing.assert_array_equal(prefix.forced_ids(1).numpy(), [PAD, -1])  # padding inside a prefix is forced


def test_the_docstring_example():
    prefix = TargetPrefix(tf.constant([[4, 5], [0, 0]]))
    np.testing.assert_array_equal(prefix.lengths.numpy(), [2, 0])
    np.testing.assert_array_equal(prefix.forced_ids(1).numpy(), [5, -1])


def test_an_empty_prefix_forces_nothing():
    prefix = TargetPrefix.empty(3)
    assert prefix.static_length == 0
    np.testing.assert_array_equal(prefix.lengths.numpy(), [0, 0, 0])
    np.testing.assert_array_equal(prefix.forced_ids(0).numpy(), [-1, -1, -1])
    assert prefix.is_first_free(0).numpy().all() and not prefix.is_first_free(1).numpy().any()


def test_with_room_raises_each_maximum_length_to_hold_its_prefix_and_eos():
    prefix = TargetPrefix([[4, 5, 6, 7], [4, 0, 0, 0], [0, 0, 0, 0]])
    maximum_lengths, bound = prefix.with_room(tf.constant([2, 2, 9]), 9)
    np.testing.assert_array_equal(maximum_lengths.numpy(), [5, 2, 9])
    assert bound == 9 and isinstance(bound, int)  # static, for XLA
    _, bound = prefix.with_room(tf.constant([2, 2, 3]), 3)
    assert bound == 5 and isinstance(bound, int)  # the width of the prefixes and EOS
    _, bound = prefix.with_room(tf.constant([2, 2, 3]), tf.constant(3))
    assert int(bound) == 5  # a tensor bound: the longest prefix and EOS


def test_with_room_of_a_prefix_of_unknown_width_is_a_tensor():
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def room(prefix_ids):
        prefix = TargetPrefix(prefix_ids)
        assert prefix.static_length is None  # checked when tracing
        return prefix.with_room(tf.constant([3, 3]), 3)

    maximum_lengths, bound = room(tf.constant([[4, 5, 6, 0, 0, 0], [4, 0, 0, 0, 0, 0]]))
    np.testing.assert_array_equal(maximum_lengths.numpy(), [4, 3])
    assert int(bound) == 4  # the longest prefix (3 tokens) and EOS, not the padded width


def test_prefix_ids_must_be_a_matrix():
    with pytest.raises(ValueError, match=r"prefix_ids must be \[batch, prefix_len\], got shape \(2,\)"):
        TargetPrefix([4, 5])
