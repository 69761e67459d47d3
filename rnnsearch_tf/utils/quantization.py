"""Weight-only int8: a weight matrix stored as int8 with one float32 scale per channel, widened for arithmetic.

Symmetric and per channel: each channel (a column of a `[in, out]` kernel: an output unit; a row of an
embedding table: a word) keeps `scale = max|w| / 127` and `q = round(w / scale)` in [-127, 127]; it is read back as
`q * scale`, at most `scale / 2` from `w`. A channel of zeros keeps scale 0. Products then run in the float type
the model decodes in: TensorFlow's int8 products run slower than float32 on the CPUs measured
(docs/performance.md, "Decoding past float32"), so int8 buys storage, not arithmetic.
"""

import numpy as np
import tensorflow as tf

QUANTIZATIONS = ("none", "int8")
INT8_LEVELS = 127  # the largest |q|: -128 is left out, so that the range is symmetric


def check_quantization(quantize):
    """`quantize` if it is one of `QUANTIZATIONS`, else ValueError naming them."""
    if quantize not in QUANTIZATIONS:
        raise ValueError(f"quantize must be one of {QUANTIZATIONS}, got {quantize!r}")
    return quantize


def quantize_int8(weights, channel_axis):
    """Per-channel symmetric int8 of a float array.

    Args:
        weights: float array of any rank.
        channel_axis: the axis of the channels, each scaled on its own (1 for the output columns of a `[in, out]`
            kernel, 0 for the rows of a `[vocab, dim]` embedding table).

    Returns:
        `(values, scales)`: int8 array of `weights`' shape, and float32 scales of the same rank with size 1 on every
        axis but `channel_axis` (`[1, out]`, `[vocab, 1]`), so that `values * scales` broadcasts back.
    """
    weights = np.asarray(weights, np.float32)
    others = tuple(axis for axis in range(weights.ndim) if axis != channel_axis % weights.ndim)
    scales = np.abs(weights).max(axis=others, keepdims=True) / INT8_LEVELS  # [1, out] or [vocab, 1]
    steps = np.divide(weights, scales, out=np.zeros_like(weights), where=scales > 0)
    values = np.clip(np.round(steps), -INT8_LEVELS, INT8_LEVELS).astype(np.int8)
    return values, scales.astype(np.float32)


def dequantize(values, scales, dtype=tf.float32):
    """`values * scales` (`quantize_int8`'s two arrays, or variables holding them) in `dtype`: computed in float32,
    where `q * scale` is the one rounding of an exact product, then cast (bf16 rounds once more)."""
    return tf.cast(tf.cast(values, tf.float32) * scales, dtype)
