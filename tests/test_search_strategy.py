"""rnnsearch_tf/search/search_strategy.py: what every strategy shares: the loop of independent hypotheses
(`search_independently`) against a NumPy run of the same choices, the tiled state with its fixed entries,
and the set-up of a call (`prepare`)."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.search_test_models import GREEDY_IS_NOT_BEST, UNIFORM, BigramModel, HashModel, hypotheses, numpy_result

from data_pipeline import constants
from rnnsearch_tf.search.beam_search import BeamSearch
from rnnsearch_tf.search.search_helpers import IMPOSSIBLE, LARGE_NEGATIVE
from rnnsearch_tf.search.search_strategy import SearchStrategy

EOS = constants.EOS_ID


class RankedChoices(SearchStrategy):
    """Hypothesis j of each sentence takes, at every step, the (j + 1)-th most probable possible token (the
    most probable one where fewer are possible): a strategy whose hypotheses differ without randomness.
    Records the logits `choose_ids` gets."""

    def __init__(self, symbols_to_logits_fn, count, **kwargs):
        super().__init__(symbols_to_logits_fn, **kwargs)
        self.count = count
        self.seen = []

    def search(self, initial_state, maximum_lengths, prefix_ids=None, num_alternatives=0):
        return self.search_independently(initial_state, maximum_lengths, self.count, self.choose_ids, prefix_ids,
                                         num_alternatives)

    def choose_ids(self, logits, step):
        self.seen.append(logits.numpy())
        ranks = tf.tile(tf.range(self.count), [tf.shape(logits)[0] // self.count])  # [batch * count]
        order = tf.argsort(logits, axis=-1, direction="DESCENDING", stable=True)  # [batch * count, vocab]
        chosen = tf.gather(order, ranks, batch_dims=1)  # [batch * count]
        possible = tf.gather(logits, chosen, batch_dims=1) > IMPOSSIBLE
        return tf.where(possible, chosen, order[:, 0])


def numpy_ranked_choices(model, rank, maximum_length, forbidden_ids):
    """NumPy: the tokens of `RankedChoices`'s hypothesis `rank` on a BigramModel, and the logits it sees."""
    ids, seen, previous = [], [], constants.BOS_ID
    for step in range(maximum_length):
        restricted = model.log_probs[previous].copy()
        restricted[list(forbidden_ids)] = LARGE_NEGATIVE
        if step + 1 >= maximum_length:
            restricted[np.arange(len(restricted)) != EOS] = LARGE_NEGATIVE
        seen.append(restricted)
        order = np.argsort(-restricted, kind="stable")
        token = int(order[rank] if restricted[order[rank]] > IMPOSSIBLE else order[0])
        ids.append(token)
        if token == EOS:
            break
        previous = token
    return ids, seen


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


def test_independent_hypotheses_take_their_choices_and_are_ranked_by_score():
    model = BigramModel(GREEDY_IS_NOT_BEST)
    forbidden = (constants.PAD_ID, constants.BOS_ID, constants.UNK_ID)
    search = RankedChoices(model.symbols_to_logits_fn, 3, forbidden_ids=forbidden, length_normalization="length")
    maximum_lengths = [4, 2]
    result = numpy_result(search({}, tf.constant(maximum_lengths)))
    assert result["ids"].shape == (2, 3, 4) and result["alignments"].shape == (2, 3, 4, 2)
    for sentence, maximum_length in enumerate(maximum_lengths):
        expected = [numpy_ranked_choices(model, rank, maximum_length, forbidden)[0] for rank in range(3)]
        log_probs = np.array([model.sequence_log_prob(ids) for ids in expected])  # the model's own log p
        scores = log_probs / np.array([len(ids) for ids in expected])
        order = np.argsort(-scores, kind="stable")
        assert hypotheses(result, sentence) == [expected[rank] for rank in order]
        np.testing.assert_allclose(result["log_probs"][sentence], log_probs[order], rtol=1e-5)
        np.testing.assert_allclose(result["scores"][sentence], scores[order], rtol=1e-5)
        for rank, ids in enumerate(hypotheses(result, sentence)):
            np.testing.assert_array_equal(result["ids"][sentence, rank, len(ids):], constants.PAD_ID)
            previous = [constants.BOS_ID] + ids[:-1]  # BigramModel records [step, previous id]
            np.testing.assert_array_equal(result["alignments"][sentence, rank, :len(ids)],
                                          np.stack([np.arange(len(ids)), previous], axis=1))
            np.testing.assert_array_equal(result["alignments"][sentence, rank, len(ids):], 0.0)
    assert max(len(ids) for ids in hypotheses(result, 0)) == 4  # "b b b EOS": EOS forced at the maximum length


def test_choose_ids_gets_impossible_tokens_at_large_negative_and_the_rest_as_the_model_gave_them():
    model = BigramModel(GREEDY_IS_NOT_BEST)
    search = RankedChoices(model.symbols_to_logits_fn, 1, forbidden_ids=(constants.UNK_ID,))
    search({}, tf.constant([3]))
    _, expected = numpy_ranked_choices(model, 0, 3, (constants.UNK_ID,))
    assert len(search.seen) == len(expected) == 2  # greedy: "a" then EOS
    for seen, restricted in zip(search.seen, expected):
        np.testing.assert_allclose(seen[0], restricted, rtol=1e-6)
        assert seen[0, constants.UNK_ID] == LARGE_NEGATIVE


def test_the_loop_stops_once_every_hypothesis_has_ended():
    model = BigramModel([UNIFORM, [0.01, 0.01, 0.9, 0.01, 0.06, 0.01]] + [UNIFORM] * 4)  # EOS first after BOS
    search = RankedChoices(model.symbols_to_logits_fn, 1)
    result = numpy_result(search({}, tf.constant([50, 50])))
    assert model.calls == 1 and result["ids"].shape == (2, 1, 50)
    np.testing.assert_array_equal(result["lengths"], [[1], [1]])


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
