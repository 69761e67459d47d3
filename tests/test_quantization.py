"""rnnsearch_tf/utils/quantization.py: per-channel symmetric int8 against a literal NumPy transcription, one
channel at a time."""

import numpy as np
import pytest
import tensorflow as tf

from rnnsearch_tf.utils.quantization import QUANTIZATIONS, check_quantization, dequantize, quantize_int8


def reference_channel(channel):
    """One channel as the definition reads: scale = max|w| / 127, q = round(w / scale) (0 where the scale is 0)."""
    scale = np.float32(np.max(np.abs(channel)) / 127)
    if scale == 0:
        return np.zeros(channel.shape, np.int8), scale
    return np.array([int(np.round(value / scale)) for value in channel], np.int8), scale


def weights(shape, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(0.0, 0.3, shape) * rng.uniform(0.01, 3.0, shape[-1:])).astype(np.float32)


def test_a_kernel_is_scaled_per_output_column_as_the_reference():
    kernel = weights((7, 5))
    kernel[:, 3] = 0.0  # a unit whose weights are all zero
    values, scales = quantize_int8(kernel, channel_axis=1)
    assert values.dtype == np.int8 and scales.dtype == np.float32 and scales.shape == (1, 5)
    for column in range(5):
        expected_values, expected_scale = reference_channel(kernel[:, column])
        np.testing.assert_array_equal(values[:, column], expected_values)
        np.testing.assert_allclose(scales[0, column], expected_scale, rtol=1e-7)
    assert np.abs(values).max() == 127 and scales[0, 3] == 0 and not values[:, 3].any()


def test_an_embedding_table_is_scaled_per_row_as_the_reference():
    table = weights((6, 4), seed=1).T.copy()  # rows of very different sizes
    values, scales = quantize_int8(table, channel_axis=0)
    assert scales.shape == (4, 1)
    for row in range(4):
        expected_values, expected_scale = reference_channel(table[row])
        np.testing.assert_array_equal(values[row], expected_values)
        np.testing.assert_allclose(scales[row, 0], expected_scale, rtol=1e-7)


def test_dequantized_weights_are_within_half_a_step_of_the_originals():
    kernel = weights((50, 30), seed=2)
    values, scales = quantize_int8(kernel, channel_axis=1)
    widened = dequantize(values, scales).numpy()
    np.testing.assert_array_equal(widened, values.astype(np.float32) * scales)  # q * scale, one float32 product
    assert np.all(np.abs(widened - kernel) <= scales / 2 + 1e-7)
    relative = np.abs(widened - kernel).max(axis=0) / np.abs(kernel).max(axis=0)
    assert relative.max() <= 0.5 / 127 + 1e-6


def test_bf16_widening_rounds_the_float32_product_once():
    values, scales = quantize_int8(weights((9, 8), seed=3), channel_axis=1)
    widened = dequantize(tf.constant(values), tf.constant(scales), tf.bfloat16)
    assert widened.dtype == tf.bfloat16
    np.testing.assert_array_equal(widened.numpy(), tf.cast(values.astype(np.float32) * scales, tf.bfloat16).numpy())


def test_an_unknown_quantization_is_named():
    assert QUANTIZATIONS == ("none", "int8") and check_quantization("int8") == "int8"
    with pytest.raises(ValueError, match=r"quantize must be one of \('none', 'int8'\), got 'int4'"):
        check_quantization("int4")
