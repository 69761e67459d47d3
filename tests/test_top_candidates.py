"""`top_candidates` against the plain normalise-everything-then-top-k it replaces."""

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline import constants
from rnnsearch_tf.search.top_candidates import top_candidates
from rnnsearch_tf.search.search_helpers import IMPOSSIBLE, LARGE_NEGATIVE


def plain_top_candidates(logits, alive_log_probs, k, is_last_step, forbidden_ids, eos_id):
    """NumPy: log-softmax, restrictions, add the hypothesis log-probability, stable sort of all."""
    batch, beam = alive_log_probs.shape
    vocab = logits.shape[-1]
    log_probs = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True))
    log_probs -= logits.max(-1, keepdims=True)
    log_probs = log_probs.reshape(batch, beam, vocab)
    log_probs[:, :, list(forbidden_ids)] = LARGE_NEGATIVE
    not_eos = np.arange(vocab) != eos_id
    log_probs[np.ix_(is_last_step, np.arange(beam), not_eos)] = LARGE_NEGATIVE
    candidates = (alive_log_probs[:, :, None] + log_probs).reshape(batch, beam * vocab)
    order = np.argsort(-candidates, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(candidates, order, axis=1), order


@pytest.mark.parametrize(
    "vocab, beam, integer_logits",
    [(10004, 3, False), (301, 4, False), (97, 2, True), (5, 3, False), (130, 1, True)],
)
def test_equals_normalising_and_sorting_every_candidate(vocab, beam, integer_logits):
    rng = np.random.default_rng(vocab + beam)
    batch, k = 3, 2 * beam
    logits = rng.normal(size=(batch * beam, vocab)).astype(np.float32) * 4
    if integer_logits:  # many exact ties
        logits = np.round(logits)
    logits[:, vocab - 1] = logits.max() + 1  # a forbidden token is the most probable one
    alive = np.log(rng.uniform(0.05, 1.0, size=(batch, beam))).astype(np.float32)
    alive[0, 1:] = LARGE_NEGATIVE  # the first step: one live hypothesis
    is_last_step = np.array([False, True, False])
    forbidden = (constants.PAD_ID, constants.BOS_ID, vocab - 1)
    expected_values, expected_indices = plain_top_candidates(
        logits.astype(np.float64), alive.astype(np.float64), k, is_last_step, forbidden, constants.EOS_ID
    )
    values, hypotheses, ids = top_candidates(
        tf.constant(logits), tf.constant(alive), k, tf.constant(is_last_step), forbidden, constants.EOS_ID
    )
    values, indices = values.numpy(), hypotheses.numpy() * vocab + ids.numpy()
    np.testing.assert_allclose(values, expected_values, rtol=1e-5, atol=1e-3)
    possible = expected_values > IMPOSSIBLE
    assert possible[:, 0].all()
    np.testing.assert_array_equal(np.where(possible, indices, -1), np.where(possible, expected_indices, -1))
    # At its last step a sentence can only end: the EOS of each live hypothesis.
    assert set(indices[1][possible[1]] % vocab) == {constants.EOS_ID}


def test_compiles_with_xla():
    rng = np.random.default_rng(0)
    logits = tf.constant(rng.normal(size=(4 * 3, 200)).astype(np.float32))
    alive = tf.constant(np.log(rng.uniform(0.1, 1, size=(4, 3))).astype(np.float32))
    last = tf.constant([False, False, True, False])

    def run(logits, alive, last):
        return top_candidates(logits, alive, 6, last, (0, 1), constants.EOS_ID)

    compiled = tf.function(run, jit_compile=True)(logits, alive, last)
    eager = run(logits, alive, last)
    np.testing.assert_allclose(compiled[0].numpy(), eager[0].numpy(), rtol=1e-6)
    np.testing.assert_array_equal(compiled[1].numpy(), eager[1].numpy())
    np.testing.assert_array_equal(compiled[2].numpy(), eager[2].numpy())
