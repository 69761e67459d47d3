"""Dynamic beam allocation (`ConstrainedBeamSearch`): against `BeamSearch` without constraints and with a beam
of one, against a brute-force search with them, its constraint bookkeeping against a Python port of Sockeye's
(with the restart of a broken-off phrase), its second pass (the sentences the free search did not satisfy)
against each sentence searched alone, and that pass's length floor. The comparisons with `BeamSearch` run the
banked search on every sentence (`constrained_pass`) besides `search`, whose free pass is `BeamSearch` itself
wherever the free hypotheses hold the phrases."""

import itertools

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline import constants
from helpers.search_test_models import BigramModel, HashModel, hypotheses, numpy_result
from rnnsearch_tf.search.beam_search import BeamSearch
from rnnsearch_tf.search.constrained_beam_search import (
    ConstrainedBeamSearch,
    advance,
    allowed_tokens,
    flat_constraints,
    phrases_met,
    restart_table,
    resume_positions,
)


def contains(ids, phrase):
    """Whether the list `ids` holds the phrase (its non-PAD tokens) contiguously."""
    phrase = [token for token in phrase if token != constants.PAD_ID]
    return any(ids[start : start + len(phrase)] == phrase for start in range(len(ids) - len(phrase) + 1))


class SockeyeHypothesis:
    """Sockeye's `ConstrainedHypothesis` (`advance`, `allowed`), in plain Python, over flat constraints; where
    Sockeye undoes a phrase broken off, the phrase restarts as a string search does: at the longest start of
    itself that ends the tokens met, with the token that broke it, tried longest first by brute force (else
    that token is read as outside any phrase)."""

    def __init__(self, phrases):
        self.tokens = [token for phrase in phrases for token in phrase]
        self.followed = [index < len(phrase) - 1 for phrase in phrases for index in range(len(phrase))]
        self.met = [False] * len(self.tokens)
        self.last_met = -1

    def allowed(self):
        if self.last_met != -1 and self.followed[self.last_met]:
            return {self.last_met + 1}
        starts = [True] + [not followed for followed in self.followed[:-1]]
        return {index for index, start in enumerate(starts) if start and not self.met[index]}

    def advance(self, token):
        if self.last_met != -1 and self.followed[self.last_met]:
            if token == self.tokens[self.last_met + 1]:
                self.met[self.last_met + 1] = True
                self.last_met += 1
                return
            start = self.last_met
            while start > 0 and self.followed[start - 1]:
                start -= 1
            matched = self.tokens[start : self.last_met + 1] + [token]
            for position in range(start, self.last_met + 1):
                self.met[position] = False
            self.last_met = -1
            for length in range(len(matched) - 1, 0, -1):  # a start of the phrase that ends `matched`
                if matched[len(matched) - length :] == self.tokens[start : start + length]:
                    for position in range(start, start + length):
                        self.met[position] = True
                    self.last_met = start + length - 1
                    return
        starts = [True] + [not followed for followed in self.followed[:-1]]
        for index, (constraint, start, met) in enumerate(zip(self.tokens, starts, self.met)):
            if constraint == token and start and not met:
                self.met[index] = True
                self.last_met = index
                return


def test_advance_and_allowed_tokens_follow_sockeye():
    """200 random phrase sets, one row each, advanced by the same random tokens as Sockeye's bookkeeping."""
    rng = np.random.default_rng(0)
    rows, width, most = 200, 3, 3
    phrase_sets = [[list(rng.integers(4, 7, size=rng.integers(1, width + 1))) for _ in range(rng.integers(1, most + 1))]
                   for _ in range(rows)]
    padded = np.zeros([rows, most, width], np.int32)
    for row, phrases in enumerate(phrase_sets):
        for index, phrase in enumerate(phrases):
            padded[row, index, : len(phrase)] = phrase
    tokens, followed = flat_constraints(tf.constant(padded))  # [rows, C]
    restarts = restart_table(tf.constant(padded))  # [rows, most, width, width]
    real = np.concatenate([padded.reshape(rows, -1), np.zeros([rows, 1], np.int32)], axis=1) != constants.PAD_ID
    met, last_met = tf.constant(~real), tf.fill([rows], -1)
    references = [SockeyeHypothesis(phrases) for phrases in phrase_sets]
    for step_tokens in rng.integers(4, 7, size=[8, rows]):
        allowed = allowed_tokens(tokens, followed, met, last_met).numpy()
        resumable = resume_positions(restarts, tf.range(rows), last_met, tf.shape(tokens)[1])
        met, last_met = advance(tokens, followed, met, last_met, tf.constant(step_tokens, tf.int32), resumable)
        for row, reference in enumerate(references):
            positions = np.flatnonzero(real[row])  # our flat position of each of Sockeye's tokens
            assert list(np.flatnonzero(allowed[row])) == sorted(positions[sorted(reference.allowed())])
            reference.advance(int(step_tokens[row]))
            assert list(met.numpy()[row][real[row]]) == reference.met


def test_phrases_met_looks_for_each_phrase_before_eos():
    ids = tf.constant([[[4, 5, 6, 2, 7, 8]]])  # after EOS nothing counts
    lengths = tf.constant([[4]])
    phrases = tf.constant([[[5, 6], [6, 0], [7, 8], [0, 0], [6, 5]]])
    assert phrases_met(ids, lengths, phrases).numpy().tolist() == [[[True, True, False, True, False]]]


# How each way into the search gives `BeamSearch`'s result without constraints: `search` by its free pass,
# `BeamSearch` itself; `constrained_pass` by dynamic beam allocation over one bank, keeping every sentence in
# its batch to the end, as `BeamSearch(drop_finished=False)` does (a batch that shrinks, as `BeamSearch`'s does
# by default, may round a log-probability otherwise).
PASSES = [("search", True), ("constrained_pass", False)]


@pytest.mark.parametrize("method, drop_finished", PASSES)
@pytest.mark.parametrize(
    "options",
    [
        dict(beam_size=4, num_hypotheses=2),
        dict(beam_size=3, length_normalization="gnmt", forbidden_ids=(constants.UNK_ID,)),
        dict(beam_size=5, num_hypotheses=3, length_normalization="length", early_stopping=True),
    ],
)
def test_no_constraints_is_beam_search_bit_for_bit(options, method, drop_finished):
    model = HashModel(vocab_size=11, seed=5, eos_logit_shift=-1.0)
    state = model.initial_state(4, seed=2)
    expected = numpy_result(BeamSearch(model.symbols_to_logits_fn, drop_finished=drop_finished, **options).search(
        state, 9))
    search = getattr(ConstrainedBeamSearch(model.symbols_to_logits_fn, **options), method)
    for constraint_ids in (tf.zeros([4, 0, 0], tf.int32), tf.zeros([4, 2, 3], tf.int32)):
        result = numpy_result(search(state, 9, constraint_ids=constraint_ids))
        assert result["constraints_met"].all()
        for name, value in expected.items():
            np.testing.assert_array_equal(result[name], value, err_msg=name)


@pytest.mark.parametrize("method, drop_finished", PASSES)
def test_unconstrained_sentences_of_a_constrained_batch_are_searched_as_beam_search(method, drop_finished):
    """With `constrained_pass` the sentences without constraints share the banked search with one that has
    some: each has one bank of its own."""
    model = HashModel(vocab_size=11, seed=1)
    state = model.initial_state(3, seed=4)
    expected = numpy_result(BeamSearch(model.symbols_to_logits_fn, beam_size=4, drop_finished=drop_finished).search(
        state, 9))
    constraint_ids = tf.constant([[[0, 0]], [[7, 8]], [[0, 0]]])
    search = getattr(ConstrainedBeamSearch(model.symbols_to_logits_fn, beam_size=4), method)
    result = numpy_result(search(state, 9, constraint_ids=constraint_ids))
    for sentence in (0, 2):
        assert hypotheses(result, sentence) == hypotheses(expected, sentence)
        assert result["scores"][sentence] == expected["scores"][sentence]
    assert contains(hypotheses(result, 1)[0], [7, 8])


def test_with_a_beam_of_one_a_phrase_is_taken_first_then_the_search_is_greedy():
    """A beam of one keeps the first candidate of the striped order, the best of the bank of most constraint
    tokens met: the phrase's tokens are taken at the first steps, after which every candidate has met them all
    (one bank) and the search is greedy: `BeamSearch` with the phrase as its forced prefix. Sentences 0 and 1
    are constrained by the first words of their greedy translation, which the free hypothesis already holds:
    the banked search must give that translation itself; 2 and 3 by words it lacks."""
    model = HashModel(vocab_size=11, seed=5)
    state = model.initial_state(4, seed=3)
    greedy_search = BeamSearch(model.symbols_to_logits_fn, beam_size=1, drop_finished=False)
    greedy = numpy_result(greedy_search.search(state, 9))
    phrases = np.array([[7, 0], [5, 8], [4, 6], [9, 0]])  # [batch, phrase_len]
    assert [hypotheses(greedy, sentence)[0][:2] for sentence in range(2)] == [[7, 7], [5, 8]]
    assert not any(token in hypotheses(greedy, sentence)[0] for sentence in (2, 3) for token in phrases[sentence])
    expected = numpy_result(greedy_search.search(state, 9, prefix_ids=tf.constant(phrases)))
    for sentence in (0, 1):
        assert hypotheses(expected, sentence) == hypotheses(greedy, sentence)
    search = ConstrainedBeamSearch(model.symbols_to_logits_fn, beam_size=1)
    result = numpy_result(search.constrained_pass(state, 9, tf.constant(phrases[:, None, :])))
    assert result["constraints_met"].all()
    assert sorted(expected) == sorted(set(result) - {"constraints_met"})
    for name in ("ids", "lengths", "alignments"):
        np.testing.assert_array_equal(result[name], expected[name], err_msg=name)
    for name in ("log_probs", "scores", "token_log_probs"):  # a constraint token's is a log-softmax, a prefix's not
        np.testing.assert_allclose(result[name], expected[name], rtol=1e-6, atol=0, err_msg=name)


@pytest.mark.parametrize("beam_size", [3, 5, 12])
def test_every_hypothesis_holds_every_constraint(beam_size):
    rng = np.random.default_rng(beam_size)
    for seed in range(4):
        model = HashModel(vocab_size=12, seed=seed)
        state = model.initial_state(5, seed=seed)
        constraint_ids = rng.integers(4, 12, size=[5, 2, 2])
        constraint_ids[:, 1, 1] = constants.PAD_ID  # a two-token phrase and a one-token phrase
        search = ConstrainedBeamSearch(model.symbols_to_logits_fn, beam_size=beam_size, num_hypotheses=2)
        result = numpy_result(search.search(state, 10, constraint_ids=tf.constant(constraint_ids)))
        returned = result["lengths"] > 0  # [batch, n]: a slot may stay empty (fewer hypotheses than asked for)
        assert returned[:, 0].all() and result["constraints_met"][returned].all()
        for sentence in range(5):
            for ids in filter(None, hypotheses(result, sentence)):
                assert all(contains(ids, phrase) for phrase in constraint_ids[sentence].tolist())
                np.testing.assert_allclose(
                    model.sequence_log_prob(sentence, ids),
                    result["log_probs"][sentence][hypotheses(result, sentence).index(ids)], rtol=1e-5)


@pytest.mark.parametrize("method", ["search", "constrained_pass"])
def test_a_beam_wider_than_every_step_s_candidates_finds_the_best_constrained_hypothesis(method):
    """With more hypotheses kept than a step has candidates, nothing is pruned: the search returns the best of
    all sequences that hold the constraints (brute force), `search` the best of those at least as long as the
    free translation (its length floor). Four words (4-7; PAD, BOS and UNK are forbidden) and at most 5 tokens:
    the fourth step has the most candidates, the 4^3 alive hypotheses extended by 4 words and by EOS,
    4^4 + 4^3 = 320 (the fifth allows EOS only). The free best translation of sentence 3 holds its phrases: the
    banked search (`constrained_pass`) must find it too, `BeamSearch`'s result. (A phrase held only where it
    starts inside a broken-off start of itself, as "4 7" in "4 4 7", has a test of its own below.)"""
    vocab_size, maximum_length, beam_size = 8, 5, 4**4 + 4**3
    forbidden_ids = (constants.PAD_ID, constants.BOS_ID, constants.UNK_ID)
    model = HashModel(vocab_size=vocab_size, seed=3)
    state = model.initial_state(4, seed=1)
    constraint_ids = np.array([[[5, 6], [4, 0]], [[4, 0], [0, 0]], [[6, 6], [0, 0]], [[4, 4], [7, 0]]])
    free = numpy_result(BeamSearch(model.symbols_to_logits_fn, beam_size=beam_size, forbidden_ids=forbidden_ids)
                        .search(state, maximum_length))
    floors = free["lengths"][:, 0] if method == "search" else np.ones(4, np.int32)
    search = ConstrainedBeamSearch(model.symbols_to_logits_fn, beam_size=beam_size, forbidden_ids=forbidden_ids)
    result = numpy_result(getattr(search, method)(state, maximum_length, tf.constant(constraint_ids)))
    words = [token for token in range(vocab_size) if token not in forbidden_ids + (constants.EOS_ID,)]
    for sentence in range(4):
        sequences = [(model.sequence_log_prob(sentence, list(prefix) + [constants.EOS_ID]),
                      list(prefix) + [constants.EOS_ID])
                     for length in range(maximum_length) for prefix in itertools.product(words, repeat=length)]
        best = max((log_prob, ids) for log_prob, ids in sequences if len(ids) >= floors[sentence]
                   and all(contains(ids[:-1], phrase) for phrase in constraint_ids[sentence].tolist()))
        assert (best == max(sequences)) == (sentence == 3)  # only sentence 3's free best holds its phrases
        assert hypotheses(result, sentence)[0] == best[1]
        np.testing.assert_allclose(result["log_probs"][sentence, 0], best[0], rtol=1e-5)
    assert hypotheses(result, 3) == hypotheses(free, 3)
    assert result["scores"][3] == free["scores"][3]


def test_constraints_that_do_not_fit_the_length_bound_are_reported_not_dropped():
    """A sentence whose phrases cannot fit its length bound gets its free translation, not the hypothesis the
    banked search cut off at the bound, and the phrases reported unmet; the other sentence is searched under
    its constraint."""
    model = HashModel(vocab_size=12, seed=2)
    state = model.initial_state(2, seed=3)
    constraint_ids = tf.constant([[[4, 5, 6], [7, 8, 0]], [[9, 0, 0], [0, 0, 0]]])  # 5 tokens; 1 token
    search = ConstrainedBeamSearch(model.symbols_to_logits_fn, beam_size=4)
    result = numpy_result(search.search(state, 4, constraint_ids=constraint_ids))
    cut = numpy_result(search.constrained_pass(state, 4, constraint_ids))
    assert cut["lengths"][0, 0] == 4 and not cut["constraints_met"][0, 0].all()  # what the banked search ends with
    free = numpy_result(BeamSearch(model.symbols_to_logits_fn, beam_size=4).search(state, 4))
    assert hypotheses(result, 0) == hypotheses(free, 0) != hypotheses(cut, 0)
    for name in ("lengths", "scores", "log_probs"):
        np.testing.assert_array_equal(result[name][0], free[name][0], err_msg=name)
    held = [contains(hypotheses(free, 0)[0][:-1], phrase) for phrase in constraint_ids[0].numpy().tolist()]
    assert result["constraints_met"][0, 0].tolist() == held and not all(held)
    assert result["constraints_met"][1, 0].all() and 9 in hypotheses(result, 1)[0]


def free_and_unmet_constraints(free):
    """Constraints `[batch, 1, 2]` from a free search's NumPy result: even sentences get a token all of their
    hypotheses hold (the last one none: no phrase), odd ones a token none of them does (4-11)."""
    constraint_ids = np.zeros([free["ids"].shape[0], 1, 2], np.int32)
    for sentence in range(free["ids"].shape[0] - 1):
        held = [set(ids[:-1]) for ids in hypotheses(free, sentence)]
        constraint_ids[sentence, 0, 0] = (min(set.intersection(*held)) if sentence % 2 == 0 else
                                          min(set(range(4, 12)) - set.union(*held)))
    return constraint_ids


def test_only_sentences_whose_free_hypotheses_miss_a_phrase_are_searched_again():
    """A batch mixing sentences that the free search satisfies with sentences it does not: the constrained pass
    runs on the latter only (the sentences of each pass's first step, told by their `bias` row), and every row
    of the result is its sentence searched alone. The maximum lengths differ, so the two passes and the
    searches alone differ in their step dimension."""
    model = HashModel(vocab_size=12, seed=6)
    state = model.initial_state(5, seed=8)
    maximum_lengths = tf.constant([10, 6, 11, 7, 8])
    options = dict(beam_size=4, num_hypotheses=2)
    constraint_ids = free_and_unmet_constraints(
        numpy_result(BeamSearch(model.symbols_to_logits_fn, **options).search(state, maximum_lengths)))
    searched = []  # the sentences of each first step

    def recording_symbols_to_logits_fn(ids, step, state):
        if int(step) == 0:
            same = np.float32(model.biases)[None, :, :] == state["source"]["bias"].numpy()[:, None, :]
            searched.append(np.argmax(same.all(axis=2), axis=1).tolist())  # [rows]: the sentence of each row
        return model.symbols_to_logits_fn(ids, step, state)

    result = numpy_result(ConstrainedBeamSearch(recording_symbols_to_logits_fn, **options).search(
        state, maximum_lengths, constraint_ids=tf.constant(constraint_ids)))
    assert searched == [[0, 1, 2, 3, 4], [1, 3]]
    assert result["constraints_met"].all()
    search = ConstrainedBeamSearch(model.symbols_to_logits_fn, **options)
    for sentence in range(5):
        only = slice(sentence, sentence + 1)
        alone = numpy_result(search.search(tf.nest.map_structure(lambda value: value[only], state),
                                           maximum_lengths[only], constraint_ids=tf.constant(constraint_ids[only])))
        for name, value in alone.items():
            row = result[name][only]
            if name in ("ids", "alignments", "token_log_probs"):  # steps after the sentence's own bound: padding
                np.testing.assert_array_equal(row[:, :, value.shape[2] :], 0, err_msg=name)
                row = row[:, :, : value.shape[2]]
            np.testing.assert_array_equal(row, value, err_msg=f"{name} of sentence {sentence}")
    in_graph = tf.function(lambda: search.search(state, maximum_lengths, constraint_ids=constraint_ids))()
    for name, value in numpy_result(in_graph).items():
        np.testing.assert_array_equal(value, result[name], err_msg=name)


def test_a_constrained_search_takes_no_prefix():
    model = HashModel()
    with pytest.raises(ValueError, match="no prefix"):
        ConstrainedBeamSearch(model.symbols_to_logits_fn).search(
            model.initial_state(1), 5, constraint_ids=tf.constant([[[4]]]), prefix_ids=tf.constant([[4]]))


@pytest.mark.parametrize("method", ["search", "constrained_pass"])
def test_a_constrained_search_needs_a_dict_state(method):
    model = HashModel()
    state = model.initial_state(1)
    with pytest.raises(ValueError, match="needs a dict state"):
        getattr(ConstrainedBeamSearch(model.symbols_to_logits_fn), method)(
            (state["prefix_hash"], state["source"]), 5, constraint_ids=tf.constant([[[4]]]))


def test_with_word_continuations_a_phrase_ends_a_word():
    """Tokens 8-11 stand for pieces that continue a word: none may follow a phrase, which must end a word."""
    continuations = tf.constant([token >= 8 for token in range(12)])
    ids, lengths = tf.constant([[[4, 5, 9, 4, 5, 2]]]), tf.constant([[6]])
    assert phrases_met(ids, lengths, tf.constant([[[4, 5]]]), continuations).numpy().tolist() == [[[True]]]
    assert phrases_met(ids[:, :, :3], tf.constant([[3]]), tf.constant([[[4, 5]]]), continuations).numpy()[0, 0, 0] == 0
    rng = np.random.default_rng(7)
    for seed in range(4):
        model = HashModel(vocab_size=12, seed=seed)
        state = model.initial_state(4, seed=seed)
        constraint_ids = rng.integers(4, 8, size=[4, 2, 2])  # word starts only
        constraint_ids[:, 1, 1] = constants.PAD_ID
        search = ConstrainedBeamSearch(model.symbols_to_logits_fn, beam_size=5, word_continuations=continuations)
        result = numpy_result(search.search(state, 10, constraint_ids=tf.constant(constraint_ids)))
        assert result["constraints_met"].all()
        for sentence in range(4):
            ids = hypotheses(result, sentence)[0]
            for phrase in constraint_ids[sentence].tolist():
                phrase = [token for token in phrase if token != constants.PAD_ID]
                ends = [start + len(phrase) for start in range(len(ids)) if ids[start : start + len(phrase)] == phrase]
                assert any(ids[end] < 8 for end in ends), (ids, phrase)  # one occurrence ends a word


def _advanced(phrases, tokens):
    """The `(met, last_met)` of one hypothesis (NumPy) after `tokens`, under the PAD-padded `phrases`."""
    flat_tokens, followed = flat_constraints(tf.constant([phrases]))  # [1, C]
    restarts = restart_table(tf.constant([phrases]))  # [1, phrases, P, P]
    met, last_met = tf.equal(flat_tokens, constants.PAD_ID), tf.constant([-1])
    for token in tokens:
        resumable = resume_positions(restarts, tf.constant([0]), last_met, tf.shape(flat_tokens)[1])
        met, last_met = advance(flat_tokens, followed, met, last_met, tf.constant([token]), resumable)
    return met.numpy()[0], int(last_met[0])


def test_a_phrase_broken_off_by_a_start_of_itself_resumes_there():
    """Sockeye's bookkeeping undoes a phrase broken off and reads nothing into the token that broke it: "4 4 7"
    did not meet "4 7". Here the phrase resumes at the longest start of itself the tokens met end with."""
    assert _advanced([[4, 7]], [4, 4, 7])[0][:2].tolist() == [True, True]
    assert _advanced([[4, 7]], [4, 4])[0][:2].tolist() == [True, False]  # the second 4 started it again
    assert _advanced([[4, 4, 7]], [4, 4, 4, 7])[0][:3].tolist() == [True, True, True]  # resumed at its second 4
    assert _advanced([[4, 5, 4, 6]], [4, 5, 4, 5, 4, 6])[0][:4].tolist() == [True] * 4  # "4 5 4" resumes at "4 5"
    met, last_met = _advanced([[4, 7, 0], [5, 0, 0]], [4, 5])  # broken off by another phrase's start: read as one
    assert met[:4].tolist() == [False, False, True, True] and last_met == 3
    met, last_met = _advanced([[4, 7]], [4, 6])  # no start of itself: undone
    assert met[:2].tolist() == [False, False] and last_met == -1
    ids = tf.constant([[[4, 4, 7, 2], [4, 7, 4, 2]]])  # `phrases_met`, the search's last word, agrees
    assert phrases_met(ids, tf.constant([[4, 4]]), tf.constant([[[4, 7, 0], [4, 4, 7]]])).numpy().tolist() == [
        [[True, True], [True, False]]]


class StepModel:
    """A fake model whose next-token log-probabilities depend on the step only (`log_probs[step]`); its
    state is passed through unread."""

    def __init__(self, probabilities):
        probabilities = np.asarray(probabilities, np.float64)
        self.log_probs = np.log(probabilities / probabilities.sum(axis=-1, keepdims=True))

    def symbols_to_logits_fn(self, ids, step, state):
        logits = tf.gather(tf.constant(self.log_probs, tf.float32), tf.fill(tf.shape(ids), step))  # [n, vocab]
        return logits, state, tf.zeros([tf.shape(ids)[0], 1])


def test_the_banked_search_keeps_a_phrase_met_inside_a_broken_off_start_of_itself():
    """The model's best is "4 4 7 </s>", which holds "4 7" only where it starts at the second 4: the banked search
    (`constrained_pass`) returns it, `BeamSearch`'s result (with Sockeye's bookkeeping the hypothesis counted as
    unmet, and could not end)."""
    model = StepModel([[1, 1, 1, 1, 90, 1, 1, 1], [1, 1, 1, 1, 80, 1, 1, 15], [1, 1, 10, 1, 1, 1, 1, 80],
                       [1, 1, 90, 1, 1, 1, 1, 1], [1, 1, 90, 1, 1, 1, 1, 1]])
    forbidden_ids = (constants.PAD_ID, constants.BOS_ID, constants.UNK_ID)
    state = {"unused": tf.zeros([1])}  # one sentence
    free = numpy_result(BeamSearch(model.symbols_to_logits_fn, beam_size=4, forbidden_ids=forbidden_ids,
                                   drop_finished=False).search(state, 5))
    assert hypotheses(free, 0)[0] == [4, 4, 7, constants.EOS_ID]
    search = ConstrainedBeamSearch(model.symbols_to_logits_fn, beam_size=4, forbidden_ids=forbidden_ids)
    result = numpy_result(search.constrained_pass(state, 5, tf.constant([[[4, 7]]])))
    assert hypotheses(result, 0)[0] == [4, 4, 7, constants.EOS_ID] and result["constraints_met"].all()
    np.testing.assert_allclose(result["log_probs"][0, 0], free["log_probs"][0, 0], rtol=1e-6)


# After BOS "4" is likely, after 4 "5", after 5 "6", after 6 EOS: the free translation is "4 5 6 </s>". The
# constraint "7" is unlikely anywhere, and after it EOS is: a hypothesis that has just met it ends at once.
LIKELY_EOS_AFTER_THE_CONSTRAINT = [
    [1] * 8,  # after PAD
    [1, 1, 2, 1, 70, 5, 5, 10],  # after BOS
    [1] * 8,  # after EOS
    [1] * 8,  # after UNK
    [1, 1, 5, 1, 5, 70, 5, 10],  # after 4
    [1, 1, 5, 1, 5, 5, 70, 2],  # after 5
    [1, 1, 80, 1, 5, 5, 5, 2],  # after 6
    [1, 1, 50, 1, 2, 40, 2, 2],  # after 7
]


def test_a_constrained_translation_is_at_least_as_long_as_the_free_one():
    """Without a length floor (`constrained_pass`) the constrained search ends right after the constraint
    ("7 </s>", shorter than the free "4 5 6 </s>"); `search` keeps its hypotheses from ending before the free
    translation's length, and returns the best sequence holding "7" that is as long (brute force)."""
    model = BigramModel(LIKELY_EOS_AFTER_THE_CONSTRAINT)
    forbidden_ids = (constants.PAD_ID, constants.BOS_ID, constants.UNK_ID)
    state, maximum_length, constraint_ids = {"unused": tf.zeros([1])}, 7, tf.constant([[[7]]])
    free = numpy_result(BeamSearch(model.symbols_to_logits_fn, beam_size=5, forbidden_ids=forbidden_ids).search(
        state, maximum_length))
    assert hypotheses(free, 0)[0] == [4, 5, 6, constants.EOS_ID]
    search = ConstrainedBeamSearch(model.symbols_to_logits_fn, beam_size=5, forbidden_ids=forbidden_ids)
    unfloored = numpy_result(search.constrained_pass(state, maximum_length, constraint_ids))
    assert hypotheses(unfloored, 0)[0] == [7, constants.EOS_ID]
    result = numpy_result(search.search(state, maximum_length, constraint_ids=constraint_ids))
    best = max((log_prob, ids) for ids, log_prob in model.all_sequences(maximum_length, forbidden_ids)
               if len(ids) >= 4 and 7 in ids)
    assert hypotheses(result, 0)[0] == best[1] and result["constraints_met"].all()
    assert best[1][-2] != 7  # it goes on after the constraint
    np.testing.assert_allclose(result["log_probs"][0, 0], best[0], rtol=1e-5)


def test_the_floor_counts_words_not_pieces():
    """Token 8 is a piece that continues a word. The free translation "4 5 6 </s>" has three words; the phrase
    "7 8" is one word of two pieces, after which EOS is likely: "4 7 8 </s>" is as long as the free translation
    in tokens but has two words. The search goes on to three words or more: the best such sequence (brute force)."""
    probabilities = np.ones([9, 9])
    for previous, following in {1: {4: 70, 7: 10, 5: 5, 6: 5}, 4: {5: 70, 7: 15, 2: 5}, 5: {6: 70, 2: 5},
                                6: {2: 80}, 7: {8: 80, 2: 5}, 8: {2: 60, 5: 30}}.items():
        for token, weight in following.items():
            probabilities[previous, token] = weight
    model = BigramModel(probabilities)
    continuations = tf.constant([token == 8 for token in range(9)])
    forbidden_ids = (constants.PAD_ID, constants.BOS_ID, constants.UNK_ID)
    state, maximum_length = {"unused": tf.zeros([1])}, 8
    search = ConstrainedBeamSearch(model.symbols_to_logits_fn, beam_size=5, forbidden_ids=forbidden_ids,
                                   word_continuations=continuations)
    assert hypotheses(numpy_result(search.free_search.search(state, maximum_length)), 0)[0] == [4, 5, 6, 2]
    result = numpy_result(search.search(state, maximum_length, constraint_ids=tf.constant([[[7, 8]]])))

    def words(ids):
        return sum(token != 8 for token in ids[:-1])

    def holds(ids):
        return any(ids[start : start + 2] == [7, 8] and ids[start + 2] != 8 for start in range(len(ids) - 2))

    sequences = sorted(((log_prob, ids) for ids, log_prob in model.all_sequences(maximum_length, forbidden_ids)
                        if holds(ids)), reverse=True)
    assert next(ids for _, ids in sequences if len(ids) >= 4) == [4, 7, 8, 2]  # long enough in tokens
    best = next((log_prob, ids) for log_prob, ids in sequences if words(ids) >= 3 or len(ids) == maximum_length)
    assert hypotheses(result, 0)[0] == best[1] == [4, 7, 8, 5, 6, constants.EOS_ID]
    np.testing.assert_allclose(result["log_probs"][0, 0], best[0], rtol=1e-5)
