"""The three initialisation schemes, weight by weight, on a whole RNNsearch."""

import keras
import numpy as np
import pytest
from keras.initializers import Orthogonal

from helpers.model_test_utils import small_config
from rnnsearch_tf import RNNSearch
from rnnsearch_tf.layers.initializers import Blockwise, initializer, restored_weights

SIZES = dict(source_vocab_size=300, target_vocab_size=200, embedding_dim=40, hidden_dim=50, maxout_dim=30,
             alignment_dim=60)


def weights(scheme):
    return RNNSearch(small_config(initializer=scheme, **SIZES)).paper_weights()


def test_paper_scheme_is_appendix_b1():
    w = weights("paper")
    for name in ("U", "U_z", "U_r", "U_fwd", "U_z_bwd"):
        np.testing.assert_allclose(w[name] @ w[name].T, np.eye(50), atol=1e-5, err_msg=name)
    for name in ("E", "E_src", "W_z", "W_fwd", "C", "C_r", "W_s", "U_o", "V_o", "C_o", "W_o"):
        assert abs(w[name].std() - 0.01) < 0.002, name
    for name in ("W_a", "U_a"):
        assert abs(w[name].std() - 0.001) < 0.0002, name
    for name in ("v_a", "b_W_a", "b_W_z", "b_U_o", "b_W_o", "b_W_s"):
        np.testing.assert_array_equal(w[name], 0.0, err_msg=name)


def test_uniform_scheme_fills_every_weight_and_bias():
    for name, value in weights("uniform").items():
        assert np.abs(value).max() <= 0.1, name
        assert abs(value.std() - 0.1 / np.sqrt(3)) < 0.02, name  # U(-a, a) has std a / sqrt(3)


def test_xavier_scheme_scales_each_gate_block_by_its_own_fan_out():
    w = weights("xavier")
    n = 50
    expected_limits = {
        "W_z": np.sqrt(6 / (40 + n)),  # [m, 3n] kernel, one [m, n] block per gate
        "U_r": np.sqrt(6 / (n + n)),
        "C": np.sqrt(6 / (2 * n + n)),
        "W_a": np.sqrt(6 / (n + 60)),
        "W_o": np.sqrt(6 / (30 + 200)),
        "v_a": np.sqrt(6 / (60 + 1)),  # v_a as a [n', 1] matrix
    }
    for name, limit in expected_limits.items():
        assert np.abs(w[name]).max() <= limit + 1e-6, name
        assert np.abs(w[name]).max() > 0.9 * limit, name
    for name in ("E", "E_src"):
        assert abs(w[name].std() - 0.01) < 0.002, name
    for name in ("b_W_z", "b_W_a", "b_W_o"):
        np.testing.assert_array_equal(w[name], 0.0, err_msg=name)


def test_blockwise_draws_every_block_independently():
    fused = np.asarray(Blockwise("orthogonal", blocks=3)((8, 24)))
    blocks = np.split(fused, 3, axis=1)
    for block in blocks:
        np.testing.assert_allclose(block @ block.T, np.eye(8), atol=1e-5)
    assert not np.allclose(blocks[0], blocks[1])
    with pytest.raises(ValueError, match=r"Blockwise needs \[rows, 3 \* n\]"):
        Blockwise("orthogonal", blocks=3)((8, 20))


def test_blockwise_draws_a_bf16_matrix_as_the_float32_one_rounded():
    # A model built to decode in bf16 draws its orthogonal blocks too, and QR has no bf16 kernel.
    bf16, float32 = (Blockwise(Orthogonal(seed=5), blocks=2)((8, 16), dtype) for dtype in ("bfloat16", "float32"))
    assert bf16.dtype == "bfloat16"
    np.testing.assert_array_equal(np.asarray(bf16), np.asarray(keras.ops.cast(float32, "bfloat16")))


@pytest.mark.parametrize("scheme", ["paper", "uniform", "xavier"])
def test_a_model_built_to_be_restored_starts_from_zeros_then_schemes_apply_again(scheme):
    with restored_weights():
        built = weights(scheme)
    assert all(not np.any(np.asarray(value)) for value in built.values())
    assert sum(bool(np.any(np.asarray(value))) for value in weights(scheme).values()) > len(built) // 2


def test_misuse_names_the_choices():
    with pytest.raises(ValueError, match="initializer must be one of"):
        initializer("normal", "dense")
    with pytest.raises(ValueError, match="role must be one of"):
        initializer("paper", "gates")
