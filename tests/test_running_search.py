"""Tests of a running beam search (`BeamSearch.start`, `advance`, `finish`; `running_search`): sentences
that join and leave it between steps get the hypotheses `search` gives them."""

import numpy as np
import tensorflow as tf
from helpers.model_test_utils import pad, randomize_weights, small_config
from helpers.search_test_models import HashModel, hypotheses, numpy_result

from rnnsearch_tf import RNNSearch
from rnnsearch_tf.search.beam_search import BeamSearch
from rnnsearch_tf.search.running_search import first_history, joined, recorded, sentence_rows


def test_recorded_writes_each_sentence_at_its_own_step():
    history = first_history(tf.constant([[1, 2], [3, 4], [5, 6]]), max_length=4)  # [3, 4, 2]
    np.testing.assert_array_equal(history[:, 0], [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(history[:, 1:], 0)
    history = recorded(history, tf.constant([1, 3, 2]), tf.constant([[7, 8], [9, 10], [11, 12]]))
    np.testing.assert_array_equal(history, [
        [[1, 2], [7, 8], [0, 0], [0, 0]],
        [[3, 4], [0, 0], [0, 0], [9, 10]],
        [[5, 6], [0, 0], [11, 12], [0, 0]],
    ])


def test_joined_pads_every_trailing_dimension_to_the_larger():
    first = dict(step=tf.constant([1, 2]), fixed={"annotations": tf.ones([2, 3, 4]), "mask": tf.ones([2, 3], tf.bool)})
    second = dict(
        step=tf.constant([5]), fixed={"annotations": tf.fill([1, 5, 4], 2.0), "mask": tf.ones([1, 5], tf.bool)}
    )
    both = joined(first, second)
    np.testing.assert_array_equal(both["step"], [1, 2, 5])
    annotations, mask = both["fixed"]["annotations"].numpy(), both["fixed"]["mask"].numpy()
    assert annotations.shape == (3, 5, 4) and mask.shape == (3, 5)
    np.testing.assert_array_equal(annotations[:2, :3], 1.0)
    np.testing.assert_array_equal(annotations[:2, 3:], 0.0)
    np.testing.assert_array_equal(annotations[2], 2.0)
    np.testing.assert_array_equal(mask, [[True] * 3 + [False] * 2] * 2 + [[True] * 5])


def test_sentence_rows_takes_a_sentences_hypotheses_with_it():
    running = dict(done=tf.constant([False, True, False]), state={"s": tf.reshape(tf.range(6), [6, 1])})
    rows = sentence_rows(running, tf.constant([2, 0]), beam_size=2)
    np.testing.assert_array_equal(rows["done"], [False, False])
    np.testing.assert_array_equal(rows["state"]["s"][:, 0], [4, 5, 0, 1])


def run_joining(search, starts):
    """Drives a running search: `starts` maps a step count to `(sentence ids, initial_state, maximum_lengths)`
    that join after that many steps; returns each sentence's result (NumPy) and the steps run."""
    running, answers, step = None, {}, 0
    while starts or (running is not None and int(tf.shape(running["done"])[0])):
        if step in starts:
            ids, state, lengths = starts.pop(step)
            new = search.start(state, lengths)
            running = new if running is None else joined(running, new)
            order = (order if running is not new else []) + list(ids)
        elif running is not None and int(tf.shape(running["done"])[0]):
            running = search.advance(running)
        if running is not None and bool(tf.reduce_any(running["done"])):
            done = running["done"].numpy()
            result, running = search.finish(running)
            result = numpy_result(result)
            for row, sentence in enumerate(np.array(order)[done]):
                answers[sentence] = {name: value[row] for name, value in result.items()}
            order = list(np.array(order)[~done])
        step += 1
    return answers, step


def assert_same_as_search(answers, expected, sentences):
    for sentence in sentences:
        answer = answers[sentence]
        assert hypotheses({name: value[None] for name, value in answer.items()}, 0) == hypotheses(expected, sentence)
        np.testing.assert_allclose(answer["scores"], expected["scores"][sentence], rtol=1e-5)
        np.testing.assert_allclose(answer["log_probs"], expected["log_probs"][sentence], rtol=1e-5)
        for rank, length in enumerate(answer["lengths"]):
            np.testing.assert_allclose(
                answer["alignments"][rank, :length], expected["alignments"][sentence, rank, :length], atol=1e-5
            )


def rows_of(state, sentences):
    return tf.nest.map_structure(lambda t: tf.gather(t, sentences), state)


def test_sentences_that_join_a_running_search_get_the_hypotheses_search_gives_them():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=2)
    state = model.initial_state(batch_size=6)
    lengths = tf.constant([9, 4, 12, 6, 10, 3])
    expected = numpy_result(search(state, lengths))
    starts = {0: [0, 1], 2: [2, 3, 4], 5: [5]}  # step -> sentences joining then
    answers, steps = run_joining(search, {
        step: (ids, rows_of(state, ids), tf.gather(lengths, ids)) for step, ids in starts.items()
    })
    assert sorted(answers) == list(range(6))
    # The alignments record each step's `step` argument: the per-sentence step, checked against `search`'s.
    assert_same_as_search(answers, expected, range(6))
    assert steps < sum(expected["lengths"].max(axis=1))  # the sentences shared steps


def test_rnnsearch_sentences_of_other_lengths_join_through_their_padded_annotations():
    model = RNNSearch(small_config())
    randomize_weights(model, seed=3)
    sources = [[5, 9, 14, 7, 2], [11, 2], [8, 8, 20, 2], [4, 19, 3, 6, 12, 16, 21, 2], [13, 2]]
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=2)
    lengths = tf.constant([2 * len(source) + 2 for source in sources])
    expected = numpy_result(search(model.encode(pad(sources)), lengths))
    starts = {0: [1, 2], 1: [0], 3: [3, 4]}  # shorter sources first: the later ones pad the annotations
    answers, _ = run_joining(search, {
        step: (ids, model.encode(pad([sources[i] for i in ids])), tf.gather(lengths, ids))
        for step, ids in starts.items()
    })
    assert_same_as_search(answers, expected, range(len(sources)))


def test_a_running_search_steps_inside_tf_function():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    search = BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=2)
    state = model.initial_state(batch_size=4)
    lengths = tf.constant([5, 8, 3, 7])
    expected = numpy_result(search(state, lengths))
    traced = tf.function(search.advance, reduce_retracing=True)
    running, answers = search.start(state, lengths), {}
    order = list(range(4))
    while order:
        running = traced(running)
        done = running["done"].numpy()
        result, running = search.finish(running)
        for row, sentence in enumerate(np.array(order)[done]):
            answers[sentence] = {name: value[row] for name, value in numpy_result(result).items()}
        order = list(np.array(order)[~done])
    assert_same_as_search(answers, expected, range(4))
