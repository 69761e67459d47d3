"""The training recipe's parts: dropout only in training, label smoothing, loss normalisation, the
learning-rate schedule and the flags generated from the config dataclasses."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from absl import flags

from helpers.model_test_utils import padded_batch, randomize_weights, small_config
from rnnsearch_tf import ModelConfig, RNNEncDec, RNNSearch
from rnnsearch_tf.cli.config_flags import config_from_flags, define_config_flags, field_helps
from rnnsearch_tf.training.learning_rate_schedule import LearningRateSchedule
from rnnsearch_tf.training.train_step import make_train_step, training_loss
from rnnsearch_tf.training.training_config import TrainingConfig

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


def test_learning_rate_warms_up_linearly_then_decays_on_demand():
    schedule = LearningRateSchedule(0.002, warmup_steps=4)
    rates = [float(schedule(step)) for step in range(6)]
    np.testing.assert_allclose(rates, [0.0005, 0.001, 0.0015, 0.002, 0.002, 0.002], rtol=1e-6)
    schedule.decay(0.5)
    assert float(schedule(10)) == pytest.approx(0.001)
    assert float(LearningRateSchedule(0.1)(0)) == pytest.approx(0.1)


def test_flags_are_generated_from_the_config_fields():
    flag_values = flags.FlagValues()
    holders = define_config_flags(ModelConfig, skip=("source_vocab_size", "target_vocab_size"),
                                  flag_values=flag_values)
    flag_values(["test", "--hidden_dim=7", "--initializer=xavier", "--hidden_dropout=0.25"])
    config = config_from_flags(ModelConfig, holders, source_vocab_size=10, target_vocab_size=12)
    assert config == ModelConfig(source_vocab_size=10, target_vocab_size=12, hidden_dim=7, initializer="xavier",
                                 hidden_dropout=0.25)
    assert flag_values["embedding_dim"].default == ModelConfig.embedding_dim
    assert flag_values["initializer"].help.startswith('<paper|uniform|xavier>: "paper" (Appendix B.1)')
    with pytest.raises(flags.IllegalFlagValueError):
        flag_values["initializer"].parse("normal")


def test_every_training_field_has_a_documented_flag():
    helps = field_helps(TrainingConfig)
    flag_values = flags.FlagValues()
    holders = define_config_flags(TrainingConfig, flag_values=flag_values)
    for name, holder in holders.items():
        assert name in helps, f"TrainingConfig's docstring does not document {name}"
        assert flag_values[name].help.endswith(helps[name])  # enum flags put their choices first
    assert flag_values["adadelta_epsilon"].help == flag_values["adadelta_rho"].help
    assert flag_values["data_dir"].default is None


@pytest.mark.parametrize("field, value, message", [
    ("initializer", "normal", "initializer must be one of"),
    ("hidden_dropout", 1.0, r"hidden_dropout must be a rate in \[0, 1\)"),
    ("embedding_dropout", -0.1, r"embedding_dropout must be a rate"),
])
def test_bad_model_options_name_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        small_config(**{field: value})


@pytest.mark.parametrize("field, value, message", [
    ("label_smoothing", 1.0, r"label_smoothing must be in \[0, 1\)"),
    ("loss_normalization", "words", "loss_normalization must be one of"),
    ("learning_rate_decay", 0.0, r"learning_rate_decay must be in \(0, 1\]"),
    ("warmup_steps", -1, "warmup_steps must be at least 0"),
    ("model", "transformer", "model must be one of"),
])
def test_bad_training_options_name_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        TrainingConfig(data_dir="d", model_dir="m", **{field: value})
