"""rnnsearch_tf/training/train_step.py: the loss (label smoothing, normalisation by tokens or sentences) and its
written-out gradient, and the update, which with XLA (`jit_compile`) and length buckets equals the plain update."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from helpers.model_test_utils import padded_batch, randomize_weights, small_config
from rnnsearch_tf import ModelConfig
from rnnsearch_tf.models.rnn_enc_dec import RNNEncDec
from rnnsearch_tf.models.rnn_search import RNNSearch
from rnnsearch_tf.training.train_step import make_train_step, token_losses, training_loss

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
    # Through a dataset iterator, as `Trainer` reads batches: shapes `(None, None)`, which XLA must compile too.
    rows = tf.data.Dataset.from_tensor_slices(BATCH)
    batches = iter(rows.padded_batch(2, padded_shapes={name: [None] for name in BATCH}))  # BATCH again
    assert batches.element_spec["source_ids"].shape.as_list() == [None, None]
    train_step = make_train_step(model, optimizer, lambda: next(batches), strategy, clip_norm=1.0,
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


@pytest.mark.parametrize("clip_norm", [1e-3, 1e9, 0.0])  # 0: no clipping
def test_update_is_the_per_token_gradient_clipped_to_clip_norm(clip_norm):
    keras.utils.set_random_seed(7)
    model = RNNSearch(CONFIG)
    model((BATCH["source_ids"], BATCH["target_ids"]))
    before = [variable.numpy() for variable in model.trainable_variables]
    with tf.GradientTape() as tape:
        _, loss_sum = training_loss(model, BATCH["source_ids"], BATCH["target_ids"])
    per_token = [tf.convert_to_tensor(g) / 11 for g in tape.gradient(loss_sum, model.trainable_variables)]  # 11 tokens
    expected, norm = tf.clip_by_global_norm(per_token, clip_norm) if clip_norm else (per_token,
                                                                                     tf.linalg.global_norm(per_token))
    optimizer = keras.optimizers.SGD(learning_rate=1.0)
    optimizer.build(model.trainable_variables)
    statistics = make_train_step(model, optimizer, lambda: BATCH, tf.distribute.get_strategy(), clip_norm)()
    np.testing.assert_allclose(statistics["gradient_norm"].numpy(), norm.numpy(), rtol=1e-5)
    assert (norm.numpy() > clip_norm) == (clip_norm < 1)  # clipped only at the small clip_norm
    for variable, old, gradient in zip(model.trainable_variables, before, expected):
        np.testing.assert_allclose(old - variable.numpy(), gradient.numpy(), rtol=1e-4, atol=1e-8)


def test_label_smoothing_matches_numpy():
    model = RNNSearch(small_config())
    randomize_weights(model, seed=5)
    _, _, source_ids, target_ids = padded_batch()
    logits = model.teacher_forcing(source_ids, target_ids)[0].numpy().astype("float64")
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    is_token = target_ids > 0
    nll = -np.take_along_axis(log_probs, target_ids[..., None], -1)[..., 0]
    epsilon = 0.1
    smoothed = (1 - epsilon) * nll - epsilon * log_probs.mean(-1)
    nll_sum, loss_sum = training_loss(model, source_ids, target_ids, label_smoothing=epsilon)
    np.testing.assert_allclose(float(nll_sum), nll[is_token].sum(), rtol=1e-5)
    np.testing.assert_allclose(float(loss_sum), smoothed[is_token].sum(), rtol=1e-5)
    plain_nll, plain_loss = training_loss(model, source_ids, target_ids)
    assert float(plain_nll) == float(plain_loss) == pytest.approx(nll[is_token].sum(), rel=1e-5)


@pytest.mark.parametrize("epsilon", [0.0, 0.1])
def test_token_losses_and_their_gradient_match_numpy(epsilon):
    rng = np.random.default_rng(11)
    logits = rng.normal(0.0, 3.0, (3, 4, 9))  # [batch, tgt_len, K_y]
    target_ids = rng.integers(0, 9, (3, 4))
    nll_weights, loss_weights = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))  # the upstream gradients
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(log_probs, target_ids[..., None], -1)[..., 0]
    loss = (1 - epsilon) * nll - epsilon * log_probs.mean(-1)
    one_hot = np.eye(9)[target_ids]
    softmax = np.exp(log_probs)
    expected_gradient = (nll_weights[..., None] * (softmax - one_hot)
                         + loss_weights[..., None] * (softmax - (1 - epsilon) * one_hot - epsilon / 9))
    logits_tensor = tf.constant(logits, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(logits_tensor)
        actual_nll, actual_loss = token_losses(logits_tensor, tf.constant(target_ids, tf.int32), epsilon)
        weighted = tf.reduce_sum(actual_nll * nll_weights) + tf.reduce_sum(actual_loss * loss_weights)
    np.testing.assert_allclose(actual_nll.numpy(), nll, rtol=1e-5)
    np.testing.assert_allclose(actual_loss.numpy(), loss, rtol=1e-5)
    np.testing.assert_allclose(tape.gradient(weighted, logits_tensor).numpy(), expected_gradient, atol=1e-6)


def test_gradient_of_the_loss_alone_is_the_smoothed_softmax_minus_targets():
    logits = tf.constant(np.random.default_rng(2).normal(size=(2, 3, 5)), tf.float32)
    target_ids = tf.constant([[1, 4, 0], [2, 2, 3]])
    with tf.GradientTape() as tape:
        tape.watch(logits)
        loss_sum = tf.reduce_sum(token_losses(logits, target_ids, 0.2)[1])  # the NLL's output not differentiated
    expected = tf.nn.softmax(logits) - 0.8 * tf.one_hot(target_ids, 5) - 0.2 / 5
    np.testing.assert_allclose(tape.gradient(loss_sum, logits).numpy(), expected.numpy(), atol=1e-6)


def gradient_norm(loss_normalization):
    keras.utils.set_random_seed(3)
    model = RNNSearch(small_config())
    optimizer = keras.optimizers.SGD(0.0)
    optimizer.build(model.trainable_variables)
    _, _, source_ids, target_ids = padded_batch()
    batch = {"source_ids": tf.constant(source_ids), "target_ids": tf.constant(target_ids)}
    step = make_train_step(model, optimizer, lambda: batch, tf.distribute.get_strategy(), clip_norm=1e9,
                           loss_normalization=loss_normalization)
    return {name: float(value) for name, value in step().items()}


def test_loss_normalization_divides_by_tokens_or_sentences():
    by_tokens, by_sentences = gradient_norm("tokens"), gradient_norm("sentences")
    assert by_tokens["target_tokens"] == 10 and by_tokens["sentences"] == 3
    assert by_sentences["nll_sum"] == pytest.approx(by_tokens["nll_sum"])
    assert by_sentences["gradient_norm"] == pytest.approx(by_tokens["gradient_norm"] * 10 / 3, rel=1e-5)
