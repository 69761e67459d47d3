"""rnnsearch_tf/inference/search_config.py: the length bound, the strategy chosen, settings round trip, misuse."""

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline import constants
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.search.beam_search import BeamSearch
from rnnsearch_tf.search.greedy_search import GreedySearch
from rnnsearch_tf.search.sampler import Sampler


def test_maximum_target_length_of_an_int_and_of_a_tensor():
    config = SearchConfig(maximum_length_a=1.25, maximum_length_b=5)
    lengths = [0, 1, 3, 4, 10, 99]
    expected = [5, 6, 8, 10, 17, 128]  # floor(1.25 * length) + 5
    assert [config.maximum_target_length(length) for length in lengths] == expected
    bounds = config.maximum_target_length(tf.constant([lengths, lengths], tf.int32))  # [2, 6]
    assert bounds.dtype == tf.int32
    np.testing.assert_array_equal(bounds, [expected, expected])
    assert SearchConfig().maximum_target_length(50) == 110  # the paper's bound: 2 * 50 + 10


def test_the_strategy_the_settings_ask_for():
    def logits_fn(ids, step, state):
        del ids, step
        return tf.zeros([1, 8]), state

    greedy = SearchConfig(beam_size=1).strategy(logits_fn)
    assert isinstance(greedy, GreedySearch)
    assert greedy.forbidden_ids == (constants.PAD_ID, constants.BOS_ID)
    beam = SearchConfig(beam_size=1, length_normalization="length", forbid_unk=True).strategy(logits_fn)
    assert isinstance(beam, BeamSearch) and beam.beam_size == 1
    assert beam.forbidden_ids == (constants.PAD_ID, constants.BOS_ID, constants.UNK_ID)
    sampler = SearchConfig(sampling=True, num_samples=4, beam_size=1).strategy(logits_fn)
    assert isinstance(sampler, Sampler) and sampler.num_samples == 4
    assert SearchConfig(sampling=True, num_samples=4, beam_size=1).hypotheses == 4


def test_from_settings_reads_its_fields_among_the_translators_options():
    config = SearchConfig(beam_size=5, num_hypotheses=2, length_normalization="gnmt", maximum_length_a=1.5)
    settings = dict(config.to_dict(), source_language="en", maximum_batch_size=64, checkpoint="ckpt-3", version=2)
    assert SearchConfig.from_settings(settings) == config
    del settings["sampling_seed"]  # an export older than the field
    assert SearchConfig.from_settings(settings).sampling_seed == SearchConfig().sampling_seed


def test_misuse_is_refused():
    with pytest.raises(ValueError, match="length_normalization must be one of"):
        SearchConfig(length_normalization="max")
    with pytest.raises(ValueError, match="num_hypotheses must be between 1 and beam_size=2"):
        SearchConfig(beam_size=2, num_hypotheses=3)
    with pytest.raises(ValueError, match="beam_size"):
        SearchConfig(beam_size=0)
    with pytest.raises(ValueError, match="maximum_length_a"):
        SearchConfig(maximum_length_a=-1.0)
    with pytest.raises(ValueError, match=r"^SearchConfig.sampling_temperature must be above 0, got 0.0$"):
        SearchConfig(sampling=True, sampling_temperature=0.0)  # the flag's name, not the sampler's "use GreedySearch"
