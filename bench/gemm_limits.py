"""This machine's matmul speed at the decoder step's shapes in float32, bfloat16 and int8, and the FLOPs of one
beam-search step: what bf16 or int8 decoding (issue 63) can gain here at most. Prints JSON.

    python -m bench.gemm_limits
    python -m bench.gemm_limits --shapes=400x512x10004,5x512x10004 --timing_rounds=7

A shape `MxKxN` is `[M, K] x [K, N]`: M = 400 rows is 80 sentences x beam 5, M = 5 one sentence. Every route
takes a float32 activation `[M, K]` and returns float32 `[M, N]`, so it pays for its own conversions:
- `float32`: `tf.matmul`.
- `bfloat16`: the activation cast to bf16, `tf.matmul` with a bf16 copy of the weight made once, the product
  cast back (oneDNN runs it on AMX where the CPU has it).
- `int8 ...`: the activation quantized per row (scale = row absmax / 127, rounded), multiplied by the weight
  quantized per column once, the integer product dequantized by both scales. `int8 BatchMatMulV3` is
  `tf.matmul(int8, int8, output_type=tf.int32)`, the op Keras' `Dense.quantize("int8")` emits;
  `int8 QuantizedMatMulWithBiasAndDequantize` is oneDNN's u8 x s8 kernel (the activation shifted by 128 into
  quint8, the shift's column sums folded into the float bias), which has no kernel without oneDNN
  (`TF_ENABLE_ONEDNN_OPTS=0`) and none under XLA.
The routes of a shape are timed in interleaved rounds, one sample of each per round, each sample a graph loop
of back-to-back products; the speedups are medians of each round's ratio, so load slows all routes alike.
"""

import os
import statistics

import keras
import numpy as np
import tensorflow as tf
from absl import app
from absl import flags

from bench.matmul_timing import repeats_for, seconds_per_call, timed_loop
from bench.model_sizes import PRESETS, matmul_flops
from bench.provenance import cpu, provenance, run_report

# The CPU features that decide which GEMM kernels oneDNN can pick: /proc/cpuinfo's name of each.
GEMM_FLAGS = {"AVX2": "avx2", "AVX512-VNNI": "avx512_vnni", "AVX512-BF16": "avx512_bf16", "AMX-BF16": "amx_bf16",
              "AMX-INT8": "amx_int8"}
# configs/quickstart.flags has train_throughput's multi30k sizes; "peer" is bench.peer_comparison's model.
STEP_MODELS = {"quickstart": PRESETS["multi30k"], "peer": PRESETS["peer"]}
# W_o t, the GRU's input and recurrent projections, W_a s: the step's large products at 80 sentences x beam 5
# and at one sentence.
DEFAULT_SHAPES = [f"{rows}x{k}x{n}" for rows in (400, 5) for k, n in ((512, 10000), (768, 1536), (512, 512))]

_SHAPES = flags.DEFINE_list("shapes", DEFAULT_SHAPES, "Products to time, each MxKxN: [M, K] x [K, N].")
_TIMING_ROUNDS = flags.DEFINE_integer("timing_rounds", 5, "Interleaved rounds per shape.", lower_bound=1)
_SECONDS_PER_SAMPLE = flags.DEFINE_float("seconds_per_sample", 0.05, "Length of one timed loop of one route.")
_STEP_SENTENCES = flags.DEFINE_integer("step_sentences", 80, "Sentences of the counted decoding step.")
_STEP_BEAM_SIZE = flags.DEFINE_integer("step_beam_size", 5, "Hypotheses per sentence of the counted step.")


def decode_step_matmuls(settings, sentences, beam_size):
    """The matmuls of one `Decoder.step` of a beam search over `sentences`, `beam_size` hypotheses each: list
    of `(name, M, K, N, count)`, named as `bench.train_throughput.forward_matmuls` names them. U_a h, C h and
    C_o h are computed once per sentence before the search (`Decoder.initial_state`), so they are not here;
    "sum_j" rows are batched products, one `[beam, src_len] x [src_len, d]` per sentence."""
    m, n, l, n_a, vocab, source_length = (
        settings[k] for k in ("embedding_dim", "hidden_dim", "maxout_dim", "alignment_dim", "vocab_size",
                              "source_length")
    )
    rows = sentences * beam_size
    return [
        ("decoder W_z|W_r|W E y", rows, m, 3 * n, 1),
        ("V_o E y", rows, m, 2 * l, 1),
        ("W_a s", rows, n, n_a, 1),
        ("alignment v_a tanh(.)", rows * source_length, n_a, 1, 1),
        ("sum_j a_ij C h_j", rows, source_length, 3 * n, 1),
        ("decoder U_z|U_r s", rows, n, 2 * n, 1),
        ("decoder U [r s]", rows, n, n, 1),
        ("C_o c_i = sum_j a_ij C_o h_j", rows, source_length, 2 * l, 1),
        ("U_o s", rows, n, 2 * l, 1),
        ("W_o t", rows, l, vocab, 1),
    ]


def gemm_flags():
    """{"AVX2": bool, ...} for `GEMM_FLAGS`, from `provenance.cpu()` (all False where /proc/cpuinfo is absent)."""
    _, present = cpu()
    return {name: flag in present for name, flag in GEMM_FLAGS.items()}


def onednn_status():
    """TF_ENABLE_ONEDNN_OPTS as set, and whether this TensorFlow runs its oneDNN kernels (None: unknown)."""
    try:
        from tensorflow.python.util import _pywrap_util_port  # private: no public API tells
        enabled = bool(_pywrap_util_port.IsMklEnabled())
    except (ImportError, AttributeError):
        enabled = None
    return {"TF_ENABLE_ONEDNN_OPTS": os.environ.get("TF_ENABLE_ONEDNN_OPTS"), "enabled": enabled}


def quantize_columns(weight):
    """A float weight `[K, N]` -> (int8 `[K, N]`, float32 scales `[N]`): each column by its absmax / 127."""
    scales = np.maximum(np.abs(weight).max(axis=0), 1e-30) / 127.0
    return np.round(weight / scales).astype(np.int8), scales.astype(np.float32)


def quantize_rows(activation):
    """A float32 activation `[M, K]` -> (its rounded int8 values as float32 `[M, K]`, scales `[M, 1]`)."""
    scales = tf.maximum(tf.reduce_max(tf.abs(activation), axis=1, keepdims=True), 1e-30) / 127.0  # [M, 1]
    return tf.round(activation / scales), scales


def int8_products(weight_int8):
    """{route name: function of an int8 activation `[M, K]` -> its exact product with `weight_int8` `[K, N]`}.

    The BatchMatMulV3 route returns int32; the oneDNN route float32, exact while every sum stays below 2**24.
    The weight is captured as int8 and bitcast to qint8 inside: a quantized-dtype tensor a `tf.while_loop`
    captures is a loop variable, and NextIteration has no kernel for it.
    """
    weight = tf.constant(weight_int8)  # [K, N]
    # The shift a + 128 into quint8 adds 128 * (column sum of the weight): the bias takes it back. With these
    # ranges the op's dequantization scale is 1.
    shift = tf.constant(-128.0 * weight_int8.astype(np.int32).sum(axis=0), tf.float32)  # [N]

    def batch_matmul_v3(activation):
        return tf.matmul(activation, weight, output_type=tf.int32)  # [M, N]

    def onednn_quantized(activation):
        shifted = tf.bitcast(tf.cast(tf.cast(activation, tf.int32) + 128, tf.uint8), tf.quint8)  # [M, K]
        return tf.raw_ops.QuantizedMatMulWithBiasAndDequantize(
            a=shifted, b=tf.bitcast(weight, tf.qint8), bias=shift, min_a=0.0, max_a=255.0, min_b=-127.0,
            max_b=127.0, min_freezed_output=-1.0, max_freezed_output=1.0, Toutput=tf.float32,
        )  # [M, N]

    return {"int8 BatchMatMulV3": batch_matmul_v3, "int8 QuantizedMatMulWithBiasAndDequantize": onednn_quantized}


def routes(weight):
    """{route name: float32 `[M, K]` -> float32 `[M, N]`} for a float32 weight `[K, N]` (see the module doc)."""
    float_weight = tf.constant(weight)
    bfloat16_weight = tf.cast(float_weight, tf.bfloat16)
    weight_int8, column_scales = quantize_columns(weight)
    column_scales = tf.constant(column_scales)  # [N]
    table = {
        "float32": lambda activation: tf.matmul(activation, float_weight),
        "bfloat16": lambda activation: tf.cast(
            tf.matmul(tf.cast(activation, tf.bfloat16), bfloat16_weight), tf.float32
        ),
    }

    def dequantized(product):
        def route(activation):
            rounded, row_scales = quantize_rows(activation)  # [M, K], [M, 1]
            integers = product(tf.cast(rounded, tf.int8))  # [M, N]
            return tf.cast(integers, tf.float32) * column_scales * row_scales

        return route

    table.update({name: dequantized(product) for name, product in int8_products(weight_int8).items()})
    return table


def time_shape(shape_m, shape_k, shape_n, rounds, seconds_per_sample):
    """{"shape", "gflop_per_s", "speedup_over_float32", "int8_best_route", "unavailable"} of one shape."""
    random = np.random.default_rng(0)
    activation = tf.constant(random.normal(size=(shape_m, shape_k)).astype(np.float32))
    loops, unavailable = {}, {}
    for name, route in routes(random.normal(0.0, 0.05, size=(shape_k, shape_n)).astype(np.float32)).items():
        loop = timed_loop(route, activation)
        try:
            loops[name] = (loop, repeats_for(loop, seconds_per_sample))  # its first call traces the route
        except (tf.errors.OpError, TypeError, ValueError) as error:
            unavailable[name] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
    samples = {name: [] for name in loops}
    for _ in range(rounds):
        for name, (loop, repeats) in loops.items():
            samples[name].append(seconds_per_call(loop, repeats))
    flops = 2 * shape_m * shape_k * shape_n
    int8_routes = [name for name in samples if name.startswith("int8")]
    return {
        "shape": [shape_m, shape_k, shape_n],
        "gflop_per_s": {name: round(flops / statistics.median(times) / 1e9, 1) for name, times in samples.items()},
        "speedup_over_float32": {
            name: round(statistics.median(f / t for f, t in zip(samples["float32"], times)), 2)
            for name, times in samples.items()
        },
        "int8_best_route": min(int8_routes, key=lambda name: statistics.median(samples[name]), default=None),
        "unavailable": unavailable,
    }


def decoding_steps(sentences, beam_size):
    """Per model of `STEP_MODELS`: its sizes, the step's FLOPs and every matmul of it."""
    steps = {}
    for model, settings in STEP_MODELS.items():
        matmuls = decode_step_matmuls(settings, sentences, beam_size)
        steps[model] = {
            "sizes": {key: settings[key] for key in ("vocab_size", "embedding_dim", "hidden_dim", "maxout_dim",
                                                      "alignment_dim", "source_length")},
            "sentences": sentences,
            "beam_size": beam_size,
            "flops": matmul_flops(matmuls),
            "matmuls": [{"matmul": name, "shape": [shape_m, shape_k, shape_n], "count": count}
                        for name, shape_m, shape_k, shape_n, count in matmuls],
        }
    return steps


def report(shapes, rounds, seconds_per_sample, sentences, beam_size):
    """The bench's JSON object for `shapes` (strings MxKxN)."""
    return {
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "onednn": onednn_status(),
        "gemm_cpu_flags": gemm_flags(),
        "shapes": [time_shape(*(int(size) for size in shape.split("x")), rounds, seconds_per_sample)
                   for shape in shapes],
        "decoding_steps": decoding_steps(sentences, beam_size),
        "provenance": provenance(),
    }


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    for shape in _SHAPES.value:
        if len(shape.split("x")) != 3 or not all(size.isdigit() for size in shape.split("x")):
            raise app.UsageError(f"--shapes: {shape!r} is not MxKxN")
    return report(_SHAPES.value, _TIMING_ROUNDS.value, _SECONDS_PER_SAMPLE.value, _STEP_SENTENCES.value,
                  _STEP_BEAM_SIZE.value)


if __name__ == "__main__":
    run_report(main)
