"""bf16 mixed precision (`ModelConfig.precision`): bf16 compute, float32 weights and float32 results."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from helpers.model_test_utils import padded_batch, randomize_weights, small_config
from rnnsearch_tf.models.rnn_enc_dec import RNNEncDec
from rnnsearch_tf.models.rnn_search import RNNSearch
from rnnsearch_tf.search.beam_search import BeamSearch
from rnnsearch_tf.training.train_step import make_train_step
from rnnsearch_tf.utils.precision import (
    BFLOAT16_MINIMUM_SPEEDUP,
    bfloat16_speedup,
    dtype_policy,
    has_bfloat16_hardware,
)


@pytest.mark.parametrize("model_class", [RNNSearch, RNNEncDec])
def test_mixed_bfloat16_computes_in_bf16_and_stays_close_to_float32(model_class):
    reference = model_class(small_config())
    randomize_weights(reference, stddev=0.3)
    mixed = model_class(small_config(precision="mixed_bfloat16"))
    mixed.set_weights(reference.get_weights())
    assert mixed.decoder.compute_dtype == "bfloat16" and reference.decoder.compute_dtype == "float32"
    assert {variable.dtype for variable in mixed.weights} == {"float32"}
    _, _, sources, targets = padded_batch()
    expected = reference.token_log_probs(sources, targets)
    log_probs = mixed.token_log_probs(sources, targets)
    assert log_probs.dtype == tf.float32
    np.testing.assert_allclose(log_probs, expected, atol=0.15)  # bf16 keeps 8 bits of mantissa
    assert not np.allclose(log_probs, expected, atol=1e-6)  # bf16 really was used
    result = BeamSearch(mixed.symbols_to_logits_fn, beam_size=3).search(
        mixed.encode(tf.constant(sources)), tf.constant([6, 6, 6])
    )
    assert result["scores"].dtype == tf.float32 and np.all(np.isfinite(result["scores"].numpy()))


def test_auto_takes_bf16_exactly_where_the_hardware_has_it_and_it_pays():
    speedup = bfloat16_speedup()
    assert (speedup > 0) == has_bfloat16_hardware() and np.isfinite(speedup)
    assert dtype_policy("auto") == ("mixed_bfloat16" if speedup >= BFLOAT16_MINIMUM_SPEEDUP else "float32")
    assert dtype_policy("float32") == "float32"
    with pytest.raises(ValueError, match="precision must be one of"):
        dtype_policy("float16")


def test_mixed_bfloat16_training_steps_lower_the_loss_and_keep_float32_weights():
    keras.utils.set_random_seed(3)
    model = RNNSearch(small_config(precision="mixed_bfloat16", initializer="uniform"))
    optimizer = keras.optimizers.Adam(0.01)
    optimizer.build(model.trainable_variables)
    _, _, sources, targets = padded_batch()
    batch = {"source_ids": tf.constant(sources), "target_ids": tf.constant(targets)}
    step = make_train_step(model, optimizer, lambda: batch, tf.distribute.get_strategy(), clip_norm=1.0)
    losses = [float(step()["nll_sum"]) for _ in range(30)]
    assert np.isfinite(losses).all() and losses[-1] < 0.7 * losses[0], losses
    assert {variable.dtype for variable in model.trainable_variables} == {"float32"}
