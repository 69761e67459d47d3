"""Tests of `GreedySearch`: exact hand cases, and beam 1 == greedy on a recurrent fake model."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.search_test_models import (
    GREEDY_IS_NOT_BEST,
    BigramModel,
    HashModel,
    check_token_log_probs,
    hypotheses,
    numpy_result,
)

from data_pipeline import constants
from rnnsearch_tf.search.beam_search import BeamSearch
from rnnsearch_tf.search.greedy_search import GreedySearch

EOS = constants.EOS_ID


def test_greedy_takes_the_most_probable_token_each_step():
    model = BigramModel(GREEDY_IS_NOT_BEST)
    result = numpy_result(GreedySearch(model.symbols_to_logits_fn)({}, tf.constant([10, 10])))
    np.testing.assert_array_equal(result["ids"], [[[4, EOS] + [constants.PAD_ID] * 8]] * 2)
    assert model.calls == 2
    np.testing.assert_array_equal(result["lengths"], [[2], [2]])
    np.testing.assert_allclose(result["log_probs"], np.log([[0.56 * 0.37]] * 2), rtol=1e-5)
    np.testing.assert_allclose(result["alignments"][0, 0, :2], [[0, constants.BOS_ID], [1, 4]])
    np.testing.assert_array_equal(result["alignments"][0, 0, 2:], 0.0)


def test_scores_follow_the_length_normalization():
    model = BigramModel(GREEDY_IS_NOT_BEST)
    search = GreedySearch(
        model.symbols_to_logits_fn, length_normalization="gnmt", length_penalty_alpha=1.0
    )
    result = numpy_result(search({}, tf.constant([10])))
    np.testing.assert_allclose(result["scores"], [[np.log(0.56 * 0.37) / (7.0 / 6.0)]], rtol=1e-5)


@pytest.mark.parametrize("forbidden_ids", [(), (constants.UNK_ID, 5)])
def test_beam_one_equals_greedy_on_a_recurrent_model(forbidden_ids):
    model = HashModel(vocab_size=11, eos_logit_shift=-1.5, seed=3)
    initial_state = model.initial_state(batch_size=6, seed=4)
    maximum_lengths = tf.constant([3, 12, 12, 7, 1, 12])
    greedy_search = GreedySearch(model.symbols_to_logits_fn, forbidden_ids=forbidden_ids)
    beam_search = BeamSearch(model.symbols_to_logits_fn, beam_size=1, forbidden_ids=forbidden_ids)
    greedy = numpy_result(greedy_search(initial_state, maximum_lengths))
    beam = numpy_result(beam_search(initial_state, maximum_lengths))
    assert greedy["lengths"].max() > 4
    np.testing.assert_array_equal(greedy["ids"], beam["ids"])
    np.testing.assert_array_equal(greedy["lengths"], beam["lengths"])
    np.testing.assert_allclose(greedy["log_probs"], beam["log_probs"], rtol=1e-5)
    np.testing.assert_allclose(greedy["alignments"], beam["alignments"])
    for sentence in range(6):
        ids = hypotheses(greedy, sentence)[0]
        assert ids[-1] == EOS and not set(forbidden_ids) & set(ids)
        assert len(ids) <= maximum_lengths.numpy()[sentence]
        log_prob = model.sequence_log_prob(sentence, ids)
        np.testing.assert_allclose(greedy["log_probs"][sentence, 0], log_prob, atol=1e-4)
        outputs = greedy["alignments"][sentence, 0]
        np.testing.assert_allclose(outputs[: len(ids)], model.alignments(sentence, ids))
        np.testing.assert_array_equal(outputs[len(ids) :], 0.0)
    np.testing.assert_allclose(greedy["token_log_probs"], beam["token_log_probs"], atol=1e-5)
    check_token_log_probs(model, greedy)


def test_inside_tf_function_with_unknown_batch_size():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    search = GreedySearch(model.symbols_to_logits_fn)
    initial_state = model.initial_state(batch_size=3)
    translate = tf.function(search.__call__, reduce_retracing=True)
    spec = {
        "prefix_hash": tf.TensorSpec([None], tf.int32),
        "source": {"bias": tf.TensorSpec([None, 9], tf.float32)},
    }
    concrete = translate.get_concrete_function(spec, tf.TensorSpec([None], tf.int32))
    assert concrete.structured_outputs["ids"].shape.as_list() == [None, 1, None]
    graph_result = numpy_result(concrete(initial_state, tf.constant([4, 8, 2])))
    eager_result = numpy_result(search(initial_state, tf.constant([4, 8, 2])))
    for name in eager_result:
        np.testing.assert_allclose(graph_result[name], eager_result[name], rtol=1e-6)


def test_compiles_with_xla_given_an_int_maximum_length():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    search = GreedySearch(model.symbols_to_logits_fn)
    initial_state = model.initial_state(batch_size=2)
    compiled = numpy_result(tf.function(lambda state: search(state, 6), jit_compile=True)(initial_state))
    eager = numpy_result(search(initial_state, 6))
    assert compiled["ids"].shape == (2, 1, 6)
    np.testing.assert_array_equal(compiled["ids"], eager["ids"])
    np.testing.assert_allclose(compiled["log_probs"], eager["log_probs"], rtol=1e-5)


def test_misuse():
    with pytest.raises(ValueError, match="cannot be forbidden"):
        GreedySearch(BigramModel(GREEDY_IS_NOT_BEST).symbols_to_logits_fn, forbidden_ids=(EOS,))


def _padded_prefixes(prefixes):
    width = max(len(prefix) for prefix in prefixes)
    return tf.constant([prefix + [constants.PAD_ID] * (width - len(prefix)) for prefix in prefixes], tf.int32)


@pytest.mark.parametrize("forbidden_ids", [(), (constants.UNK_ID, 5)])
def test_beam_one_equals_greedy_with_a_prefix(forbidden_ids):
    model = HashModel(vocab_size=11, eos_logit_shift=-1.5, seed=3)
    initial_state = model.initial_state(batch_size=5, seed=4)
    maximum_lengths = tf.constant([3, 12, 12, 2, 12])
    prefixes = [[6], [constants.UNK_ID, 5, 7], [], [8, 8, 8], [5]]  # forced even where forbidden
    prefix_ids = _padded_prefixes(prefixes)
    greedy = numpy_result(GreedySearch(model.symbols_to_logits_fn, forbidden_ids=forbidden_ids).search(
        initial_state, maximum_lengths, prefix_ids=prefix_ids, num_alternatives=3))
    beam = numpy_result(BeamSearch(model.symbols_to_logits_fn, beam_size=1, forbidden_ids=forbidden_ids).search(
        initial_state, maximum_lengths, prefix_ids=prefix_ids, num_alternatives=3))
    for name in ("ids", "lengths", "alternative_ids"):
        np.testing.assert_array_equal(greedy[name], beam[name], err_msg=name)
    for name in ("log_probs", "alignments", "alternative_log_probs"):
        np.testing.assert_allclose(greedy[name], beam[name], rtol=1e-5, err_msg=name)
    for sentence, prefix in enumerate(prefixes):
        ids = hypotheses(greedy, sentence)[0]
        assert ids[: len(prefix)] == prefix and ids[-1] == EOS
        assert not set(forbidden_ids) & set(ids[len(prefix):])
        np.testing.assert_allclose(greedy["log_probs"][sentence, 0], model.sequence_log_prob(sentence, ids), atol=1e-4)
    assert hypotheses(greedy, 3)[0] == [8, 8, 8, EOS]  # the maximum length 2 raised to the prefix and EOS


def test_an_empty_prefix_gives_the_greedy_translation_bit_for_bit():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    initial_state = model.initial_state(batch_size=3)
    search = GreedySearch(model.symbols_to_logits_fn)
    free = numpy_result(search(initial_state, 8))
    prefixed = numpy_result(search.search(initial_state, 8, prefix_ids=tf.zeros([3, 2], tf.int32), num_alternatives=2))
    for name, value in free.items():
        np.testing.assert_array_equal(prefixed[name], value, err_msg=name)
    # The alternatives of an empty prefix are the most probable first words: the greedy one first.
    np.testing.assert_array_equal(prefixed["alternative_ids"][:, 0], free["ids"][:, 0, 0])
    np.testing.assert_allclose(
        prefixed["alternative_log_probs"][:, 0],
        [model.sequence_log_prob(sentence, free["ids"][sentence, 0, :1]) for sentence in range(3)], atol=1e-5,
    )


def test_a_prefix_of_the_greedy_translation_gives_the_same_translation_and_score():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    initial_state = model.initial_state(batch_size=3)
    search = GreedySearch(model.symbols_to_logits_fn)
    free = numpy_result(search(initial_state, 10))
    prefixes = [hypotheses(free, sentence)[0][:words] for sentence, words in enumerate([1, 2, 3])]
    prefixed = numpy_result(search.search(initial_state, 10, prefix_ids=_padded_prefixes(prefixes)))
    for name in ("ids", "lengths", "scores", "log_probs"):
        np.testing.assert_array_equal(prefixed[name], free[name], err_msg=name)


def test_prefix_compiles_with_xla():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    search = GreedySearch(model.symbols_to_logits_fn, forbidden_ids=(constants.UNK_ID,))
    initial_state = model.initial_state(batch_size=2)
    prefix_ids = tf.constant([[constants.UNK_ID, 6], [5, 0]])
    compiled = numpy_result(tf.function(
        lambda state, prefix: search.search(state, 6, prefix_ids=prefix, num_alternatives=3), jit_compile=True
    )(initial_state, prefix_ids))
    eager = numpy_result(search.search(initial_state, 6, prefix_ids=prefix_ids, num_alternatives=3))
    for name in ("ids", "lengths", "alternative_ids"):
        np.testing.assert_array_equal(compiled[name], eager[name], err_msg=name)
    np.testing.assert_allclose(compiled["log_probs"], eager["log_probs"], rtol=1e-5)
    assert list(compiled["ids"][0, 0, :2]) == [constants.UNK_ID, 6]
