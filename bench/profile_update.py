"""Times the peer comparison's update (n = 512, batch 80) with the CPU recipe, and where its time goes.

    python -m bench.profile_update --steps=20                    # median and fastest update
    python -m bench.profile_update --steps=5 --top=25            # + TensorFlow's profile by op type
    python -m bench.profile_update --steps=5 --top=40 --by_name  # + by op name (which matmul, which loop)

The model and batch shape of `bench.peer_comparison` (`bench.train_throughput`'s "peer" preset: m 256,
n 512, n' 512, l 256, 10k vocabularies, 80 sentences of 14 source and 16 target tokens, one random batch)
and the recipe of `configs/multi30k_rnnsearch.flags` (uniform initialisation, dropout 0.3, label
smoothing 0.1, Adam, clipping at 1). `--steps` (default 20, after 3 untimed updates), `--precision`
and `--jit_compile` are train_throughput's flags.

Interleave runs of old and new code to compare them on a machine whose speed drifts: run the old code
from a git worktree of it (`cd WORKTREE && python -m bench.profile_update`; `python -m` puts the current
directory first on the path, ahead of PYTHONPATH). Op times are summed over TensorFlow's compute
threads, so they add up to about cores x wall time.
"""

import collections
import glob
import statistics
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf
from absl import app, flags
from tensorflow.tsl.profiler.protobuf import xplane_pb2

# --steps, --precision and --jit_compile are train_throughput's flags, defined once per process.
from bench.model_sizes import PRESETS
from bench.train_throughput import _JIT_COMPILE, _PRECISION, _STEPS
from rnnsearch_tf.models.model_config import ModelConfig
from rnnsearch_tf.models.rnn_search import RNNSearch
from rnnsearch_tf.training.fused_optimizers import FusedAdam
from rnnsearch_tf.training.train_step import make_train_step

_TOP = flags.DEFINE_integer("top", 0, "Profile 3 more updates and print their most costly ops (0: none).")
_BY_NAME = flags.DEFINE_bool("by_name", False, "Group the profile by op name instead of op type.")
_KERAS_ADAM = flags.DEFINE_bool("keras_adam", False, "keras.optimizers.Adam instead of the trainer's FusedAdam.")


def make_update():
    size = PRESETS["peer"]
    keras.utils.set_random_seed(0)
    config = ModelConfig(
        source_vocab_size=size["vocab_size"], target_vocab_size=size["vocab_size"],
        **{name: size[name] for name in ("embedding_dim", "hidden_dim", "maxout_dim", "alignment_dim")},
        precision=_PRECISION.value, initializer="uniform", embedding_dropout=0.3, hidden_dropout=0.3,
        readout_dropout=0.3,
    )
    model = RNNSearch(config)
    random = np.random.default_rng(0)
    batch = {
        f"{side}_ids": tf.constant(random.integers(4, size["vocab_size"], (size["batch_size"], size[f"{side}_length"])),
                                   tf.int32)
        for side in ("source", "target")
    }
    optimizer = (keras.optimizers.Adam if _KERAS_ADAM.value else FusedAdam)(2e-3)
    optimizer.build(model.trainable_variables)
    return make_train_step(model, optimizer, lambda: batch, tf.distribute.get_strategy(), clip_norm=1.0,
                           label_smoothing=0.1, jit_compile=_JIT_COMPILE.value)


def op_milliseconds(update, updates=3):
    """{op type or name: milliseconds per update} over TensorFlow's compute threads."""
    logdir = tempfile.mkdtemp()
    tf.profiler.experimental.start(logdir)
    for _ in range(updates):
        float(update()["nll_sum"])
    tf.profiler.experimental.stop()
    space = xplane_pb2.XSpace()
    with open(glob.glob(f"{logdir}/**/*.xplane.pb", recursive=True)[0], "rb") as trace:
        space.ParseFromString(trace.read())
    totals = collections.Counter()
    for plane in (plane for plane in space.planes if "host" in plane.name.lower()):
        names = {key: metadata.name for key, metadata in plane.event_metadata.items()}
        for line in (line for line in plane.lines if line.name.startswith("tf_Compute")):
            for event in line.events:
                name = names[event.metadata_id]  # "op name:op type"
                if ":" in name and not name.startswith(("Threadpool", "Executor")):
                    totals[name if _BY_NAME.value else name.split(":")[-1]] += event.duration_ps / 1e9 / updates
    return totals


def main(argv):
    del argv
    update = make_update()
    for _ in range(3):
        float(update()["nll_sum"])
    seconds = []
    for _ in range(_STEPS.value or 20):
        started = time.perf_counter()
        float(update()["nll_sum"])
        seconds.append(time.perf_counter() - started)
    print(f"update: median {statistics.median(seconds):.4f} s, fastest {min(seconds):.4f} s")
    if _TOP.value:
        totals = op_milliseconds(update)
        total = sum(totals.values())
        print(f"op time per update: {total:.1f} ms")
        for name, milliseconds in totals.most_common(_TOP.value):
            print(f"{milliseconds:8.1f} ms {100 * milliseconds / total:5.1f}%  {name}")


if __name__ == "__main__":
    app.run(main)
