import numpy as np
import pytest

from helpers.layer_test_case import run_layer_test
from rnnsearch_tf.layers import AlignmentModel


def inputs(seed=0):
    rng = np.random.default_rng(seed)
    return {
        "previous_state": rng.normal(size=(2, 3)).astype("float32"),
        "annotations": rng.normal(size=(2, 4, 6)).astype("float32"),
        "source_mask": np.array([[True, True, True, True], [True, True, False, False]]),
    }


def test_layer_basics():
    run_layer_test(
        AlignmentModel,
        init_kwargs={"alignment_dim": 5},
        input_data=inputs(),
        expected_output_shape=((2, 6), (2, 4)),
        expected_num_trainable_weights=4,
    )


def random_alignment_model(rng, data):
    """An AlignmentModel built on `data`, every weight N(0, 0.5²) (v_a = 0 would make α uniform)."""
    alignment = AlignmentModel(alignment_dim=5)
    alignment(**data)
    for variable in alignment.weights:
        variable.assign(rng.normal(0, 0.5, size=variable.shape).astype("float32"))
    return alignment


def test_alignment_matches_numpy_and_masks_padding():
    data = inputs(1)
    alignment = random_alignment_model(np.random.default_rng(4), data)
    context, weights = alignment(**data)
    keys = alignment.precompute_keys(data["annotations"])
    cached_context, cached_weights = alignment(**data, keys=keys)
    np.testing.assert_allclose(cached_weights.numpy(), weights.numpy(), atol=1e-7)
    np.testing.assert_allclose(cached_context.numpy(), context.numpy(), atol=1e-7)
    p = alignment.paper_weights()
    for index, length in enumerate([4, 2]):
        s, h = data["previous_state"][index], data["annotations"][index, :length]
        e = np.array([p["v_a"] @ np.tanh(s @ p["W_a"] + p["b_W_a"] + h_j @ p["U_a"]) for h_j in h])
        alpha = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
        np.testing.assert_allclose(weights.numpy()[index, :length], alpha, atol=1e-6)
        np.testing.assert_array_equal(weights.numpy()[index, length:], 0.0)
        np.testing.assert_allclose(context.numpy()[index], alpha @ h, atol=1e-5)


def test_queries_of_a_sentence_share_its_annotations_and_values_are_averaged_instead():
    rng = np.random.default_rng(5)
    data = inputs(3)
    alignment = random_alignment_model(rng, data)
    states = rng.normal(size=(2, 3, 3)).astype("float32")  # 3 queries per sentence (a search's hypotheses)
    tiled = {name: np.repeat(data[name], 3, axis=0) for name in ("annotations", "source_mask")}
    projection = rng.normal(size=(6, 7)).astype("float32")  # a linear map of h, like C
    context, weights = alignment(states, data["annotations"], data["source_mask"],
                                 values=data["annotations"] @ projection)
    assert context.shape == (2, 3, 7) and weights.shape == (2, 3, 4)
    expected_context, expected_weights = alignment(states.reshape(6, 3), **tiled)  # one query per row
    np.testing.assert_allclose(weights.numpy().reshape(6, 4), expected_weights.numpy(), atol=1e-6)
    np.testing.assert_allclose(context.numpy().reshape(6, 7), expected_context.numpy() @ projection, atol=1e-5)


def test_initial_alignment_is_uniform_over_real_words():
    alignment = AlignmentModel(alignment_dim=5)
    data = inputs(2)
    _, weights = alignment(**data)  # v_a = 0 at initialisation (Appendix B.1)
    np.testing.assert_allclose(weights.numpy(), [[0.25] * 4, [0.5, 0.5, 0.0, 0.0]], atol=1e-7)


def test_misuse():
    alignment = AlignmentModel(alignment_dim=5)
    data = inputs()
    alignment(**data)
    data["annotations"] = data["annotations"][:, :, :5]
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 6"):
        alignment(**data)
