"""The training update: with XLA (`jit_compile`) and length buckets it equals the plain update."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from rnnsearch_tf import ModelConfig
from rnnsearch_tf.models.rnn_enc_dec import RNNEncDec
from rnnsearch_tf.models.rnn_search import RNNSearch
from rnnsearch_tf.training.train_step import make_train_step

CONFIG = ModelConfig(source_vocab_size=20, target_vocab_size=20, embedding_dim=6, hidden_dim=8, maxout_dim=4,
                     alignment_dim=7)
BATCH = {
    "source_ids": tf.constant([[5, 6, 7, 8, 2], [9, 10, 2, 0, 0]]),  # length 5: padded to 8 under XLA
    "target_ids": tf.constant([[11, 12, 13, 2, 0, 0, 0], [14, 15, 16, 17, 18, 19, 2]]),
}


def one_update(model_class, jit_compile):
    keras.utils.set_random_seed(7)
    strategy = tf.distribute.get_strategy()
    model = model_class(CONFIG)
    optimizer = keras.optimizers.Adam(learning_rate=0.01)
    optimizer.build(model.trainable_variables)
    train_step = make_train_step(model, optimizer, lambda: BATCH, strategy, clip_norm=1.0,
                                 jit_compile=jit_compile, jit_length_multiple=4)
    statistics = {name: value.numpy() for name, value in train_step().items()}
    return statistics, [variable.numpy() for variable in model.trainable_variables]


@pytest.mark.parametrize("model_class", [RNNSearch, RNNEncDec])
def test_jit_compiled_update_with_length_buckets_equals_plain_update(model_class):
    expected_statistics, expected_weights = one_update(model_class, jit_compile=False)
    statistics, weights = one_update(model_class, jit_compile=True)
    assert statistics["target_tokens"] == expected_statistics["target_tokens"] == 11
    assert statistics["sentences"] == 2 and statistics["finite"]
    np.testing.assert_allclose(statistics["nll_sum"], expected_statistics["nll_sum"], rtol=1e-5)
    np.testing.assert_allclose(statistics["gradient_norm"], expected_statistics["gradient_norm"], rtol=1e-4)
    for actual, expected in zip(weights, expected_weights):
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-6)
