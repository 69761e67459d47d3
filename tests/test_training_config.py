"""rnnsearch_tf/training/training_config.py: bad options name the field."""

import pytest

from rnnsearch_tf.training.training_config import UNSET_AT_ZERO, TrainingConfig


@pytest.mark.parametrize("field, value, message", [
    ("label_smoothing", 1.0, r"label_smoothing must be in \[0, 1\)"),
    ("loss_normalization", "words", "loss_normalization must be one of"),
    ("learning_rate_decay", 0.0, r"learning_rate_decay must be in \(0, 1\]"),
    ("warmup_steps", -1, "warmup_steps must be at least 0"),
    ("model", "transformer", "model must be one of"),
    ("select_by", "ter", "select_by must be one of"),
    ("switch_at", 1.0, r"switch_at must be in \(0, 1\)"),
    ("switch_at", 0.0, r"switch_at must be in \(0, 1\)"),
    ("subword_sampling_alpha", -0.1, r"subword_sampling_alpha must be in \[0, 1\]"),
    ("subword_sampling_alpha", 1.5, r"subword_sampling_alpha must be in \[0, 1\]"),
    ("clip_norm", -1.0, r"^TrainingConfig.clip_norm must be at least 0, got -1.0$"),
    ("learning_rate", -1.0, r"^TrainingConfig.learning_rate must be at least 0, got -1.0$"),
    ("adadelta_rho", 1.5, r"^TrainingConfig.adadelta_rho must be in \[0, 1\), got 1.5$"),
    ("adadelta_rho", 1.0, r"^TrainingConfig.adadelta_rho must be in \[0, 1\), got 1.0$"),
    ("adadelta_rho", -0.1, r"^TrainingConfig.adadelta_rho must be in \[0, 1\), got -0.1$"),
    ("adadelta_epsilon", 0.0, r"^TrainingConfig.adadelta_epsilon must be more than 0, got 0.0$"),
    ("attention_sentences", -1, r"^TrainingConfig.attention_sentences must be at least 0, got -1$"),
    *((name, -1, rf"TrainingConfig.{name} must be at least 0 \(0: unset\), got -1") for name in UNSET_AT_ZERO),
])
def test_bad_training_options_name_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        TrainingConfig(data_dir="d", model_dir="m", **{field: value})


def test_a_clip_norm_and_a_learning_rate_of_0_are_accepted():  # no clipping; weights left as they are
    config = TrainingConfig(data_dir="d", model_dir="m", clip_norm=0.0, learning_rate=0.0)
    assert (config.clip_norm, config.learning_rate) == (0.0, 0.0)


@pytest.mark.parametrize("name", UNSET_AT_ZERO)
def test_zero_is_as_if_the_flag_were_left_out(name):
    assert getattr(TrainingConfig(data_dir="d", model_dir="m", **{name: 0}), name) is None
    assert getattr(TrainingConfig(data_dir="d", model_dir="m", **{name: 3}), name) == 3
