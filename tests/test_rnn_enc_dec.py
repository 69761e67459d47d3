"""RNNencdec against a NumPy transcription of Cho et al. 2014, Appendix A."""

import numpy as np
import pytest
import tensorflow as tf

from helpers import numpy_reference
from helpers.model_test_utils import pad, padded_batch, randomize_weights, small_config
from rnnsearch_tf import RNNEncDec


@pytest.mark.parametrize("readout_state", ["current", "previous"])
def test_log_probs_match_numpy_transcription(readout_state):
    model = RNNEncDec(small_config(readout_state=readout_state))
    randomize_weights(model, seed=11)
    sources, targets, source_ids, target_ids = padded_batch()
    log_probs = model.token_log_probs(source_ids, target_ids).numpy()
    weights = model.paper_weights()
    for index, (source, target) in enumerate(zip(sources, targets)):
        expected, _ = numpy_reference.rnnencdec_log_probs(weights, source, target, readout_state)
        np.testing.assert_allclose(log_probs[index, : len(target)], expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(log_probs[index, len(target) :], 0.0)


def test_padding_changes_nothing():
    model = RNNEncDec(small_config())
    randomize_weights(model, seed=12)
    _, _, source_ids, target_ids = padded_batch()
    log_probs = model.token_log_probs(source_ids, target_ids).numpy()
    padded = model.token_log_probs(
        pad(source_ids.tolist(), source_ids.shape[1] + 3), pad(target_ids.tolist(), target_ids.shape[1] + 2)
    ).numpy()
    np.testing.assert_allclose(padded[:, : target_ids.shape[1]], log_probs, atol=1e-6)


def test_call_equals_stepping_by_hand():
    model = RNNEncDec(small_config())
    randomize_weights(model, seed=13)
    _, _, source_ids, target_ids = padded_batch()
    logits, alignment = model.teacher_forcing(source_ids, target_ids)
    assert alignment.shape == (3, target_ids.shape[1], 0)
    state = model.encode(tf.constant(source_ids))
    previous_ids = tf.fill([source_ids.shape[0]], 1)
    for position in range(target_ids.shape[1]):
        step_logits, new_state, _ = model.step(previous_ids, state)
        assert list(new_state) == ["s"]  # the rest of the state is read only
        state = dict(state, **new_state)
        np.testing.assert_allclose(step_logits.numpy(), logits.numpy()[:, position], atol=1e-5)
        previous_ids = tf.constant(target_ids[:, position])


def test_paper_weights_cover_every_variable():
    config = small_config()
    model = RNNEncDec(config)
    weights = model.paper_weights()
    assert sum(v.size for v in weights.values()) == sum(int(np.prod(v.shape)) for v in model.weights)
    n = config.hidden_dim
    assert weights["V"].shape == (n, n) and weights["V_prime"].shape == (n, n)
    assert weights["C"].shape == (n, n) and weights["C_o"].shape == (n, 2 * config.maxout_dim)
    assert "W_a" not in weights


def test_misuse_raises_clear_errors():
    model = RNNEncDec(small_config())
    with pytest.raises(ValueError, match="target_ids must be a rank-2"):
        model.token_log_probs([[5, 2]], [[[4, 2]]])
    with pytest.raises(ValueError, match=r"source_ids holds id 40 .* 23 entries"):
        model.token_log_probs([[40, 2]], [[4, 2]])
