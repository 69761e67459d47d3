"""rnnsearch_tf.layers.dense: a bias trained in bf16 gets its gradient summed in float32; otherwise Keras' Dense."""

import keras
import numpy as np
import tensorflow as tf

from rnnsearch_tf.layers.dense import Dense, add_bias

ROWS, UNITS = 1280, 64  # a training batch's positions at the peer's size


def _softmax_like_upstream():
    """[80, 16, UNITS] bf16 gradients as a softmax's (p - one-hot): many small positive terms and one -1 a row."""
    rng = np.random.default_rng(0)
    probabilities = rng.dirichlet(np.full(UNITS, 0.3), size=ROWS)
    targets = rng.integers(0, UNITS, size=ROWS)
    upstream = probabilities - np.eye(UNITS)[targets]
    return upstream.reshape(80, 16, UNITS)


def _bias_gradient(layer, inputs, upstream, training):
    with tf.GradientTape() as tape:
        outputs = layer(inputs, training=training)
    return tape.gradient(outputs, layer.bias, output_gradients=tf.cast(upstream, outputs.dtype))


def _relative_error(actual, expected):
    return np.linalg.norm(np.asarray(actual, np.float64) - expected) / np.linalg.norm(expected)


def test_add_bias_adds_and_sums_its_bias_gradient_in_float32():
    upstream = _softmax_like_upstream()
    x = tf.cast(tf.random.stateless_normal([80, 16, UNITS], seed=[1, 2]), tf.bfloat16)
    bias = tf.cast(tf.range(UNITS, dtype=tf.float32) / 10, tf.bfloat16)
    with tf.GradientTape() as tape:
        tape.watch([x, bias])
        added = add_bias(x, bias)
    np.testing.assert_array_equal(added.numpy(), (x + bias).numpy())
    x_gradient, bias_gradient = tape.gradient(added, [x, bias], output_gradients=tf.cast(upstream, tf.bfloat16))
    np.testing.assert_array_equal(x_gradient.numpy(), tf.cast(upstream, tf.bfloat16).numpy())
    assert bias_gradient.dtype == tf.bfloat16 and bias_gradient.shape == [UNITS]
    exact = tf.cast(tf.cast(upstream, tf.bfloat16), tf.float64).numpy().sum(axis=(0, 1))  # the terms it was given
    assert _relative_error(tf.cast(bias_gradient, tf.float64).numpy(), exact) < 0.005  # bf16's rounding of the sum


def test_a_bf16_layer_trains_its_bias_as_a_float32_one_and_decodes_as_keras_dense():
    upstream = _softmax_like_upstream()
    inputs = tf.random.stateless_normal([80, 16, 32], seed=[3, 4])
    layers = {}
    for policy in ("float32", "mixed_bfloat16"):
        keras.utils.set_random_seed(5)
        layers[policy] = Dense(UNITS, bias_initializer="random_normal", dtype=policy)
        layers[policy].build(inputs.shape)
    reference = _bias_gradient(layers["float32"], inputs, upstream, training=True).numpy()
    trained = _bias_gradient(layers["mixed_bfloat16"], inputs, upstream, training=True)
    assert _relative_error(tf.cast(trained, tf.float64).numpy(), reference) < 0.01
    keras_dense = keras.layers.Dense.from_config(layers["mixed_bfloat16"].get_config())
    keras_dense.build(inputs.shape)
    keras_dense.set_weights(layers["mixed_bfloat16"].get_weights())
    for training in (False, True):
        np.testing.assert_array_equal(layers["mixed_bfloat16"](inputs, training=training).numpy(),
                                      keras_dense(inputs).numpy())
    np.testing.assert_allclose(_bias_gradient(layers["float32"], inputs, upstream, training=False), reference)


def test_the_layer_round_trips_through_its_config():
    layer = Dense(7, activation="tanh", name="W_s")
    restored = keras.layers.deserialize(keras.layers.serialize(layer))
    assert type(restored) is Dense and restored.get_config() == layer.get_config()
