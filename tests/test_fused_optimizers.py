"""The fused optimizers: the update rules of Adam and Adadelta in NumPy, Keras' own optimizers, and
checkpoints that load across the two."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from rnnsearch_tf.training.fused_optimizers import FusedAdadelta, FusedAdam

RNG = np.random.default_rng(3)
START = RNG.normal(size=(6, 5)).astype("float32")
GRADIENTS = [RNG.normal(size=(6, 5)).astype("float32") * scale for scale in (1.0, 0.1, 3.0, 0.5)]


def numpy_adam(learning_rate=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    theta, m, v = START.astype("float64"), 0.0, 0.0
    for t, g in enumerate(GRADIENTS, start=1):
        m = beta_1 * m + (1 - beta_1) * g
        v = beta_2 * v + (1 - beta_2) * g**2
        theta = theta - learning_rate * np.sqrt(1 - beta_2**t) / (1 - beta_1**t) * m / (np.sqrt(v) + epsilon)
    return theta


def numpy_adadelta(learning_rate=1.0, rho=0.95, epsilon=1e-6):
    theta, mean_square_gradient, mean_square_delta = START.astype("float64"), 0.0, 0.0
    for g in GRADIENTS:
        mean_square_gradient = rho * mean_square_gradient + (1 - rho) * g**2
        delta = -np.sqrt(mean_square_delta + epsilon) / np.sqrt(mean_square_gradient + epsilon) * g
        mean_square_delta = rho * mean_square_delta + (1 - rho) * delta**2
        theta = theta + learning_rate * delta
    return theta


def trained(optimizer):
    variable = keras.Variable(START)
    optimizer.build([variable])
    step = tf.function(lambda gradient: optimizer.apply([gradient], [variable]))
    for gradient in GRADIENTS:
        step(tf.constant(gradient))
    return variable.numpy(), optimizer


CASES = [
    (FusedAdam, keras.optimizers.Adam, dict(learning_rate=0.01), numpy_adam),
    (FusedAdadelta, keras.optimizers.Adadelta, dict(learning_rate=1.0, rho=0.95, epsilon=1e-6), numpy_adadelta),
]


@pytest.mark.parametrize("fused_class, keras_class, settings, reference", CASES)
def test_fused_update_follows_the_equations_and_keras(fused_class, keras_class, settings, reference):
    fused, _ = trained(fused_class(**settings))
    unfused, _ = trained(keras_class(**settings))
    np.testing.assert_allclose(fused, reference(**settings), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fused, unfused, rtol=1e-5, atol=1e-6)
    assert np.abs(fused - START).max() > 1e-3  # the variable moved


@pytest.mark.parametrize("fused_class, keras_class, settings, reference", CASES)
def test_a_checkpoint_of_the_keras_optimizer_resumes_in_the_fused_one(fused_class, keras_class, settings, reference,
                                                                    tmp_path):
    _, optimizer = trained(keras_class(**settings))
    path = tf.train.Checkpoint(optimizer=optimizer).write(str(tmp_path / "ckpt"))
    restored = fused_class(**settings)
    restored.build([keras.Variable(START)])
    tf.train.Checkpoint(optimizer=restored).read(path).assert_consumed()
    assert len(restored.variables) == len(optimizer.variables)
    for actual, expected in zip(restored.variables, optimizer.variables):
        np.testing.assert_array_equal(actual.numpy(), expected.numpy())


def test_fused_adam_refuses_amsgrad():
    with pytest.raises(ValueError, match="amsgrad"):
        FusedAdam(amsgrad=True)
