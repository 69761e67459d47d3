"""rnnsearch_tf/search/independent_search.py: the loop of hypotheses never reordered (`search_independently`)
against a NumPy run of the same choices."""

import numpy as np
import tensorflow as tf
from helpers.search_test_models import GREEDY_IS_NOT_BEST, UNIFORM, BigramModel, hypotheses, numpy_result

from data_pipeline import constants
from rnnsearch_tf.search.independent_search import IndependentSearch
from rnnsearch_tf.search.search_helpers import IMPOSSIBLE, LARGE_NEGATIVE

EOS = constants.EOS_ID


class RankedChoices(IndependentSearch):
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
