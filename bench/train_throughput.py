"""Benchmarks training updates and prints JSON, with the model's FLOPs and this machine's matmul limit.

    python -m bench.train_throughput --preset=multi30k
    python -m bench.train_throughput --preset=tiny,multi30k,rnnsearch50   # one process per preset

(Run it with -m from the repository root: as a script, this file would shadow the package.)

Each preset is a model size and a batch shape; `--embedding_dim` etc. override a single preset. The
batch is synthetic and full (every sentence `--source_length` source and `--target_length` target
tokens, EOS included, no padding), so tokens/s is comparable across runs; the update is the
`Trainer`'s (`rnnsearch_tf.training.train_step.make_train_step`: MirroredStrategy, global-token loss, clipping,
Adadelta).

Reports target tokens/s, sentences/s, the median and spread of the step time over `--steps` timed
updates, the peak RSS of the process, the analytic FLOPs per target token (2·m·n per matmul of the
forward pass, the encoder amortised over the target tokens, x3 for forward + backward), the FLOP/s
achieved, and the dense-matmul limit of this machine at the model's own matmul shapes, measured in
the same run: every forward matmul `[M, K] x [K, N]` and its two backward matmuls are timed alone,
and `matmul_limit_seconds_per_step` is the time all the step's matmuls take at those speeds. The
fraction of the limit is `matmul_limit_seconds_per_step / median_step_seconds`.
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import time

import keras
import numpy as np
import tensorflow as tf
from absl import app
from absl import flags

from bench.bench_flags import without_flags
from bench.matmul_timing import products_seconds, row_products
from bench.model_sizes import PRESETS, forward_matmuls
from bench.provenance import provenance, run_report
from data_pipeline.constants import EOS_ID
from rnnsearch_tf.models.model_config import ModelConfig
from rnnsearch_tf.models.rnn_search import RNNSearch
from rnnsearch_tf.training.fused_optimizers import FusedAdadelta
from rnnsearch_tf.training.train_step import make_train_step
from rnnsearch_tf.utils.precision import PRECISIONS, dtype_policy


_PRESET = flags.DEFINE_string("preset", "multi30k", f"One of {sorted(PRESETS)}, or a comma-separated list.")
_VOCAB_SIZE = flags.DEFINE_integer("vocab_size", None, "K_x = K_y (overrides the preset).")
_EMBEDDING_DIM = flags.DEFINE_integer("embedding_dim", None, "m (overrides the preset).")
_HIDDEN_DIM = flags.DEFINE_integer("hidden_dim", None, "n (overrides the preset).")
_MAXOUT_DIM = flags.DEFINE_integer("maxout_dim", None, "l (overrides the preset).")
_ALIGNMENT_DIM = flags.DEFINE_integer("alignment_dim", None, "n' (overrides the preset).")
_BATCH_SIZE = flags.DEFINE_integer("batch_size", None, "Sentence pairs per update (overrides the preset).")
_SOURCE_LENGTH = flags.DEFINE_integer("source_length", None, "Source tokens per sentence, EOS included.")
_TARGET_LENGTH = flags.DEFINE_integer("target_length", None, "Target tokens per sentence, EOS included.")
_STEPS = flags.DEFINE_integer("steps", None, "Timed updates (default: 20, 5 for rnnsearch50).")
_WARMUP_STEPS = flags.DEFINE_integer("warmup_steps", 2, "Untimed updates first (tracing, allocation).")
_JIT_COMPILE = flags.DEFINE_bool("jit_compile", False, "TrainingConfig.jit_compile: XLA forward and backward pass.")
_PRECISION = flags.DEFINE_enum("precision", "float32", PRECISIONS, "ModelConfig.precision of the timed model.")
_MATMUL_SECONDS = flags.DEFINE_float("matmul_seconds", 0.3, "Time spent measuring each matmul shape.")


def _preset_settings(name):
    settings = dict(PRESETS[name])
    for key, holder in (
        ("vocab_size", _VOCAB_SIZE), ("embedding_dim", _EMBEDDING_DIM), ("hidden_dim", _HIDDEN_DIM),
        ("maxout_dim", _MAXOUT_DIM), ("alignment_dim", _ALIGNMENT_DIM), ("batch_size", _BATCH_SIZE),
        ("source_length", _SOURCE_LENGTH), ("target_length", _TARGET_LENGTH),
    ):
        if holder.value is not None:
            settings[key] = holder.value
    return settings


def matmul_limit(settings, budget):
    """Seconds all matmuls of one update (forward, and both backward products) take at measured speeds, each
    product timed for about `budget` seconds."""
    matmuls = forward_matmuls(settings)
    seconds = products_seconds(matmuls, backward=True, rounds=3, seconds_per_sample=budget / 3)
    rows, limit_seconds, total_flops = [], 0.0, 0
    for name, shape_m, shape_k, shape_n, count in matmuls:
        flops = 2 * shape_m * shape_k * shape_n
        update_seconds = sum(seconds[shape] for shape in row_products(shape_m, shape_k, shape_n, backward=True))
        limit_seconds += update_seconds * count
        total_flops += 3 * flops * count
        rows.append({
            "matmul": name,
            "shape": [shape_m, shape_k, shape_n],
            "per_update": count,
            "gflop_per_s": round(3 * flops / update_seconds / 1e9, 1),
        })
    return rows, limit_seconds, total_flops


def _peak_rss_gib():
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)


def benchmark(name):
    settings = _preset_settings(name)
    steps = _STEPS.value or (5 if name == "rnnsearch50" else 20)
    batch, source_length, target_length = (settings[k] for k in ("batch_size", "source_length", "target_length"))
    config = ModelConfig(
        source_vocab_size=settings["vocab_size"], target_vocab_size=settings["vocab_size"],
        **{name: settings[name] for name in ("embedding_dim", "hidden_dim", "maxout_dim", "alignment_dim")},
        precision=_PRECISION.value,
    )
    random = np.random.default_rng(0)

    def sentences(length):
        ids = random.integers(4, settings["vocab_size"], size=(batch, length), dtype=np.int32)  # [batch, length]
        ids[:, -1] = EOS_ID
        return tf.constant(ids)

    batch_ids = {"source_ids": sentences(source_length), "target_ids": sentences(target_length)}
    keras.utils.set_random_seed(0)
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        model = RNNSearch(config)
        optimizer = FusedAdadelta(learning_rate=1.0, rho=0.95, epsilon=1e-6)  # the trainer's
        optimizer.build(model.trainable_variables)
    train_step = make_train_step(
        model, optimizer, lambda: batch_ids, strategy, clip_norm=1.0, jit_compile=_JIT_COMPILE.value
    )
    start = time.perf_counter()
    train_step()["nll_sum"].numpy()
    first_step_seconds = time.perf_counter() - start
    for _ in range(_WARMUP_STEPS.value - 1):
        train_step()["nll_sum"].numpy()
    step_seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        train_step()["nll_sum"].numpy()
        step_seconds.append(time.perf_counter() - start)
    peak_rss = _peak_rss_gib()
    median = statistics.median(step_seconds)
    target_tokens = batch * target_length
    matmuls, limit_seconds, matmul_flops = matmul_limit(settings, _MATMUL_SECONDS.value)
    return {
        "preset": name,
        "settings": settings,
        "jit_compile": _JIT_COMPILE.value,
        "precision": dtype_policy(_PRECISION.value),
        "parameters": int(sum(np.prod(v.shape) for v in model.trainable_variables)),
        "first_step_seconds": round(first_step_seconds, 2),
        "timed_steps": steps,
        "median_step_seconds": round(median, 4),
        "step_seconds_min_max": [round(min(step_seconds), 4), round(max(step_seconds), 4)],
        "target_tokens_per_s": round(target_tokens / median),
        "sentences_per_s": round(batch / median, 1),
        "peak_rss_gib": peak_rss,
        "analytic_flops_per_target_token": int(matmul_flops / target_tokens),
        "achieved_gflop_per_s": round(matmul_flops / median / 1e9, 2),
        "matmul_limit_seconds_per_step": round(limit_seconds, 4),
        "matmul_limit_gflop_per_s": round(matmul_flops / limit_seconds / 1e9, 2),
        "fraction_of_matmul_limit": round(limit_seconds / median, 3),
        "matmuls": matmuls,
    }


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    names = _PRESET.value.split(",")
    unknown = sorted(set(names) - set(PRESETS))
    if unknown:
        raise app.UsageError(f"unknown preset(s) {unknown}; choose from {sorted(PRESETS)}")
    if len(names) == 1:
        report = benchmark(names[0])
        report.update(cpu_cores=os.cpu_count(), provenance=provenance())
        return report
    reports = []
    for name in names:  # a fresh process per preset, so each peak RSS is that preset's own
        arguments = without_flags(sys.argv[1:], ("preset", "output"))  # a preset's process prints its report only
        output = subprocess.run(
            [sys.executable, "-m", "bench.train_throughput", f"--preset={name}", *arguments],
            check=True, capture_output=True, text=True,
        ).stdout
        reports.append(json.loads(output))
    return reports


if __name__ == "__main__":
    run_report(main)
