import numpy as np
import pytest
import tensorflow as tf

from helpers import numpy_reference
from helpers.layer_test_case import run_layer_test
from rnnsearch_tf.layers import GatedRecurrentUnit


def test_layer_basics():
    run_layer_test(
        GatedRecurrentUnit,
        init_kwargs={"units": 4, "initializer": "xavier"},
        input_data={"inputs": np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")},
        expected_output_shape=(2, 5, 4),
        expected_num_trainable_weights=4,
    )


def test_states_match_numpy_transcription():
    rng = np.random.default_rng(1)
    unit = GatedRecurrentUnit(units=4)
    inputs = rng.normal(size=(2, 6, 3)).astype("float32")
    unit(inputs)
    for variable in unit.weights:
        variable.assign(rng.normal(0, 0.5, size=variable.shape).astype("float32"))
    states = unit(inputs).numpy()
    p = numpy_reference.paper_matrices(unit.paper_weights())
    for sentence in range(2):
        h = np.zeros(4)
        for position in range(6):
            h = numpy_reference.gated_unit(p, "", inputs[sentence, position], h)
            np.testing.assert_allclose(states[sentence, position], h, atol=1e-5)


@pytest.mark.parametrize("traced", [False, True])
def test_gradients_equal_autodiff_of_the_step_by_step_recurrence(traced):
    """The layer's recurrent weight gradients are computed after its loop (a custom gradient): they
    equal TensorFlow's own gradient of `transition` applied position by position."""
    rng = np.random.default_rng(2)
    unit = GatedRecurrentUnit(units=5)
    inputs = tf.constant(rng.normal(size=(3, 7, 4)), tf.float32)
    unit(inputs)
    for variable in unit.weights:
        variable.assign(rng.normal(0, 0.5, size=variable.shape).astype("float32"))
    loss_weights = tf.constant(rng.normal(size=(3, 7, 5)), tf.float32)

    def step_by_step(x):
        state, states = tf.zeros([3, 5]), []
        projected = unit.project_inputs(x)  # [batch, T, 3n]
        for position in range(7):
            state = unit.transition(projected[:, position], state)
            states.append(state)
        return tf.stack(states, axis=1)  # [batch, T, n]

    def gradients(layer):
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            loss = tf.reduce_sum(layer(inputs) * loss_weights)
        return tape.gradient(loss, [inputs, *unit.trainable_weights])

    layer_gradients = tf.function(lambda: gradients(unit))() if traced else gradients(unit)
    for actual, expected, name in zip(layer_gradients, gradients(step_by_step), ["inputs", *unit.trainable_weights]):
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5, err_msg=str(name))


def test_an_update_builds_the_loops_gradient_once():
    """Traced under an update's tape, the loop is built as it is and its gradient once, by the custom
    gradient: with the update's tape watching the loop's inputs too, TensorFlow would wrap the loop in
    a `cflow_gradient_wrapper` function and build its gradient while tracing it, then again."""
    unit = GatedRecurrentUnit(units=4)
    inputs = tf.random.normal([2, 3, 5])
    unit(inputs)

    @tf.function
    def update():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(unit(inputs))
        return tape.gradient(loss, unit.trainable_weights)

    library = update.get_concrete_function().graph.as_graph_def().library
    functions = [function.signature.name for function in library.function]
    assert functions and not [name for name in functions if "cflow_gradient_wrapper" in name], functions


def test_recurrent_blocks_are_each_orthogonal():
    unit = GatedRecurrentUnit(units=16)
    unit(tf.zeros((1, 2, 3)))
    weights = unit.paper_weights()
    for name in ("U", "U_z", "U_r"):
        np.testing.assert_allclose(weights[name] @ weights[name].T, np.eye(16), atol=1e-5, err_msg=name)
    assert not np.allclose(weights["U_z"], weights["U_r"])


def test_misuse():
    unit = GatedRecurrentUnit(units=4)
    with pytest.raises(ValueError, match=r"expects inputs \(batch_size, T, input_dim\)"):
        unit(tf.zeros((2, 3)))
    with pytest.raises(ValueError, match="initializer must be one of"):
        GatedRecurrentUnit(units=4, initializer="glorot")(tf.zeros((1, 2, 3)))
