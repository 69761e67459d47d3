"""rnnsearch_tf/search/search_strategy.py: what every strategy shares: the tiled state with its fixed entries
and the set-up of a call (`prepare`)."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.search_test_models import GREEDY_IS_NOT_BEST, BigramModel, HashModel, numpy_result

from rnnsearch_tf.search.beam_search import BeamSearch
from rnnsearch_tf.search.search_strategy import SearchStrategy


@pytest.mark.parametrize("model_class", ["RNNSearch", "RNNEncDec"])
def test_entries_left_out_of_the_new_state_are_fixed_one_row_per_sentence(model_class):
    import rnnsearch_tf
    from helpers.model_test_utils import padded_batch, randomize_weights, small_config
    from rnnsearch_tf.search.greedy_search import GreedySearch
    from rnnsearch_tf.search.sampler import Sampler

    model = getattr(rnnsearch_tf, model_class)(small_config())
    randomize_weights(model, seed=21)
    _, _, source_ids, _ = padded_batch()
    source_ids = tf.constant(source_ids)
    rows_read = []

    def fixed_step(ids, step, state):  # the model's own: new state {"s": s_i}, the rest fixed
        rows_read.append({name: int(value.shape[0]) for name, value in state.items()})
        return model.symbols_to_logits_fn(ids, step, state)

    def every_entry_changing(ids, step, state):  # returns every entry: each hypothesis gets its own rows
        logits, new_state, alignment = model.symbols_to_logits_fn(ids, step, state)
        return logits, dict(state, **new_state), alignment

    for make_search in (lambda fn: BeamSearch(fn, beam_size=4, num_hypotheses=2), GreedySearch,
                        lambda fn: Sampler(fn, num_samples=3, seed=2)):
        rows_read.clear()
        expected = numpy_result(make_search(every_entry_changing)(model.encode(source_ids), 9))
        actual = numpy_result(make_search(fixed_step)(model.encode(source_ids), 9))
        for name in ("ids", "lengths"):
            np.testing.assert_array_equal(actual[name], expected[name], err_msg=name)
        for name in ("scores", "log_probs", "alignments"):
            np.testing.assert_allclose(actual[name], expected[name], atol=1e-5, err_msg=name)
        hypotheses = set()
        for rows in rows_read:  # the rest: a row per sentence (still searched); s: a row per hypothesis
            sentences = {count for name, count in rows.items() if name != "s"}
            assert len(sentences) == 1 and rows["s"] % min(sentences) == 0, rows
            hypotheses.add(rows["s"] // min(sentences))
        assert max(hypotheses) == {BeamSearch: 4, GreedySearch: 1, Sampler: 3}[type(make_search(fixed_step))]


def test_the_tiled_state_repeats_changing_entries_and_keeps_fixed_ones():
    model = HashModel(vocab_size=9)
    state = model.initial_state(batch_size=2)

    def source_fixed(ids, step, state):  # returns only the hash: "source" is fixed
        logits, new_state, alignment = model.symbols_to_logits_fn(ids, step, state)
        return logits, {"prefix_hash": new_state["prefix_hash"]}, alignment

    assert SearchStrategy(model.symbols_to_logits_fn).tiled_state(state, 2, 1) is state
    every_entry = SearchStrategy(model.symbols_to_logits_fn).tiled_state(state, 2, 3)
    np.testing.assert_array_equal(every_entry["prefix_hash"].numpy(), np.repeat(model.initial_hashes, 3))
    np.testing.assert_array_equal(every_entry["source"]["bias"].numpy(),
                                  np.repeat(model.biases.astype(np.float32), 3, axis=0))
    tiled = SearchStrategy(source_fixed).tiled_state(state, 2, 3)
    np.testing.assert_array_equal(tiled["prefix_hash"].numpy(), np.repeat(model.initial_hashes, 3))
    assert tiled["source"] is state["source"]  # one row per sentence, as given


def test_prepare_raises_the_lengths_to_hold_a_prefix():
    search = SearchStrategy(BigramModel(GREEDY_IS_NOT_BEST).symbols_to_logits_fn)
    batch_size, maximum_lengths, bound, prefix = search.prepare({}, tf.constant([2, 6]))
    assert int(batch_size) == 2 and int(bound) == 6 and prefix is None
    _, maximum_lengths, bound, prefix = search.prepare({}, tf.constant([2, 6]), prefix_ids=[[4, 5, 4], [4, 0, 0]])
    np.testing.assert_array_equal(maximum_lengths.numpy(), [4, 6])  # room for the prefix and EOS
    assert int(bound) == 6
    np.testing.assert_array_equal(prefix.lengths.numpy(), [3, 1])
    _, maximum_lengths, bound, prefix = search.prepare({"s": tf.zeros([3, 1])}, 5, num_alternatives=2)
    np.testing.assert_array_equal(prefix.lengths.numpy(), [0, 0, 0])  # alternatives only: an empty prefix
    assert bound == 5 and isinstance(bound, int)
    with pytest.raises(ValueError, match="num_alternatives must be at least 0, got -1"):
        search.prepare({}, tf.constant([2]), num_alternatives=-1)
    with pytest.raises(NotImplementedError):
        search({}, tf.constant([2]))


def test_the_penalty_follows_the_options():
    search = SearchStrategy(BigramModel(GREEDY_IS_NOT_BEST).symbols_to_logits_fn, length_normalization="gnmt",
                            length_penalty_alpha=2.0)
    np.testing.assert_allclose(search.penalty(tf.constant([1, 7])).numpy(), [1.0, 4.0], rtol=1e-6)
