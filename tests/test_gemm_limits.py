"""bench.gemm_limits: the decoding step's matmuls and FLOPs, the int8 products against NumPy, the report's fields."""

import math

import numpy as np
import pytest
import tensorflow as tf
from absl import app
from absl import flags
from absl.testing import flagsaver

from bench import gemm_limits, provenance
from bench.model_sizes import forward_matmuls
from rnnsearch_tf.models.model_config import ModelConfig
from rnnsearch_tf.models.rnn_search import RNNSearch

# K_y = 10, m = 2, n = 3, l = 2, n' = 4, source sentences of 5 tokens.
TINY = dict(vocab_size=10, embedding_dim=2, hidden_dim=3, maxout_dim=2, alignment_dim=4, source_length=5)
# Matmuls computed once per sentence (the encoder, s_0, U_a h, C h, C_o h), not at every step.
PER_SENTENCE = {"encoder W_z|W_r|W x", "encoder U_z|U_r h", "encoder U [r h]", "W_s", "U_a h", "C_z|C_r|C h",
                "C_o h"}


def test_a_tiny_step_has_the_flops_of_a_hand_count():
    rows = 2 * 3  # 2 sentences x beam 3
    by_hand = 2 * rows * (
        2 * 9  # W_z|W_r|W E y: [6, 2] x [2, 3n]
        + 2 * 4  # V_o E y: [6, 2] x [2, 2l]
        + 3 * 4  # W_a s: [6, 3] x [3, n']
        + 5 * 4 * 1  # v_a tanh(.): [6 * 5, 4] x [4, 1]
        + 5 * 9  # sum_j a_ij C h_j: [3, 5] x [5, 3n] per sentence
        + 3 * 6  # U_z|U_r s: [6, 3] x [3, 2n]
        + 3 * 3  # U [r s]: [6, 3] x [3, n]
        + 5 * 4  # sum_j a_ij C_o h_j: [3, 5] x [5, 2l] per sentence
        + 3 * 4  # U_o s: [6, 3] x [3, 2l]
        + 2 * 10  # W_o t: [6, 2] x [2, K_y]
    )
    assert by_hand == 2184
    assert gemm_limits.matmul_flops(gemm_limits.decode_step_matmuls(TINY, sentences=2, beam_size=3)) == by_hand


def test_a_beam_1_step_is_one_target_position_of_teacher_forcing():
    settings = dict(gemm_limits.STEP_MODELS["peer"], batch_size=80, target_length=1)
    teacher_forcing = {name: rest for name, *rest in forward_matmuls(settings) if name not in PER_SENTENCE}
    step = {name: rest for name, *rest in gemm_limits.decode_step_matmuls(settings, sentences=80, beam_size=1)}
    assert step == teacher_forcing


def _graph_matmul_flops(graph):
    """2 · (output elements) · (contracted size) summed over the graph's matmul ops; their shapes must be static."""
    total = 0
    for operation in graph.get_operations():
        if operation.type not in ("MatMul", "BatchMatMulV2", "BatchMatMulV3", "Einsum"):
            continue
        assert operation.type != "Einsum", "an einsum's contraction needs its equation"
        left, output = operation.inputs[0].shape, operation.outputs[0].shape
        assert left.is_fully_defined() and output.is_fully_defined(), operation.name
        attributes = operation.node_def.attr
        transposed = any(operation.get_attr(name) for name in ("transpose_a", "adj_x") if name in attributes)
        total += 2 * output.num_elements() * (left[-2] if transposed else left[-1])
    return total


def test_the_models_step_runs_exactly_the_counted_matmuls():
    config = ModelConfig(source_vocab_size=12, target_vocab_size=TINY["vocab_size"], embedding_dim=2, hidden_dim=3,
                         maxout_dim=2, alignment_dim=4)
    model = RNNSearch(config)
    state = model.encode(tf.constant([[5, 6, 7, 8, 2], [9, 10, 11, 2, 0]]))  # 2 sentences of 5 ids
    beam = 3
    step = tf.function(lambda ids, s: model.step(ids, dict(state, s=s)), autograph=False).get_concrete_function(
        tf.TensorSpec([2 * beam], tf.int32), tf.TensorSpec([2 * beam, 3], tf.float32)
    )
    counted = gemm_limits.matmul_flops(gemm_limits.decode_step_matmuls(TINY, sentences=2, beam_size=beam))
    assert _graph_matmul_flops(step.graph) == counted


def _int8(shape, seed):
    return np.random.default_rng(seed).integers(-127, 128, size=shape).astype(np.int8)


@pytest.mark.parametrize("route", ["int8 BatchMatMulV3", "int8 QuantizedMatMulWithBiasAndDequantize"])
def test_an_int8_product_equals_numpys_int32_product(route):
    if "Quantized" in route and not gemm_limits.onednn_status()["enabled"]:
        pytest.skip("QuantizedMatMulWithBiasAndDequantize has no kernel without oneDNN")
    activation, weight = _int8((7, 96), 0), _int8((96, 33), 1)
    activation[0, :] = 127  # the largest sums: 127 * 127 * 96
    weight[:, 0] = 127
    product = tf.function(gemm_limits.int8_products(weight)[route], autograph=False)(tf.constant(activation))
    expected = activation.astype(np.int32) @ weight.astype(np.int32)  # [7, 33]
    assert product.shape == expected.shape
    np.testing.assert_array_equal(product.numpy().astype(np.int64), expected)


def test_every_route_computes_the_float32_product_within_its_rounding():
    random = np.random.default_rng(2)
    activation = random.normal(size=(8, 64)).astype(np.float32)
    weight = random.normal(0.0, 0.05, size=(64, 40)).astype(np.float32)
    expected = activation @ weight
    available = gemm_limits.routes(weight)
    if not gemm_limits.onednn_status()["enabled"]:
        del available["int8 QuantizedMatMulWithBiasAndDequantize"]
    for name, route in available.items():
        result = tf.function(route, autograph=False)(tf.constant(activation)).numpy()
        tolerance = 1e-5 if name == "float32" else 2e-2  # bf16 keeps 8 bits, int8 7 bits and a sign
        assert np.abs(result - expected).max() <= tolerance * np.abs(expected).max(), name


def test_the_report_has_its_fields():
    record = gemm_limits.report(["3x8x16"], rounds=1, seconds_per_sample=0.001, sentences=2, beam_size=5)
    assert record["tensorflow"] == tf.__version__
    assert set(record["gemm_cpu_flags"]) == set(gemm_limits.GEMM_FLAGS)
    assert set(record["onednn"]) == {"TF_ENABLE_ONEDNN_OPTS", "enabled"}
    (shape,) = record["shapes"]
    assert shape["shape"] == [3, 8, 16]
    assert {"float32", "bfloat16", "int8 BatchMatMulV3"} <= set(shape["gflop_per_s"])
    assert set(shape["gflop_per_s"]) | set(shape["unavailable"]) == set(gemm_limits.routes(np.ones((8, 16), "f")))
    assert shape["speedup_over_float32"]["float32"] == 1.0
    assert shape["int8_best_route"].startswith("int8 ")
    assert set(record["decoding_steps"]) == {"quickstart", "peer"}
    quickstart = record["decoding_steps"]["quickstart"]
    assert quickstart["flops"] == sum(2 * math.prod(row["shape"]) * row["count"] for row in quickstart["matmuls"])
    assert quickstart["matmuls"][-1] == {"matmul": "W_o t", "shape": [10, 128, 10004], "count": 1}
    assert len(record["provenance"]["commit"]) == 40


def test_every_gemm_flag_is_one_provenance_reads():
    # `gemm_flags` reads `provenance.cpu()`, which keeps only CPU_FLAGS: any other flag would read False.
    assert set(gemm_limits.GEMM_FLAGS.values()) <= set(provenance.CPU_FLAGS)


def test_a_shape_that_is_not_m_by_k_by_n_is_a_usage_error():
    flags.FLAGS.mark_as_parsed()
    try:
        with flagsaver.flagsaver(shapes=["400x512"]):
            with pytest.raises(app.UsageError, match="not MxKxN"):
                gemm_limits.main(["gemm_limits"])
    finally:
        flags.FLAGS.unparse_flags()
