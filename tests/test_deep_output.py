import numpy as np
import pytest

from helpers.layer_test_case import run_layer_test
from rnnsearch_tf.layers import DeepOutput


def inputs(seed=0):
    rng = np.random.default_rng(seed)
    return {
        "state": rng.normal(size=(2, 3, 4)).astype("float32"),
        "previous_embedding": rng.normal(size=(2, 3, 2)).astype("float32"),
        "context": rng.normal(size=(2, 3, 8)).astype("float32"),
    }


def test_layer_basics():
    run_layer_test(
        DeepOutput,
        init_kwargs={"maxout_dim": 3, "vocab_size": 7},
        input_data=inputs(),
        expected_output_shape=(2, 3, 7),
        expected_num_trainable_weights=6,
    )


def test_logits_match_numpy_maxout_over_adjacent_pairs():
    rng = np.random.default_rng(5)
    readout = DeepOutput(maxout_dim=3, vocab_size=7)
    data = inputs(1)
    readout(**data)
    for variable in readout.weights:
        variable.assign(rng.normal(0, 0.5, size=variable.shape).astype("float32"))
    logits = readout(**data).numpy()
    p = readout.paper_weights()
    t_tilde = data["state"] @ p["U_o"] + p["b_U_o"] + data["previous_embedding"] @ p["V_o"] + data["context"] @ p["C_o"]
    t = np.maximum(t_tilde[..., 0::2], t_tilde[..., 1::2])
    np.testing.assert_allclose(logits, t @ p["W_o"] + p["b_W_o"], atol=1e-5)
    projected = readout(data["state"], data["previous_embedding"], projected_context=data["context"] @ p["C_o"])
    np.testing.assert_allclose(projected.numpy(), logits, atol=1e-5)
    both_projected = readout(
        data["state"], projected_embedding=data["previous_embedding"] @ p["V_o"],
        projected_context=data["context"] @ p["C_o"],
    )
    np.testing.assert_allclose(both_projected.numpy(), logits, atol=1e-5)


def test_output_columns_give_those_words_logits():
    readout = DeepOutput(maxout_dim=3, vocab_size=7)
    rng = np.random.default_rng(2)
    data = {name: value[:, 0] for name, value in inputs(3).items()}  # one decoding step: [batch, ...]
    readout(**data)
    for variable in readout.weights:
        variable.assign(rng.normal(0, 0.5, size=variable.shape).astype("float32"))
    ids = np.array([0, 2, 3, 6], np.int32)
    logits = readout(**data).numpy()  # [2, 7]
    restricted = readout(**data, output_columns=readout.output_columns(ids)).numpy()  # [2, 4]
    np.testing.assert_allclose(restricted, logits[:, ids], atol=1e-6)
    everything = readout(**data, output_columns=readout.output_columns(np.arange(7, dtype=np.int32))).numpy()
    np.testing.assert_array_equal(everything, logits)


def test_misuse():
    readout = DeepOutput(maxout_dim=3, vocab_size=7)
    data = inputs()
    readout(**data)
    data["context"] = data["context"][..., :5]
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 8"):
        readout(**data)
    with pytest.raises(ValueError, match="needs the context c_i or its projection"):
        readout(data["state"], data["previous_embedding"])
    with pytest.raises(ValueError, match="needs E y_{i-1} or its projection"):
        readout(data["state"], context=data["context"])
