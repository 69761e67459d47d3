"""rnnsearch_tf/search/search_helpers.py: length penalties, impossible tokens, next-word alternatives, fixed
state entries and shapes, each against a NumPy transcription."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.search_test_models import GREEDY_IS_NOT_BEST, BigramModel, log_softmax

from data_pipeline import constants
from rnnsearch_tf.search.beam_search import BeamSearch
from rnnsearch_tf.search.search_helpers import (
    IMPOSSIBLE,
    LARGE_NEGATIVE,
    batch_size_and_maximum_lengths,
    broadcast_mask,
    check_search_options,
    impossible_tokens,
    length_penalty,
    next_word_alternatives,
    no_alternatives,
    repeat_rows,
    restrict_log_probs,
    split_leading_dimension,
    updated_alternatives,
)

EOS = constants.EOS_ID


@pytest.mark.parametrize(
    "length_normalization, alpha, numpy_penalty",
    [
        ("none", 0.6, lambda n, alpha: np.ones_like(n)),
        ("length", 0.6, lambda n, alpha: n),
        ("gnmt", 0.6, lambda n, alpha: ((5.0 + n) / 6.0) ** alpha),  # Wu et al. 2016, Eq. 14
        ("gnmt", 0.0, lambda n, alpha: np.ones_like(n)),
        ("gnmt", 1.0, lambda n, alpha: (5.0 + n) / 6.0),
    ],
)
def test_length_penalty_is_the_divisor_of_each_normalization(length_normalization, alpha, numpy_penalty):
    lengths = np.array([[1, 2, 7], [13, 40, 100]])
    penalty = length_penalty(tf.constant(lengths, tf.int32), length_normalization, alpha)
    assert penalty.dtype == tf.float32 and penalty.shape == (2, 3)
    np.testing.assert_allclose(penalty.numpy(), numpy_penalty(lengths.astype(np.float64), alpha), rtol=1e-6)


def test_an_unknown_length_normalization_is_refused():
    with pytest.raises(ValueError, match=r"length_normalization must be one of \('none', 'length', 'gnmt'\)"):
        length_penalty(tf.constant([3]), "average")


def test_restrict_log_probs_forbids_tokens_and_leaves_only_eos_at_the_last_step():
    rng = np.random.default_rng(0)
    log_probs = rng.normal(size=(3, 2, 7)).astype(np.float32)  # [batch, hypotheses, vocab]
    maximum_lengths = np.array([3, 4, 9])
    step = 2  # the last step of sentence 0 (3 tokens), not of the others
    restricted = restrict_log_probs(tf.constant(log_probs), tf.constant(step), tf.constant(maximum_lengths, tf.int32),
                                    (3, 5), EOS).numpy()
    expected = log_probs.copy()
    expected[:, :, [3, 5]] = LARGE_NEGATIVE
    last = step + 1 >= maximum_lengths  # [batch]
    expected[np.ix_(last, [0, 1], [t for t in range(7) if t != EOS])] = LARGE_NEGATIVE
    np.testing.assert_array_equal(restricted, expected)  # the rest exactly the model's, not renormalised
    assert (restricted[0] > IMPOSSIBLE).sum() == 2  # one possible token (EOS) per hypothesis


def test_impossible_tokens_of_a_few_tokens_per_sentence():
    token_ids = tf.constant([[2, 3, 7], [7, 2, 9]])  # [batch, asked]: each sentence asks about its own tokens
    impossible = impossible_tokens(token_ids, tf.constant([True, False]), (3, 9), EOS).numpy()
    np.testing.assert_array_equal(impossible, [[False, True, True], [False, False, True]])
    shared = impossible_tokens(tf.range(5)[None, None, :], tf.constant([False, True]), (), EOS)  # [1, 1, vocab]
    assert shared.shape == (2, 1, 5)
    np.testing.assert_array_equal(shared.numpy()[:, 0], [[False] * 5, [True, True, False, True, True]])


def test_next_word_alternatives_are_the_k_most_probable_possible_tokens():
    rng = np.random.default_rng(1)
    logits = rng.normal(scale=3.0, size=(4, 9)).astype(np.float32)
    logits[0, 3] = 20.0  # a forbidden token is the most probable one
    logits[1, EOS] = 20.0  # EOS is offered like any word
    forbidden = (constants.PAD_ID, constants.BOS_ID, 3)
    log_probs, ids = next_word_alternatives(tf.constant(logits), 4, forbidden)
    expected_log_probs = log_softmax(logits)  # the model's own log p: not renormalised without the forbidden
    expected_log_probs[:, list(forbidden)] = -np.inf
    expected_ids = np.argsort(-expected_log_probs, axis=1, kind="stable")[:, :4]
    np.testing.assert_array_equal(ids.numpy(), expected_ids)
    np.testing.assert_allclose(log_probs.numpy(), np.take_along_axis(expected_log_probs, expected_ids, 1), atol=1e-5)
    assert ids.numpy()[1, 0] == EOS and 3 not in ids.numpy()


def test_next_word_alternatives_beyond_the_possible_tokens_are_empty():
    log_probs, ids = next_word_alternatives(tf.constant([[0.0, 1.0, 2.0, 3.0, 4.0]]), 7, (constants.PAD_ID, 4))
    np.testing.assert_array_equal(ids.numpy(), [[3, 2, 1, 0, 0, 0, 0]])  # PAD_ID where nothing is left
    expected = log_softmax([[0.0, 1.0, 2.0, 3.0, 4.0]])[0, [3, 2, 1]]
    np.testing.assert_allclose(log_probs.numpy()[0, :3], expected, atol=1e-6)
    assert np.all(log_probs.numpy()[0, 3:] == -np.inf)


def test_alternatives_are_replaced_only_where_a_sentence_is_at_its_first_free_position():
    old = no_alternatives(3, 2)
    np.testing.assert_array_equal(old[0].numpy(), np.full([3, 2], -np.inf))
    np.testing.assert_array_equal(old[1].numpy(), np.full([3, 2], constants.PAD_ID))
    computed = []

    def compute():
        computed.append(True)
        return tf.constant([[-0.1, -0.2], [-0.3, -0.4], [-0.5, -0.6]]), tf.constant([[4, 5], [6, 7], [8, 9]])

    log_probs, ids = updated_alternatives(old, tf.constant([False, True, False]), compute)
    np.testing.assert_array_equal(ids.numpy(), [[0, 0], [6, 7], [0, 0]])
    np.testing.assert_allclose(log_probs.numpy(), [[-np.inf, -np.inf], [-0.3, -0.4], [-np.inf, -np.inf]])
    assert len(computed) == 1
    kept = updated_alternatives((log_probs, ids), tf.constant([False, False, False]), compute)
    np.testing.assert_array_equal(kept[1].numpy(), ids.numpy())
    assert len(computed) == 1  # no sentence at its first free position: nothing computed


def test_search_options_no_strategy_accepts():
    check_search_options("gnmt", (constants.UNK_ID,), EOS)
    with pytest.raises(ValueError, match="length_normalization must be one of"):
        check_search_options("max", (), EOS)
    with pytest.raises(ValueError, match="eos_id=2 cannot be forbidden"):
        check_search_options("none", (constants.UNK_ID, EOS), EOS)


def test_repeat_rows_keeps_a_sentences_copies_adjacent():
    structure = {"s": tf.constant([[1, 2], [3, 4]]), "nested": (tf.constant([5, 6]),)}
    repeated = repeat_rows(structure, 3)
    np.testing.assert_array_equal(repeated["s"].numpy(), [[1, 2]] * 3 + [[3, 4]] * 3)
    np.testing.assert_array_equal(repeated["nested"][0].numpy(), [5, 5, 5, 6, 6, 6])


def test_int_maximum_length_needs_a_state_to_read_the_batch_size():
    search = BeamSearch(BigramModel(GREEDY_IS_NOT_BEST).symbols_to_logits_fn, beam_size=2)
    with pytest.raises(ValueError, match="batch size"):
        search({}, 5)


def test_fixed_entries_are_those_a_step_leaves_out_of_its_new_state():
    from rnnsearch_tf.search.search_helpers import fixed_entries, merged_state

    s, annotations = tf.zeros([6, 2]), tf.ones([3, 4])
    state = {"s": s, "annotations": annotations}
    fixed = fixed_entries(state, {"s": s + 1})
    assert list(fixed) == ["annotations"] and fixed["annotations"] is annotations
    assert fixed_entries(state, dict(state)) == {}  # returned, even unchanged: changing
    assert fixed_entries((s, annotations), (s, annotations)) == {} == fixed_entries(state, (s,))
    assert merged_state(state, {"s": s + 1})["annotations"] is annotations
    assert merged_state((s,), (annotations,))[0] is annotations


def test_batch_size_and_maximum_lengths_of_an_int_and_of_a_tensor():
    state = {"annotations": tf.zeros([3, 5, 2])}
    batch_size, maximum_lengths, bound = batch_size_and_maximum_lengths(state, 7)
    assert int(batch_size) == 3 and bound == 7 and isinstance(bound, int)  # static, for XLA
    np.testing.assert_array_equal(maximum_lengths.numpy(), [7, 7, 7])
    batch_size, maximum_lengths, bound = batch_size_and_maximum_lengths({}, np.array([4, 9], np.int64))
    assert int(batch_size) == 2 and maximum_lengths.dtype == tf.int32 and int(bound) == 9
    np.testing.assert_array_equal(maximum_lengths.numpy(), [4, 9])
    with pytest.raises(ValueError, match="maximum_lengths must be at least 1, got 0"):
        batch_size_and_maximum_lengths(state, 0)
    with pytest.raises(ValueError, match=r"an int or a \[batch\] tensor, got shape \(1, 2\)"):
        batch_size_and_maximum_lengths(state, tf.constant([[4, 9]]))


def test_split_leading_dimension_keeps_the_known_trailing_dimensions():
    @tf.function(input_signature=[tf.TensorSpec([None, 4, 3], tf.float32), tf.TensorSpec([], tf.int32)])
    def split(tensor, batch_size):
        split = split_leading_dimension(tensor, batch_size, 2)
        assert split.shape.rank == 4 and split.shape.as_list()[2:] == [4, 3]  # checked when tracing
        return split

    values = np.arange(6 * 4 * 3, dtype=np.float32).reshape(6, 4, 3)
    np.testing.assert_array_equal(split(values, 3).numpy(), values.reshape(3, 2, 4, 3))


def test_broadcast_mask_reaches_the_trailing_dimensions():
    mask = tf.constant([[True, False], [False, True]])  # [batch, hypotheses]
    tensor = tf.reshape(tf.range(2 * 2 * 3 * 2, dtype=tf.float32), [2, 2, 3, 2])
    broadcast = broadcast_mask(mask, tensor)
    assert broadcast.shape == (2, 2, 1, 1)
    masked = tf.where(broadcast, 0.0, tensor).numpy()
    expected = tensor.numpy().copy()
    expected[mask.numpy()] = 0.0
    np.testing.assert_array_equal(masked, expected)
