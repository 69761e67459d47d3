"""The shared layer-test helper (after keras_hub's `TestCase.run_layer_test`).

Every Keras layer of the project runs through `run_layer_test`: it builds the layer, checks output
shapes and weight counts, round-trips the config, and takes one optimizer step through the layer.
"""

import keras
import numpy as np
import tensorflow as tf


def run_layer_test(
    layer_cls,
    init_kwargs,
    input_data,
    expected_output_shape,
    expected_num_trainable_weights,
    expected_num_non_trainable_weights=0,
    call_method=None,
):
    """Checks one layer class.

    Args:
        layer_cls: the `keras.layers.Layer` subclass.
        init_kwargs: dict of constructor arguments.
        input_data: dict of keyword arguments for the call.
        expected_output_shape: shape tuple, or a nested structure of them matching the outputs.
        expected_num_trainable_weights: number of trainable variables after the call.
        expected_num_non_trainable_weights: number of non-trainable variables after the call.
        call_method: name of the method to test instead of `__call__` (e.g. "step"); the layer is
            built by calling it.
    """

    def run(layer):
        if call_method is None:
            return layer(**input_data)
        return getattr(layer, call_method)(**input_data)

    layer = layer_cls(**init_kwargs)
    outputs = run(layer)

    # Shapes.
    actual_shapes = keras.tree.map_structure(lambda t: tuple(t.shape), outputs)
    assert actual_shapes == expected_output_shape, (actual_shapes, expected_output_shape)

    # Weight counts.
    assert len(layer.trainable_weights) == expected_num_trainable_weights, [
        w.path for w in layer.trainable_weights
    ]
    assert len(layer.non_trainable_weights) == expected_num_non_trainable_weights

    # Config round trip: every constructor argument is stored under its own name.
    config = layer.get_config()
    for name, value in init_kwargs.items():
        assert name in config, f"get_config() lacks {name!r}"
        assert config[name] == value, (name, config[name], value)
    revived = layer_cls.from_config(config)
    assert revived.get_config() == config
    revived_outputs = run(revived)
    revived_shapes = keras.tree.map_structure(lambda t: tuple(t.shape), revived_outputs)
    assert revived_shapes == expected_output_shape

    # One training step: every trainable weight is reached by the gradient and the loss is finite
    # (empty outputs, such as the 0-wide alignment of a decoder without attention, have no mean).
    optimizer = keras.optimizers.SGD(learning_rate=0.1)
    before = [np.array(w) for w in layer.trainable_weights]
    with tf.GradientTape() as tape:
        outputs = run(layer)
        loss = tf.add_n(
            [tf.reduce_mean(tf.square(tf.cast(t, "float32"))) for t in keras.tree.flatten(outputs)
             if t.dtype.is_floating and np.prod(t.shape) > 0]
        )
    gradients = tape.gradient(loss, layer.trainable_weights)
    assert np.isfinite(float(loss))
    missing = [w.path for w, g in zip(layer.trainable_weights, gradients) if g is None]
    assert not missing, f"no gradient reaches {missing}"
    optimizer.apply_gradients(zip(gradients, layer.trainable_weights))
    changed = [not np.array_equal(b, np.array(w)) for b, w in zip(before, layer.trainable_weights)]
    assert any(changed), "one optimizer step changed no weight"
    return layer
