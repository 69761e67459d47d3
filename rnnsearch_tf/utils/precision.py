"""Float32 or bf16 mixed precision: the Keras dtype policy a `ModelConfig.precision` stands for."""

import functools
import pathlib

import tensorflow as tf

PRECISIONS = ("float32", "mixed_bfloat16", "auto")


@functools.lru_cache(maxsize=None)
def has_bfloat16_hardware():
    """Whether this machine computes bf16 natively: a GPU, or a CPU with AVX512_BF16 or AMX."""
    if tf.config.list_physical_devices("GPU"):
        return True
    cpuinfo = pathlib.Path("/proc/cpuinfo")
    flags = cpuinfo.read_text().split() if cpuinfo.exists() else []
    return "avx512_bf16" in flags or "amx_bf16" in flags


def dtype_policy(precision):
    """"float32" -> "float32"; "mixed_bfloat16" -> itself (bf16 compute, float32 weights); "auto" -> the
    latter where `has_bfloat16_hardware()`, else float32."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if precision == "auto":
        return "mixed_bfloat16" if has_bfloat16_hardware() else "float32"
    return precision
