"""SentenceSearch: the strategy's search with EOS, length bounds, empty sentences and the shortlist around it."""

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline import constants
from rnnsearch_tf.inference.model_loader import load_model_dir
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.inference.sentence_search import SentenceSearch, truncate, with_eos
from rnnsearch_tf.inference.shortlist import Shortlist
from rnnsearch_tf.models.ensemble import Ensemble
from helpers.serving_test_utils import SEARCH_OPTIONS, write_model_dir


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return load_model_dir(write_model_dir(tmp_path_factory.mktemp("sentence_search") / "model")).model


def test_truncate_and_with_eos_are_exact():
    rows = tf.ragged.constant([[5, 6, 7], [], [8]])
    cut, was_cut = truncate(rows, 2)
    assert cut.to_list() == [[5, 6], [], [8]] and list(was_cut.numpy()) == [True, False, False]
    np.testing.assert_array_equal(with_eos(cut), [[5, 6, 2], [2, 0, 0], [8, 2, 0]])
    tokens = with_eos(tf.ragged.constant([["a"], []]), constants.EOS_TOKEN, "")
    assert tokens.numpy().tolist() == [[b"a", b"</s>"], [b"</s>", b""]]


def test_the_search_is_the_strategys_with_eos_and_each_sentences_bound(model):
    config = SearchConfig(**SEARCH_OPTIONS)
    token_ids = tf.ragged.constant([[4, 5, 6], [7, 8]])
    result = SentenceSearch(model, config, num_alternatives=3)(token_ids)
    lengths = tf.constant([3, 2])
    expected = config.strategy(model.symbols_to_logits_fn).search(
        model.encode(tf.constant([[4, 5, 6, 2], [7, 8, 2, 0]])), config.maximum_target_length(lengths))
    np.testing.assert_array_equal(result["ids"], expected["ids"])
    np.testing.assert_array_equal(result["lengths"], expected["lengths"])
    np.testing.assert_allclose(result["scores"], expected["scores"], rtol=1e-6)
    np.testing.assert_allclose(result["alignment"], expected["alignments"], rtol=1e-6)
    assert np.all(result["lengths"].numpy() <= config.maximum_target_length(lengths).numpy()[:, None])


def test_sentences_without_tokens_and_empty_batches_are_not_searched(model):
    search = SentenceSearch(model, SearchConfig(**SEARCH_OPTIONS), num_alternatives=3)
    n = SEARCH_OPTIONS["num_hypotheses"]
    result = search(tf.ragged.constant([[4, 5], []], dtype=tf.int32), prefix_ids=tf.constant([[6], [6]]))
    assert np.all(result["lengths"].numpy()[1] == 0) and np.all(result["scores"].numpy()[1] == 0)
    assert np.all(result["ids"].numpy()[1] == constants.PAD_ID) and np.all(result["alignment"].numpy()[1] == 0)
    assert np.all(result["alternative_ids"].numpy()[1] == constants.PAD_ID)
    assert np.all(np.isneginf(result["alternative_log_probs"].numpy()[1]))
    assert np.all(result["lengths"].numpy()[0] > 0)
    empty = search(tf.RaggedTensor.from_row_lengths(tf.zeros([0], tf.int32), tf.zeros([0], tf.int64)))
    assert empty["ids"].shape[:2] == (0, n) and empty["alignment"].shape[:2] == (0, n)


def test_a_shortlist_search_answers_in_vocabulary_ids(model):
    source_size = model.config.source_vocab_size
    candidates = np.full((source_size, 1), 9, np.int32)
    shortlist = Shortlist(candidates, [5])
    config = SearchConfig(**dict(SEARCH_OPTIONS, shortlist=True, forbid_unk=False))
    result = SentenceSearch(model, config, num_alternatives=3, shortlist=shortlist)(tf.ragged.constant([[4, 6]]))
    assert set(result["ids"].numpy().ravel()) <= {0, 1, 2, 3, 5, 9}
    assert np.any(result["ids"].numpy() >= 5)  # mapped back from the reduced ids 4 and 5


def test_a_shortlist_is_refused_without_one_or_for_an_ensemble(model):
    config = SearchConfig(shortlist=True)
    with pytest.raises(ValueError, match="needs a Shortlist"):
        SentenceSearch(model, config, 3)
    shortlist = Shortlist(np.zeros((model.config.source_vocab_size, 1), np.int32), [4])
    with pytest.raises(ValueError, match="not an ensemble"):
        SentenceSearch(Ensemble([model, model]), config, 3, shortlist)
    with pytest.raises(ValueError, match="source words"):
        SentenceSearch(model, config, 3, Shortlist([[0]] * 3, [4]))


def test_a_sentences_samples_do_not_depend_on_the_sentences_beside_it(model):
    """`--sampling_seed` gives a sentence the same samples in a batch of one, in a batch of others and in another
    order (`--batch_size`, `--decode_workers`, a server's batches), from the hash of its ids; other sentences
    and other seeds get others."""
    def samples(rows, seed=7):
        config = SearchConfig(sampling=True, num_samples=6, sampling_seed=seed)
        return SentenceSearch(model, config, num_alternatives=0)(tf.ragged.constant(rows))["ids"].numpy()

    alone = samples([[4, 5, 6]])[0]
    assert len({ids.tobytes() for ids in alone}) > 1  # the samples differ
    np.testing.assert_array_equal(samples([[7, 8], [9, 4, 5, 6, 7], [4, 5, 6]])[2][:, :alone.shape[1]], alone)
    np.testing.assert_array_equal(samples([[4, 5, 6], [7, 8]])[0][:, :alone.shape[1]], alone)
    assert not np.array_equal(samples([[4, 5, 6]], seed=8)[0], alone)
    twice = samples([[4, 5, 6], [4, 5, 6, 7]])
    assert not np.array_equal(twice[0], twice[1][:, :twice[0].shape[1]])
