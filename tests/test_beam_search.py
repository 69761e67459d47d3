"""Tests of `BeamSearch` with fake step functions and exact expected hypotheses."""

import itertools

import numpy as np
import pytest
import tensorflow as tf
from helpers.search_test_models import (
    GREEDY_IS_NOT_BEST,
    UNIFORM,
    BigramModel,
    HashModel,
    check_token_log_probs,
    hypotheses,
    numpy_result,
)

from data_pipeline import constants
from rnnsearch_tf.search.beam_search import BeamSearch

EOS = constants.EOS_ID
# "EOS" alone (0.40) beats "a EOS" (0.56 * 0.60 = 0.336) on log-probability, not per token.
SHORT_IS_MOST_PROBABLE = [
    UNIFORM,
    [0.01, 0.01, 0.40, 0.01, 0.56, 0.01],
    UNIFORM,
    UNIFORM,
    [0.01, 0.01, 0.60, 0.01, 0.20, 0.17],
    UNIFORM,
]


def brute_force_best(model, maximum_length, score, count):
    """The `count` best complete sequences by `score(log_prob, length)`, over all sequences."""
    ranked = sorted(model.all_sequences(maximum_length), key=lambda pair: -score(pair[1], len(pair[0])))
    return ranked[:count]


def test_beam_two_finds_the_sequence_greedy_misses():
    model = BigramModel(GREEDY_IS_NOT_BEST)
    result = numpy_result(BeamSearch(model.symbols_to_logits_fn, beam_size=2)({}, tf.constant([10])))
    assert hypotheses(result, 0) == [[5, EOS]]
    np.testing.assert_allclose(result["log_probs"], [[np.log(0.40 * 0.90)]], rtol=1e-5)
    np.testing.assert_allclose(result["scores"], result["log_probs"])
    np.testing.assert_array_equal(result["ids"][0, 0], [5, EOS] + [constants.PAD_ID] * 8)
    assert model.calls == 2  # stopped once "b EOS" could not be beaten

    greedy_like = numpy_result(BeamSearch(model.symbols_to_logits_fn, beam_size=1)({}, tf.constant([10])))
    assert hypotheses(greedy_like, 0) == [[4, EOS]]
    np.testing.assert_allclose(greedy_like["log_probs"], [[np.log(0.56 * 0.37)]], rtol=1e-5)


def test_n_best_of_beam_three_is_exact_and_matches_brute_force():
    model = BigramModel(GREEDY_IS_NOT_BEST)
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=3)
    result = numpy_result(search({}, tf.constant([6, 6])))
    expected = [[5, EOS], [4, EOS], [4, 5, EOS]]
    expected_log_probs = np.log([0.40 * 0.90, 0.56 * 0.37, 0.56 * 0.30 * 0.90])
    for sentence in range(2):
        assert hypotheses(result, sentence) == expected
        np.testing.assert_allclose(result["log_probs"][sentence], expected_log_probs, rtol=1e-5)
        np.testing.assert_array_equal(result["lengths"][sentence], [2, 2, 3])
    assert [ids for ids, _ in brute_force_best(model, 6, lambda lp, n: lp, 3)] == expected
    np.testing.assert_array_equal(result["ids"][0, 0], [5, EOS] + [constants.PAD_ID] * 4)
    assert model.calls == 3  # "a b EOS" ends at the third step, then nothing alive can beat it


def test_first_step_computes_one_hypothesis_per_sentence():
    # Every copy of a sentence starts as BOS with the same state: the first step computes one row per
    # sentence and stands for all copies, here with 2 * beam candidates wanted from a 6-word vocabulary.
    model, rows = BigramModel(GREEDY_IS_NOT_BEST), []

    def counted(ids, step, state):
        rows.append(int(tf.shape(ids)[0]))
        return model.symbols_to_logits_fn(ids, step, state)

    search = BeamSearch(counted, beam_size=4, num_hypotheses=4, drop_finished=False)
    result = numpy_result(search({}, tf.constant([6, 6])))
    assert rows[0] == 2 and set(rows[1:]) == {8}
    expected = brute_force_best(BigramModel(GREEDY_IS_NOT_BEST), 6, lambda lp, n: lp, 4)
    for sentence in range(2):
        assert hypotheses(result, sentence) == [ids for ids, _ in expected]
        np.testing.assert_allclose(result["log_probs"][sentence], [lp for _, lp in expected], rtol=1e-5)


@pytest.mark.parametrize(
    "length_normalization, alpha, expected",
    [("none", 0.6, [EOS]), ("length", 0.6, [4, EOS]), ("gnmt", 0.6, [EOS]), ("gnmt", 2.0, [4, EOS])],
)
def test_length_normalization_changes_the_ranking(length_normalization, alpha, expected):
    model = BigramModel(SHORT_IS_MOST_PROBABLE)
    penalty = {
        "none": lambda length: 1.0,
        "length": lambda length: length,
        "gnmt": lambda length: ((5.0 + length) / 6.0) ** alpha,
    }[length_normalization]
    search = BeamSearch(
        model.symbols_to_logits_fn,
        beam_size=3,
        length_normalization=length_normalization,
        length_penalty_alpha=alpha,
    )
    result = numpy_result(search({}, tf.constant([5])))
    assert hypotheses(result, 0) == [expected]
    log_prob = model.sequence_log_prob(expected)
    np.testing.assert_allclose(result["log_probs"], [[log_prob]], rtol=1e-5)
    np.testing.assert_allclose(result["scores"], [[log_prob / penalty(len(expected))]], rtol=1e-5)
    best = brute_force_best(model, 5, lambda lp, n: lp / penalty(n), 1)
    assert best[0][0] == expected


# "a EOS" is the most probable candidate of step 2, "a b EOS" the best per token (log p / length).
BEST_ENDS_EARLY = [
    UNIFORM,
    [0.01, 0.01, 0.45, 0.01, 0.50, 0.02],  # after BOS: a 0.50, EOS 0.45
    UNIFORM,
    UNIFORM,
    [0.01, 0.01, 0.50, 0.01, 0.02, 0.45],  # after a: EOS 0.50, b 0.45
    [0.002, 0.002, 0.99, 0.002, 0.002, 0.002],  # after b: EOS 0.99
]


def test_early_stopping_ends_a_sentence_when_its_best_candidate_ends():
    searches = {}
    for early_stopping in (False, True):
        model = BigramModel(BEST_ENDS_EARLY)
        search = BeamSearch(model.symbols_to_logits_fn, beam_size=2, length_normalization="length",
                            early_stopping=early_stopping)
        searches[early_stopping] = (numpy_result(search({}, tf.constant([5]))), model.calls)
    (exact, exact_calls), (early, early_calls) = searches[False], searches[True]
    assert hypotheses(exact, 0) == [[4, 5, EOS]] and exact_calls > 2
    assert brute_force_best(BigramModel(BEST_ENDS_EARLY), 5, lambda lp, n: lp / n, 1)[0][0] == [4, 5, EOS]
    assert hypotheses(early, 0) == [[4, EOS]] and early_calls == 2  # "a EOS" topped step 2
    np.testing.assert_allclose(early["scores"], [[np.log(0.50 * 0.50) / 2]], rtol=1e-5)


def test_early_stopping_finds_no_better_hypothesis_in_fewer_steps():
    model = HashModel(vocab_size=9, eos_logit_shift=-0.5)
    initial_state = model.initial_state(batch_size=8)
    results, steps = {}, {}
    for early_stopping in (False, True):
        rows = []  # hypotheses computed at each step (eager: one call per step)

        def counted(ids, step, state):
            rows.append(int(tf.shape(ids)[0]))
            return model.symbols_to_logits_fn(ids, step, state)

        search = BeamSearch(counted, beam_size=3, num_hypotheses=2, length_normalization="length",
                            early_stopping=early_stopping)
        results[early_stopping], steps[early_stopping] = numpy_result(search(initial_state, 12)), sum(rows)
    # Both searches are the same until early stopping ends a sentence: its finished hypotheses are a
    # subset of the exact search's.
    assert np.all(results[True]["scores"] <= results[False]["scores"] + 1e-6)
    assert steps[True] < steps[False]  # fewer hypothesis-steps computed


def test_forbidden_ids_never_appear_even_when_most_probable():
    unk_first = [UNIFORM, [0.01, 0.01, 0.10, 0.60, 0.20, 0.08], UNIFORM, [0.01, 0.01, 0.90, 0.01, 0.04, 0.03]]
    unk_first += [[0.01, 0.01, 0.60, 0.30, 0.04, 0.04], [0.01, 0.01, 0.50, 0.40, 0.04, 0.04]]
    model = BigramModel(unk_first)
    allowed = BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=3)
    assert hypotheses(numpy_result(allowed({}, tf.constant([6]))), 0)[0] == [3, EOS]

    search = BeamSearch(
        model.symbols_to_logits_fn, beam_size=3, num_hypotheses=3, forbidden_ids=(constants.UNK_ID,)
    )
    result = numpy_result(search({}, tf.constant([6])))
    assert constants.UNK_ID not in result["ids"]
    assert hypotheses(result, 0) == [[4, EOS], [EOS], [5, EOS]]
    # The log-probabilities are the model's own, not renormalised without UNK.
    for ids, log_prob in zip(hypotheses(result, 0), result["log_probs"][0]):
        np.testing.assert_allclose(log_prob, model.sequence_log_prob(ids), rtol=1e-5)


def test_recurrent_state_is_reordered_with_the_hypotheses():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=4, num_hypotheses=4)
    result = numpy_result(search(model.initial_state(batch_size=5), 12))
    for sentence in range(5):
        found = hypotheses(result, sentence)
        assert len({tuple(ids) for ids in found}) == 4  # distinct
        assert np.all(np.diff(result["scores"][sentence]) <= 0)  # best first
        for ids, log_prob in zip(found, result["log_probs"][sentence]):
            assert ids[-1] == EOS and EOS not in ids[:-1]
            np.testing.assert_allclose(log_prob, model.sequence_log_prob(sentence, ids), atol=1e-4)
    assert result["lengths"].max() > 3  # long enough for wrong reordering to show


@pytest.mark.parametrize("drop_finished", [True, False])
def test_token_log_probs_are_each_tokens_log_prob_after_its_prefix(drop_finished):
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=4, num_hypotheses=3, drop_finished=drop_finished)
    result = numpy_result(search(model.initial_state(batch_size=5), tf.constant([1, 12, 4, 12, 8])))
    assert result["token_log_probs"].shape == result["ids"].shape
    assert result["lengths"].max() > 3 and np.all(result["token_log_probs"] <= 0.0)
    check_token_log_probs(model, result)
    forced = numpy_result(search.search(model.initial_state(batch_size=5), 12, prefix_ids=_padded_prefixes([[5, 6]] * 5)))
    check_token_log_probs(model, forced)


def test_alignments_are_aligned_with_the_tokens():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=2)
    result = numpy_result(search(model.initial_state(batch_size=3), 10))
    assert result["ids"].shape == (3, 2, 10)
    assert result["alignments"].shape == (3, 2, 10, 3)
    for sentence in range(3):
        for rank, ids in enumerate(hypotheses(result, sentence)):
            outputs = result["alignments"][sentence, rank]
            np.testing.assert_allclose(outputs[: len(ids)], model.alignments(sentence, ids))
            np.testing.assert_array_equal(outputs[len(ids) :], 0.0)
            np.testing.assert_array_equal(result["ids"][sentence, rank, len(ids) :], constants.PAD_ID)


def test_each_sentence_stops_at_its_own_maximum_length():
    model = HashModel(vocab_size=9, eos_logit_shift=-30.0)  # never ends by itself
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=2, num_hypotheses=2)
    result = numpy_result(search(model.initial_state(batch_size=3), tf.constant([2, 5, 1])))
    np.testing.assert_array_equal(result["lengths"], [[2, 2], [5, 5], [1, 0]])
    assert result["ids"].shape == (3, 2, 5)
    for sentence, rank in [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0)]:
        ids = hypotheses(result, sentence)[rank]
        assert ids[-1] == EOS  # closed with EOS at the maximum length
        log_prob = model.sequence_log_prob(sentence, ids)
        np.testing.assert_allclose(result["log_probs"][sentence, rank], log_prob, rtol=1e-5)
    # Only one hypothesis has length 1 ("EOS"); the second slot stays empty.
    assert result["log_probs"][2, 1] == -np.inf and result["scores"][2, 1] == -np.inf
    np.testing.assert_array_equal(result["ids"][2, 1], constants.PAD_ID)


def test_inside_tf_function_with_unknown_batch_size():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=2)
    initial_state = model.initial_state(batch_size=4)
    source_lengths = tf.constant([1, 3, 2, 4])

    @tf.function(
        input_signature=[
            {
                "prefix_hash": tf.TensorSpec([None], tf.int32),
                "source": {"bias": tf.TensorSpec([None, 9], tf.float32)},
            },
            tf.TensorSpec([None], tf.int32),
        ]
    )
    def translate(state, lengths):
        return search(state, 2 * lengths + 2)

    graph_result = numpy_result(translate(initial_state, source_lengths))
    eager_result = numpy_result(search(initial_state, 2 * source_lengths + 2))
    assert translate.get_concrete_function().structured_outputs["ids"].shape.as_list() == [None, 2, None]
    for name in eager_result:
        np.testing.assert_allclose(graph_result[name], eager_result[name], rtol=1e-6)


def test_inside_tf_function_with_a_static_batch_size():
    # Dropping finished sentences makes the rows computed, and so the batch-wide values scattered back
    # from them, of unknown size inside the loop, even where the batch size is known when tracing.
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=2)
    initial_state = model.initial_state(batch_size=4)
    graph_result = numpy_result(tf.function(lambda state: search(state, 9))(initial_state))
    eager_result = numpy_result(search(initial_state, 9))
    for name in eager_result:
        np.testing.assert_array_equal(graph_result[name], eager_result[name])


def test_compiles_with_xla_given_an_int_maximum_length():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    static = BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=2, drop_finished=False)
    initial_state = model.initial_state(batch_size=2)
    compiled = numpy_result(tf.function(lambda state: static(state, 7), jit_compile=True)(initial_state))
    eager = numpy_result(BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=2)(initial_state, 7))
    assert compiled["ids"].shape == (2, 2, 7)
    np.testing.assert_array_equal(compiled["ids"], eager["ids"])
    np.testing.assert_allclose(compiled["log_probs"], eager["log_probs"], rtol=1e-5)
    np.testing.assert_allclose(compiled["alignments"], eager["alignments"])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(beam_size=2, num_hypotheses=3), "num_hypotheses"),
        (dict(beam_size=0), "beam_size"),
        (dict(length_normalization="average"), "length_normalization"),
        (dict(forbidden_ids=(constants.EOS_ID,)), "cannot be forbidden"),
    ],
)
def test_misuse(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BeamSearch(BigramModel(GREEDY_IS_NOT_BEST).symbols_to_logits_fn, **kwargs)


# Prefix-constrained search: the first tokens of each sentence are forced (`prefix_ids`), then it is free.

def _padded_prefixes(prefixes, width=None):
    width = max([len(prefix) for prefix in prefixes] + [width or 0])
    return tf.constant([list(prefix) + [constants.PAD_ID] * (width - len(prefix)) for prefix in prefixes], tf.int32)


def brute_force_best_with_prefix(model, prefix, maximum_length, forbidden_ids):
    """The most probable complete sequence that starts with `prefix`, forbidden ids allowed only in it."""
    words = [t for t in range(model.log_probs.shape[0]) if t != EOS and t not in forbidden_ids]
    candidates = [
        list(prefix) + list(middle) + [EOS]
        for length in range(len(prefix) + 1, maximum_length + 1)
        for middle in itertools.product(words, repeat=length - len(prefix) - 1)
    ]
    return max(candidates, key=model.sequence_log_prob)


def expected_alternatives(model, sentence, prefix, k, forbidden_ids):
    """NumPy: the k most probable next tokens after `prefix` of a HashModel sentence, and their log p."""
    before = model.sequence_log_prob(sentence, prefix)
    log_probs = np.array([model.sequence_log_prob(sentence, list(prefix) + [token]) - before
                          for token in range(model.vocab_size)])
    log_probs[list(forbidden_ids)] = -np.inf
    order = np.argsort(-log_probs, kind="stable")[:k]
    return order, log_probs[order]


@pytest.mark.parametrize("drop_finished", [True, False])
@pytest.mark.parametrize("width", [0, 3])
def test_an_empty_prefix_gives_the_unconstrained_search_bit_for_bit(drop_finished, width):
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    initial_state = model.initial_state(batch_size=5)
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=2, drop_finished=drop_finished,
                        forbidden_ids=(constants.UNK_ID,))
    maximum_lengths = tf.constant([4, 9, 1, 12, 7])
    free = numpy_result(search(initial_state, maximum_lengths))
    prefixed = numpy_result(search.search(
        initial_state, maximum_lengths, prefix_ids=tf.zeros([5, width], tf.int32), num_alternatives=4
    ))
    assert free["lengths"].max() > 3
    assert sorted(prefixed) == sorted(list(free) + ["alternative_ids", "alternative_log_probs"])
    for name, value in free.items():
        np.testing.assert_array_equal(prefixed[name], value, err_msg=name)


def test_a_prefix_of_the_best_translation_gives_the_same_translation_and_score():
    model = HashModel(vocab_size=11, eos_logit_shift=-2.0, seed=5)
    initial_state = model.initial_state(batch_size=6, seed=2)
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=4, num_hypotheses=2, length_normalization="length")
    free = numpy_result(search(initial_state, 12))
    best = [hypotheses(free, sentence)[0] for sentence in range(6)]
    assert min(len(ids) for ids in best) >= 3
    prefixes = [ids[:words] for ids, words in zip(best, [0, 1, 2, len(best[3]) - 1, 1, 2])]
    prefixed = numpy_result(search.search(initial_state, 12, prefix_ids=_padded_prefixes(prefixes)))
    for sentence in range(6):
        assert hypotheses(prefixed, sentence)[0] == best[sentence]
    np.testing.assert_array_equal(prefixed["scores"][:, 0], free["scores"][:, 0])
    np.testing.assert_array_equal(prefixed["log_probs"][:, 0], free["log_probs"][:, 0])


def test_forced_words_appear_verbatim_and_the_score_is_their_log_prob():
    # After BOS, <unk> (forbidden) and "b b" (p 0.04 after b) are words the search would never pick.
    model = BigramModel(GREEDY_IS_NOT_BEST)
    forbidden = (constants.UNK_ID,)
    prefixes = [[constants.UNK_ID], [5, 5], [], [4, constants.UNK_ID, 4]]
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=2, forbidden_ids=forbidden)
    result = numpy_result(search.search({}, tf.constant([6, 6, 6, 6]), prefix_ids=_padded_prefixes(prefixes)))
    for sentence, prefix in enumerate(prefixes):
        for ids, log_prob in zip(hypotheses(result, sentence), result["log_probs"][sentence]):
            assert ids[: len(prefix)] == prefix and constants.UNK_ID not in ids[len(prefix):]
            np.testing.assert_allclose(log_prob, model.sequence_log_prob(ids), rtol=1e-5)
        best = brute_force_best_with_prefix(model, prefix, 6, forbidden)
        assert hypotheses(result, sentence)[0] == best
    assert hypotheses(result, 0)[0] == [constants.UNK_ID, EOS]
    assert hypotheses(result, 2)[0] == [5, EOS]  # the free search's


def test_alternatives_are_the_most_probable_next_words_after_the_prefix():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    initial_state = model.initial_state(batch_size=4)
    forbidden = (constants.PAD_ID, constants.BOS_ID, constants.UNK_ID)
    prefixes = [[], [6], [7, constants.UNK_ID, 5], [8, 8]]
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=3, forbidden_ids=forbidden)
    result = numpy_result(search.search(initial_state, 10, prefix_ids=_padded_prefixes(prefixes), num_alternatives=4))
    assert result["alternative_ids"].shape == result["alternative_log_probs"].shape == (4, 4)
    for sentence, prefix in enumerate(prefixes):
        ids, log_probs = expected_alternatives(model, sentence, prefix, 4, forbidden)
        np.testing.assert_array_equal(result["alternative_ids"][sentence], ids)
        np.testing.assert_allclose(result["alternative_log_probs"][sentence], log_probs, atol=1e-5)
    # More alternatives than possible tokens: the rest are empty.
    many = numpy_result(search.search(initial_state, 10, prefix_ids=_padded_prefixes(prefixes), num_alternatives=8))
    assert np.all(many["alternative_ids"][:, 6:] == constants.PAD_ID)
    assert np.all(many["alternative_log_probs"][:, 6:] == -np.inf)
    np.testing.assert_array_equal(many["alternative_ids"][:, :4], result["alternative_ids"])


def test_a_prefix_longer_than_the_maximum_length_gets_room_for_eos():
    model = HashModel(vocab_size=9, eos_logit_shift=-30.0)  # never ends by itself
    initial_state = model.initial_state(batch_size=2)
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=2)
    result = numpy_result(search.search(initial_state, tf.constant([2, 3]), prefix_ids=[[4, 5, 6, 7], [4, 0, 0, 0]]))
    assert hypotheses(result, 0)[0] == [4, 5, 6, 7, EOS]
    assert result["lengths"][1, 0] == 3 and hypotheses(result, 1)[0][0] == 4
    assert result["ids"].shape == (2, 1, 5)
    np.testing.assert_allclose(result["log_probs"][0, 0], model.sequence_log_prob(0, [4, 5, 6, 7, EOS]), atol=1e-4)


def test_prefix_inside_tf_function_without_autograph_and_with_xla():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    initial_state = model.initial_state(batch_size=4)
    prefix_ids = _padded_prefixes([[5], [], [constants.UNK_ID, 6, 4], [7, 7]])
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=2, forbidden_ids=(constants.UNK_ID,))
    eager = numpy_result(search.search(initial_state, tf.constant([9] * 4), prefix_ids=prefix_ids, num_alternatives=3))

    @tf.function(
        input_signature=[
            {"prefix_hash": tf.TensorSpec([None], tf.int32), "source": {"bias": tf.TensorSpec([None, 9], tf.float32)}},
            tf.TensorSpec([None], tf.int32),
            tf.TensorSpec([None, None], tf.int32),
        ],
        autograph=False,
    )
    def translate(state, lengths, prefix):
        return search.search(state, lengths, prefix_ids=prefix, num_alternatives=3)

    static = BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=2, drop_finished=False,
                        forbidden_ids=(constants.UNK_ID,))
    compiled = tf.function(
        lambda state, prefix: static.search(state, 9, prefix_ids=prefix, num_alternatives=3), jit_compile=True
    )
    for result in (numpy_result(translate(initial_state, tf.constant([9] * 4), prefix_ids)),
                   numpy_result(compiled(initial_state, prefix_ids))):
        assert sorted(result) == sorted(eager)
        for name in ("ids", "lengths", "alternative_ids"):
            np.testing.assert_array_equal(result[name], eager[name], err_msg=name)
        for name in ("scores", "log_probs", "alignments", "alternative_log_probs"):
            np.testing.assert_allclose(result[name], eager[name], rtol=1e-5, err_msg=name)
    assert hypotheses(eager, 2)[0][:3] == [constants.UNK_ID, 6, 4]


@pytest.mark.parametrize(
    "arguments, message",
    [(dict(prefix_ids=[4, 5]), r"prefix_ids must be \[batch, prefix_len\]"), (dict(num_alternatives=-1), "at least 0")],
)
def test_prefix_misuse(arguments, message):
    search = BeamSearch(BigramModel(GREEDY_IS_NOT_BEST).symbols_to_logits_fn, beam_size=2)
    with pytest.raises(ValueError, match=message):
        search.search({}, tf.constant([5]), **arguments)
