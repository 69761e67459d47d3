"""The training update: with XLA (`jit_compile`) and length buckets it equals the plain update."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from rnnsearch_tf import ModelConfig
from rnnsearch_tf.models.rnn_enc_dec import RNNEncDec
from rnnsearch_tf.models.rnn_search import RNNSearch
from rnnsearch_tf.training.train_step import make_train_step, training_loss

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


@pytest.mark.parametrize("clip_norm", [1e-3, 1e9])
def test_update_is_the_per_token_gradient_clipped_to_clip_norm(clip_norm):
    keras.utils.set_random_seed(7)
    model = RNNSearch(CONFIG)
    model((BATCH["source_ids"], BATCH["target_ids"]))
    before = [variable.numpy() for variable in model.trainable_variables]
    with tf.GradientTape() as tape:
        _, loss_sum = training_loss(model, BATCH["source_ids"], BATCH["target_ids"])
    expected, norm = tf.clip_by_global_norm(
        [tf.convert_to_tensor(g) / 11 for g in tape.gradient(loss_sum, model.trainable_variables)], clip_norm
    )  # 11 target tokens
    optimizer = keras.optimizers.SGD(learning_rate=1.0)
    optimizer.build(model.trainable_variables)
    statistics = make_train_step(model, optimizer, lambda: BATCH, tf.distribute.get_strategy(), clip_norm)()
    np.testing.assert_allclose(statistics["gradient_norm"].numpy(), norm.numpy(), rtol=1e-5)
    assert (norm.numpy() > clip_norm) == (clip_norm < 1)  # clipped only at the small clip_norm
    for variable, old, gradient in zip(model.trainable_variables, before, expected):
        np.testing.assert_allclose(old - variable.numpy(), gradient.numpy(), rtol=1e-4, atol=1e-8)
