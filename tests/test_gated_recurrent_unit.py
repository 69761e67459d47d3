import numpy as np
import pytest
import tensorflow as tf

import numpy_reference
from layer_test_case import run_layer_test
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
