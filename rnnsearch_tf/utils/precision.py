"""Float32 or bf16 mixed precision: the Keras dtype policy a `ModelConfig.precision` stands for."""

import functools
import pathlib
import time

import tensorflow as tf

PRECISIONS = ("float32", "mixed_bfloat16", "auto")
# The Keras dtype policy a model decodes with, by the one it was built with where they differ. Under
# mixed_bfloat16 every product reads its float32 weights rounded to bf16 (a cast before each use, so at every
# step of a search); weights stored in bf16 ("bfloat16": bf16 weights and arithmetic) give the same numbers
# without the casts (`inference.model_loader.decoding_model`). Training keeps its float32 weights.
DECODING_POLICIES = {"mixed_bfloat16": "bfloat16"}
# "auto" takes bf16 on a CPU only where a bf16 matmul is at least this much faster than float32.
BFLOAT16_MINIMUM_SPEEDUP = 1.2


@functools.lru_cache(maxsize=None)
def has_bfloat16_hardware():
    """Whether this machine computes bf16 natively: a GPU, or a CPU with AVX512_BF16 or AMX."""
    if tf.config.list_physical_devices("GPU"):
        return True
    cpuinfo = pathlib.Path("/proc/cpuinfo")
    flags = cpuinfo.read_text().split() if cpuinfo.exists() else []
    return "avx512_bf16" in flags or "amx_bf16" in flags


def _matmul_seconds(dtype, size=768, repeats=8):
    """The best of `repeats` `[size, size] x [size, size]` matmuls in `dtype`, on the default device."""
    matrix = tf.cast(tf.random.stateless_normal([size, size], seed=[0, 0]), dtype)
    matmul = tf.function(lambda a: tf.reduce_sum(tf.matmul(a, a)[0, :1]))
    matmul(matrix).numpy()  # traces, warms oneDNN up
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        matmul(matrix).numpy()
        best = min(best, time.perf_counter() - started)
    return best


@functools.lru_cache(maxsize=None)
def bfloat16_speedup():
    """How many times faster a bf16 matmul runs than float32 here: timed on a CPU with bf16
    instructions (a short test: some such CPUs run TensorFlow's bf16 kernels slower than float32),
    assumed 2 on a GPU, 0 without bf16 hardware."""
    if not has_bfloat16_hardware():
        return 0.0
    if tf.config.list_physical_devices("GPU"):
        return 2.0
    return _matmul_seconds(tf.float32) / _matmul_seconds(tf.bfloat16)


def dtype_policy(precision):
    """"float32" -> "float32"; "mixed_bfloat16" -> itself (bf16 compute, float32 weights); "auto" -> the
    latter where `bfloat16_speedup()` reaches `BFLOAT16_MINIMUM_SPEEDUP`, else float32."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if precision == "auto":
        return "mixed_bfloat16" if bfloat16_speedup() >= BFLOAT16_MINIMUM_SPEEDUP else "float32"
    return precision
