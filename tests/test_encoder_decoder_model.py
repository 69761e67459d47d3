"""rnnsearch_tf/models/encoder_decoder_model.py: what RNNsearch and RNNencdec share (dropout in training only)."""

import numpy as np
import pytest

from helpers.model_test_utils import padded_batch, randomize_weights, small_config
from rnnsearch_tf import RNNEncDec, RNNSearch

DROPOUT = dict(embedding_dropout=0.3, hidden_dropout=0.3, readout_dropout=0.3)


@pytest.mark.parametrize("model_class", [RNNSearch, RNNEncDec])
def test_dropout_acts_in_training_only(model_class):
    _, _, source_ids, target_ids = padded_batch()
    plain = model_class(small_config())
    randomize_weights(plain, seed=4)
    with_dropout = model_class(small_config(**DROPOUT))
    for target, source in zip(with_dropout.weights, plain.weights):
        target.assign(source)
    expected = plain.token_log_probs(source_ids, target_ids).numpy()
    np.testing.assert_allclose(with_dropout.token_log_probs(source_ids, target_ids).numpy(), expected, atol=1e-6)
    first, _ = with_dropout.teacher_forcing(source_ids, target_ids, training=True)
    second, _ = with_dropout.teacher_forcing(source_ids, target_ids, training=True)
    inference, _ = with_dropout.teacher_forcing(source_ids, target_ids)
    assert np.all(np.isfinite(first.numpy()))
    assert not np.allclose(first.numpy(), inference.numpy())
    assert not np.allclose(first.numpy(), second.numpy())  # a new mask every call
    # Keras's own call in training (`model(x, training=True)`, `fit`) applies it too.
    called = with_dropout((source_ids, target_ids), training=True).numpy()
    assert not np.allclose(called, inference.numpy()) and not np.allclose(called, first.numpy())
    np.testing.assert_allclose(with_dropout((source_ids, target_ids)).numpy(), inference.numpy(), atol=1e-6)
