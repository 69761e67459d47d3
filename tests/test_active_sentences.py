"""rnnsearch_tf/search/active_sentences.py: the rows a beam search step computes once finished sentences are
dropped: gather and scatter against NumPy indexing, and a search that drops them finds what one that does
not finds."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.search_test_models import numpy_result

from data_pipeline import constants
from rnnsearch_tf.search.active_sentences import ActiveSentences
from rnnsearch_tf.search.beam_search import BeamSearch
from rnnsearch_tf.search.search_helpers import LARGE_NEGATIVE


def test_gather_and_scatter_the_active_rows():
    values = np.arange(5 * 2 * 3, dtype=np.float32).reshape(5, 2, 3)  # [batch, beam, 3]
    active = ActiveSentences(tf.constant([1, 3, 4]), 5)
    assert int(active.size) == 3
    gathered = active.gather(tf.constant(values))
    np.testing.assert_array_equal(gathered.numpy(), values[[1, 3, 4]])
    scattered = active.scatter(gathered * 2, -7).numpy()  # [active, ...] -> [batch, ...]
    expected = np.full_like(values, -7.0)
    expected[[1, 3, 4]] = values[[1, 3, 4]] * 2
    np.testing.assert_array_equal(scattered, expected)
    ids = active.scatter(tf.constant([[4, 5], [6, 7], [8, 9]]), constants.PAD_ID)
    assert ids.dtype == tf.int32
    np.testing.assert_array_equal(ids.numpy(), [[0, 0], [4, 5], [0, 0], [6, 7], [8, 9]])


def test_no_active_sentence_scatters_the_default_everywhere():
    active = ActiveSentences(tf.zeros([0], tf.int32), 3)
    np.testing.assert_array_equal(active.scatter(tf.zeros([0, 2], tf.bool), True).numpy(), np.ones([3, 2], bool))


def test_every_sentence_passes_values_through_and_dropping_works_inside_tf_function():
    active = ActiveSentences(tf.range(4), 4, every_sentence=True)
    values = tf.ones([4, 3])
    assert active.size == 4 and active.gather(values) is values and active.scatter(values, 0.0) is values

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32), tf.TensorSpec([4, 3], tf.float32)])
    def dropped(indices, values):  # traced once for any number of active sentences
        return ActiveSentences(indices, 4).scatter(tf.gather(values, indices), 0.0)

    np.testing.assert_array_equal(dropped(tf.constant([0, 2]), values).numpy(), [[1] * 3, [0] * 3, [1] * 3, [0] * 3])
    np.testing.assert_array_equal(dropped(tf.constant([3]), values).numpy(), [[0] * 3] * 3 + [[1] * 3])


def test_candidates_of_a_sentence_not_computed_are_impossible():
    active = ActiveSentences(tf.constant([2]), 3)
    candidates = dict(log_probs=tf.constant([[-0.5, -1.5]]), parents=tf.constant([[1, 0]]),
                      ids=tf.constant([[7, 2]]), is_eos=tf.constant([[False, True]]), length=tf.constant(4))
    alive = dict(log_probs=tf.constant([[-0.5]]), ids=tf.constant([[7]]), parents=tf.constant([[1]]))
    everywhere, alive_everywhere = active.scatter_candidates(candidates, alive)
    np.testing.assert_array_equal(everywhere["log_probs"].numpy(), [[LARGE_NEGATIVE] * 2] * 2 + [[-0.5, -1.5]])
    np.testing.assert_array_equal(everywhere["parents"].numpy(), [[0, 0], [0, 0], [1, 0]])
    np.testing.assert_array_equal(everywhere["ids"].numpy(), [[constants.PAD_ID] * 2] * 2 + [[7, 2]])
    np.testing.assert_array_equal(everywhere["is_eos"].numpy(), [[False, False], [False, False], [False, True]])
    assert int(everywhere["length"]) == 4
    np.testing.assert_array_equal(alive_everywhere["log_probs"].numpy(), [[LARGE_NEGATIVE], [LARGE_NEGATIVE], [-0.5]])
    np.testing.assert_array_equal(alive_everywhere["ids"].numpy(), [[constants.PAD_ID], [constants.PAD_ID], [7]])
    np.testing.assert_array_equal(alive_everywhere["parents"].numpy(), [[0], [0], [1]])


@pytest.mark.parametrize("model_class", ["RNNSearch", "RNNEncDec"])
def test_dropping_finished_sentences_changes_no_hypothesis(model_class):
    import rnnsearch_tf
    from helpers.model_test_utils import padded_batch, randomize_weights, small_config

    model = getattr(rnnsearch_tf, model_class)(small_config())
    randomize_weights(model, seed=8)
    bias = model.decoder.deep_output.output_projection.bias  # EOS improbable: long hypotheses
    bias.assign(tf.tensor_scatter_nd_add(bias, [[constants.EOS_ID]], [-8.0]))
    _, _, source_ids, _ = padded_batch()
    source_ids = tf.constant(np.concatenate([source_ids, source_ids[::-1]]))  # 6 sentences
    state = model.encode(source_ids)
    # Four sentences stop after 2 and 3 tokens: the other two go on in a batch of two.
    maximum_lengths = tf.constant([2, 12, 3, 2, 10, 3])
    results = [
        numpy_result(BeamSearch(model.symbols_to_logits_fn, beam_size=3, num_hypotheses=2, drop_finished=drop)
                     .search(state, maximum_lengths))
        for drop in (False, True)
    ]
    for name in ("ids", "lengths"):
        np.testing.assert_array_equal(results[1][name], results[0][name], err_msg=name)
    for name in ("scores", "log_probs", "alignments"):
        np.testing.assert_allclose(results[1][name], results[0][name], atol=1e-5, err_msg=name)
    assert results[0]["lengths"].max() > 3  # some sentence did go on
