"""Where one training update and one decoding step spend their time, op by op, at the peer's size. Prints JSON.

    python -m bench.profile_step --peer --output=bench/results/profile_CPU.json   # both steps, ours and the peer's
    python -m bench.profile_step --step=decode                     # TensorFlow's profile of one beam-5 search
    python -m bench.profile_step --step=train --ops_by_name --top_ops=40   # which matmul, which loop

The JSON has an object per `--step` ("train", "decode" or both), each with `ours` (and `peer`), and the
provenance.

The model and batch of `bench.peer_comparison` (`--model_size`, default `bench.model_sizes.PRESETS["peer"]`: m 256,
n 512, n' 512, l 256, 10k vocabularies, 80 sentences of 14 source and 16 target tokens, EOS included) in float32
(or `--step_precision=mixed_bfloat16`: bf16 products, decoding with bf16 weights as `translate` does) with random
weights and the recipe of `configs/multi30k_rnnsearch.flags` (uniform initialisation, dropout 0.3, label smoothing
0.1, Adam, clipping at 1):
- train: one update of the trainer (`make_train_step`) on one random batch read from a `tf.data` iterator.
- decode: `BeamSearch` (beam `--step_beam_size`, length normalisation "length", as the peer comparison decodes)
  of one batch of random sentences of the preset's source length (the last token EOS), encoder included, for
  exactly `--decoding_steps` steps (default 22, the peer comparison's length bound 1.25 x 14 + 5): EOS's output
  bias is set to -10^4, so that no hypothesis of the random model ends before the bound, where EOS is forced (a
  trained model's hypotheses end earlier: count its steps).

Each runs `--warmup_calls` times, is timed `--timed_calls` times (default 20 updates or 5 searches), then profiled
`--profiled_calls` times with `tf.profiler`. Times are milliseconds per update or per decoding step (a search's
time over its steps; `search_wall_ms` is a whole search's): `wall_ms` unprofiled, `profiled_wall_ms` under the
profiler, and `categories_ms` summed over TensorFlow's compute threads (which may run two ops at once: the sum,
`total_ms`, can exceed the wall time):
- `matmul`: MatMul, BatchMatMul*, _FusedMatMul, oneDNN's _Mkl*MatMul*, Einsum, wherever they run.
- `gated_unit`: the rest of the encoder's and decoder's recurrences (the GRUs' gates, splits and their
  gradients; in decoding the element-wise ops of `Decoder.step` outside the alignment model, the deep output
  and the embedding lookup: the gates, the input projection's bias and the embedding's BOS mask).
- `attention`: the rest of the alignment model (tanh(W_a s + U_a h), the softmax over the source, masking).
- `readout`: the rest of the deep output (maxout, biases, its dropout).
- `loss` (train): the loss over the target vocabulary (log-sum-exp, one-hot, label smoothing) and its gradient:
  the ops outside the model with an output of `[batch, target_length, ...]` (their shapes are read from the
  update's graph, whose top-level op names the trace keeps).
- `optimizer` (train): Adam and the global norm; the clipping multiplications have no scope of their own
  and are in `other`.
- `search` (decode): everything outside the model's encoder and step: the log-sum-exp and top-k over the
  vocabulary, the beam's bookkeeping (gathers of the state, the finished hypotheses), backtracking.
- `loop_control`: TensorList* ops (the loops' TensorArrays) and the loops' conditions. TensorFlow's trace
  does not show Switch, Merge, Enter, Exit and NextIteration: their cost is in `between_ops`.
- `input_pipeline` (train): the update's wait for its batch (IteratorGetNext; one batch repeated, so
  nothing but the fetch: `bench.data_pipeline` measures the pipeline itself).
- `between_ops`: the executor's time outside every op (scheduling, the untraced control flow).
- `other`: embeddings, dropout masks, transposes (those feeding the recurrent weights' gradient products,
  `Tensordot_*/transpose`, among them), the gradient sums and scaling.
`matmul` has the matmul FLOPs per update or decoding step (`bench.model_sizes.forward_matmuls` x 3 for an
update; for a search the encoder's, its first step's at one hypothesis per sentence and the other steps', from
`bench.gemm_limits.decode_step_matmuls`), the GFLOP/s achieved (FLOPs / time in matmul ops), and this machine's
speed at the same shapes in the products' dtype (float32, or bf16 under `--step_precision=mixed_bfloat16`), measured in
the same run: each distinct product (and an update's two backward products of each) timed alone in
`bench.matmul_timing`'s loop, `--timing_rounds` samples of `--seconds_per_sample`; with the fraction of it
reached. `wall_gflop_per_s` and `wall_fraction_of_limit` are the same FLOPs over the step's median wall time instead
(`with_wall_fraction`), for both systems. `top_ops` is the `--top_ops` costliest (category, op type), or op name.

With `--peer`, the peer (`bench/peer_profile.py` in its virtualenv, `bench.peer.PEER_VENV`) profiles the same
step at the same sizes with `torch.profiler`, in the same categories, and its report stands beside ours.
Interleave runs of old and new code to compare them on a machine whose speed drifts: run the old code from a git
worktree of it (`cd WORKTREE && python -m bench.profile_step`; `python -m` puts the current directory first on
the path, ahead of PYTHONPATH).
"""

import collections
import glob
import json
import re
import statistics
import subprocess
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf
from absl import app, flags
from tensorflow.tsl.profiler.protobuf import xplane_pb2

# --step_beam_size, --timing_rounds and --seconds_per_sample are gemm_limits' flags, defined once per process.
from bench.gemm_limits import (
    _SECONDS_PER_SAMPLE,
    _STEP_BEAM_SIZE,
    _TIMING_ROUNDS,
    decode_step_matmuls,
    onednn_status,
)
from bench.matmul_timing import limit_seconds
from bench.model_sizes import PRESETS, forward_matmuls, matmul_flops
from bench.peer import PEER_VENV
from bench.provenance import REPO_ROOT, provenance, run_report
from data_pipeline.constants import EOS_ID
from rnnsearch_tf.inference.decoding_model import reading_stored_weights
from rnnsearch_tf.inference.model_loader import decoding_model
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.models.model_config import ModelConfig
from rnnsearch_tf.models.rnn_search import RNNSearch
from rnnsearch_tf.training.fused_optimizers import FusedAdam
from rnnsearch_tf.training.train_step import make_train_step

CATEGORIES = {
    "train": ("matmul", "gated_unit", "attention", "readout", "loss", "optimizer", "loop_control", "input_pipeline",
              "between_ops", "other"),
    "decode": ("matmul", "gated_unit", "attention", "readout", "search", "loop_control", "between_ops", "other"),
}
# The name scopes a search's encoder and decoder steps run in (the search's own ops are in neither).
ENCODE_SCOPE, STEP_SCOPE = "encode", "decoder_step"
# The matmuls run once per sentence before a search (`Decoder.initial_state` and the encoder).
PER_SENTENCE = ("encoder W_z|W_r|W x", "encoder U_z|U_r h", "encoder U [r h]", "W_s", "U_a h", "C_z|C_r|C h",
                "C_o h")
# The dtype of the products whose speed is the limit, by our model's precision.
LIMIT_DTYPES = {"float32": tf.float32, "mixed_bfloat16": tf.bfloat16}
_MATMUL_TYPES = re.compile(r"MatMul|Einsum")
_LOOP_TYPES = {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "Identity", "IdentityN", "While",
               "StatelessWhile", "If", "StatelessIf"}
_LOOP_CONDITION = re.compile(r"while(_grad)?/cond/")
_GATE_TYPES = {"Sigmoid", "Tanh", "Mul", "Sub", "AddV2", "Add", "Split", "SplitV"}

_STEP = flags.DEFINE_list("step", ["train", "decode"], "train: one update; decode: one beam search; or both.")
_MODEL_SIZE = flags.DEFINE_enum("model_size", "peer", sorted(PRESETS), "Model and batch: a bench.model_sizes preset.")
_DECODING_STEPS = flags.DEFINE_integer("decoding_steps", 22, "Steps of every search.", lower_bound=1)
_WARMUP_CALLS = flags.DEFINE_integer("warmup_calls", 2, "Untimed calls first (tracing, allocation).", lower_bound=1)
_TIMED_CALLS = flags.DEFINE_integer("timed_calls", None, "Timed calls (default: 20 updates, 5 searches).")
_PROFILED_CALLS = flags.DEFINE_integer("profiled_calls", 3, "Calls under the profiler.", lower_bound=1)
_TOP_OPS = flags.DEFINE_integer("top_ops", 15, "Costliest ops listed in the JSON.")
_OPS_BY_NAME = flags.DEFINE_bool("ops_by_name", False, "List the costliest ops by name (which matmul, which loop).")
_KERAS_ADAM = flags.DEFINE_bool("keras_adam", False, "keras.optimizers.Adam instead of the trainer's FusedAdam.")
_PEER = flags.DEFINE_bool("peer", False, "Profile the peer's same step too (bench/peer_profile.py).")
_STEP_PRECISION = flags.DEFINE_enum(
    "step_precision", "float32", ["float32", "mixed_bfloat16"],
    "Our model's precision (`ModelConfig.precision`; decoding holds the weights in bf16, as translate does); the "
    "matmul limit is timed in the matching dtype. The peer stays float32. Not --precision: the commands' flag, which "
    "a test process may define beside it.")


def model_config(settings, precision="float32"):
    """The peer comparison's model at `settings` (a `PRESETS` entry) with the CPU recipe's initialisation and
    dropout, in `precision` (`ModelConfig.precision`)."""
    return ModelConfig(precision=precision,
        source_vocab_size=settings["vocab_size"], target_vocab_size=settings["vocab_size"],
        **{name: settings[name] for name in ("embedding_dim", "hidden_dim", "maxout_dim", "alignment_dim")},
        initializer="uniform", embedding_dropout=0.3, hidden_dropout=0.3, readout_dropout=0.3,
    )


def random_ids(settings, length):
    """int32 `[batch, length]` random word ids, the last EOS."""
    ids = np.random.default_rng(0).integers(4, settings["vocab_size"], (settings["batch_size"], length))
    ids[:, -1] = EOS_ID
    return tf.constant(ids, tf.int32)


def make_update(settings, keras_adam=False, precision="float32"):
    """`(update, loss_ops)`: a function running one training update (the trainer's) on one random batch, returning
    its NLL, and the names of the update graph's loss ops (`loss_ops`)."""
    keras.utils.set_random_seed(0)
    model = RNNSearch(model_config(settings, precision))
    batch = {f"{side}_ids": random_ids(settings, settings[f"{side}_length"]) for side in ("source", "target")}
    batches = iter(tf.data.Dataset.from_tensors(batch).repeat())
    optimizer = (keras.optimizers.Adam if keras_adam else FusedAdam)(2e-3)
    optimizer.build(model.trainable_variables)
    update = make_train_step(model, optimizer, lambda: next(batches), tf.distribute.get_strategy(), clip_norm=1.0,
                             label_smoothing=0.1)
    return lambda: float(update()["nll_sum"]), loss_ops(update.get_concrete_function().graph, settings)


def loss_ops(graph, settings):
    """Names of the ops of an update's `graph` outside the model's layers with an output of `[batch, target_length,
    ...]`: the loss over the target vocabulary and its gradient (the ids and masks of the batch's targets too)."""
    leading = [settings["batch_size"], settings["target_length"]]
    in_the_model = re.compile(r"(gradient_tape/)?(encoder|decoder|W_s)(_\d+)?/")
    return frozenset(
        operation.name for operation in graph.get_operations()
        if not in_the_model.match(operation.name)
        and any(output.shape.rank and output.shape.rank >= 2 and output.shape.as_list()[:2] == leading
                for output in operation.outputs)
    )


def make_search(settings, beam_size, decoding_steps, precision="float32"):
    """A `tf.function` running one beam search of a random batch for exactly `decoding_steps` steps; returns the
    lengths of its hypotheses, int `[batch, 1]` (all `decoding_steps`). In mixed_bfloat16 the weights are held in
    bf16, as `translate` decodes (`model_loader.decoding_model`)."""
    keras.utils.set_random_seed(0)
    model = RNNSearch(model_config(settings, precision))
    output_bias = model.decoder.deep_output.output_projection.bias  # b_W_o [K_y]
    output_bias.assign(tf.tensor_scatter_nd_update(output_bias, [[EOS_ID]], [-1e4]))
    decoding = decoding_model(model)

    def decoder_step(ids, step, state):
        with tf.name_scope(STEP_SCOPE):
            return decoding.symbols_to_logits_fn(ids, step, state)

    strategy = SearchConfig(beam_size=beam_size, length_normalization="length").strategy(decoder_step)
    source_ids = random_ids(settings, settings["source_length"])

    @tf.function(autograph=False)
    def search():
        with reading_stored_weights(decoding):
            with tf.name_scope(ENCODE_SCOPE):
                state = decoding.encode(source_ids)
            return strategy.search(state, tf.fill([tf.shape(source_ids)[0]], decoding_steps))["lengths"]  # [batch, 1]

    return search


def search_matmuls(settings, beam_size, decoding_steps):
    """The matmuls of one search: list of `(name, M, K, N, count)`, the per-sentence ones first."""
    sentences = settings["batch_size"]
    return (
        [row for row in forward_matmuls(settings) if row[0] in PER_SENTENCE]
        + decode_step_matmuls(settings, sentences, beam_size=1)  # the first step: one hypothesis per sentence
        + [(name, rows, k, n, count * (decoding_steps - 1))
           for name, rows, k, n, count in decode_step_matmuls(settings, sentences, beam_size)]
    )


def update_flops(settings):
    """Matmul FLOPs of one update: the forward pass's, x 3 with the two backward products."""
    return 3 * matmul_flops(forward_matmuls(settings))


Trace = collections.namedtuple("Trace", ["ops", "between_ops", "input_pipeline", "seconds"])
Trace.__doc__ = """What `traced_ops` read: `ops`, a list of `(op name, op type, picoseconds)` of the top-level op
events of TensorFlow's compute threads (an op inside another op is its parent's); `between_ops`, the picoseconds
of the executor's `ExecutorState::Process` outside them; `input_pipeline`, those of the iterators' `GetNext`;
`seconds`, the wall time of the profiled calls."""


def traced_ops(run, calls):
    """The `Trace` of `calls` calls of `run` under TensorFlow's profiler."""
    space = xplane_pb2.XSpace()
    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        started = time.perf_counter()
        for _ in range(calls):
            run()
        seconds = time.perf_counter() - started
        tf.profiler.experimental.stop()
        with open(glob.glob(f"{logdir}/**/*.xplane.pb", recursive=True)[0], "rb") as trace:
            space.ParseFromString(trace.read())
    ops, between_ops, input_pipeline = [], 0, 0
    for plane in (plane for plane in space.planes if plane.name.startswith("/host:")):
        names = {key: metadata.name for key, metadata in plane.event_metadata.items()}
        for line in plane.lines:
            if line.name.startswith("tf_data"):
                input_pipeline += sum(event.duration_ps for event in line.events
                                      if names[event.metadata_id] == "IteratorGetNextOp::DoCompute")
            if not line.name.startswith("tf_Compute"):
                continue
            process_end = op_end = -1
            for event in sorted(line.events, key=lambda event: (event.offset_ps, -event.duration_ps)):
                name, end = names[event.metadata_id], event.offset_ps + event.duration_ps
                if name == "ExecutorState::Process" and event.offset_ps >= process_end:  # not one inside another
                    between_ops += event.duration_ps
                    process_end = end
                elif ":" in name and "::" not in name and event.offset_ps >= op_end:  # "op name:op type"
                    op_name, op_type = name.rsplit(":", 1)
                    ops.append((op_name, op_type, event.duration_ps))
                    op_end = end
                    if event.offset_ps < process_end:
                        between_ops -= event.duration_ps
    return Trace(ops, between_ops, input_pipeline, seconds)


def category(op_name, op_type, step, loss_op_names=frozenset()):
    """The category of `CATEGORIES[step]` of one op of the trace (see the module doc); `loss_op_names` are an
    update's `loss_ops`."""
    if _MATMUL_TYPES.search(op_type):
        return "matmul"
    if op_type.startswith(("TensorList", "TensorArray")) or op_type in _LOOP_TYPES or _LOOP_CONDITION.search(op_name):
        return "loop_control"
    if op_type.startswith("IteratorGetNext"):
        return "input_pipeline"
    if "alignment_model" in op_name:
        return "attention"
    if "deep_output" in op_name:
        return "readout"
    if step == "train":
        if re.search(r"adam|global_norm", op_name, re.IGNORECASE) or op_type.startswith("ResourceApply"):
            return "optimizer"
        if op_name in loss_op_names:
            return "loss"
        return "gated_unit" if re.search(r"_rnn(_\d+)?/|decoder(_\d+)?/scan/while", op_name) else "other"
    if re.search(rf"(^|/){STEP_SCOPE}(_\d+)?/", op_name):
        is_embedding = re.search(r"/E(_\d+)?/", op_name)
        return "gated_unit" if op_type in _GATE_TYPES and not is_embedding else "other"
    if re.search(rf"(^|/){ENCODE_SCOPE}(_\d+)?/", op_name):
        return "gated_unit" if re.search(r"_rnn(_\d+)?/", op_name) else "other"
    return "search"


def categorised(trace, step, per, by_name=False, loss_op_names=frozenset()):
    """`({category: ms}, Counter {(category, op type or name): ms})` of a `Trace` per update or decoding step
    (`per` of them in the trace)."""
    milliseconds = dict.fromkeys(CATEGORIES[step], 0.0)
    by_op = collections.Counter()
    for op_name, op_type, picoseconds in trace.ops:
        name = category(op_name, op_type, step, loss_op_names)
        milliseconds[name] += picoseconds / 1e9 / per
        by_op[(name, re.sub(r"/_\d+/", "/", op_name) if by_name else op_type)] += picoseconds / 1e9 / per
    milliseconds["between_ops"] += trace.between_ops / 1e9 / per
    if "input_pipeline" in milliseconds:
        milliseconds["input_pipeline"] += trace.input_pipeline / 1e9 / per
    return milliseconds, by_op


def matmul_report(flops, matmul_ms, seconds_at_limit):
    """FLOPs, time and GFLOP/s of an update's or a step's matmuls, and the fraction of the limit reached."""
    achieved = flops / (matmul_ms / 1e3) / 1e9 if matmul_ms else 0.0
    limit = flops / seconds_at_limit / 1e9
    return {"flops": int(flops), "ms": round(matmul_ms, 3), "gflop_per_s": float(f"{achieved:.3g}"),
            "limit_gflop_per_s": float(f"{limit:.3g}"), "fraction_of_limit": round(achieved / limit, 3)}


def profile(step, settings, run, calls, profiled, top, by_name=False, loss_op_names=frozenset()):
    """Our report of `run` (an update, or a search of `settings["decoding_steps"]` steps) except its matmul
    limit: times it `calls` times (after it ran once), then profiles it `profiled` times."""
    seconds = []
    for _ in range(calls):
        started = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - started)
    steps = settings["decoding_steps"] if step == "decode" else 1  # of a call
    per = profiled * steps
    trace = traced_ops(run, profiled)
    milliseconds, by_op = categorised(trace, step, per, by_name, loss_op_names)
    total = sum(milliseconds.values())
    report = {
        "system": "ours",
        "step": step,
        "per": "decoding step" if step == "decode" else "update",
        "framework": {"tensorflow": tf.__version__, "keras": keras.__version__, "onednn": onednn_status()},
        "threads": {"intra_op": tf.config.threading.get_intra_op_parallelism_threads(),
                    "inter_op": tf.config.threading.get_inter_op_parallelism_threads()},
        "sizes": settings,
        "wall_ms": {"median": round(1e3 * statistics.median(seconds) / steps, 3),
                    "fastest": round(1e3 * min(seconds) / steps, 3), "calls": calls},
        "profiled_calls": profiled,
        "profiled_wall_ms": round(1e3 * trace.seconds / per, 3),
        "total_ms": round(total, 3),
        "categories_ms": {name: round(value, 3) for name, value in milliseconds.items()},
        "categories_share": {name: round(value / total, 4) for name, value in milliseconds.items()},
        "top_ops": [{"category": name, "op": op, "ms": round(value, 3)}
                    for (name, op), value in by_op.most_common(top)],
    }
    if step == "decode":
        search_seconds, beam = statistics.median(seconds), settings["beam_size"]
        report.update(
            decoding_steps=steps, beam_size=beam, sentences=settings["batch_size"],
            search_wall_ms=round(1e3 * search_seconds, 2),
            decoding_steps_per_s=round(steps / search_seconds, 1),
            hypotheses_per_s=round(settings["batch_size"] * beam * steps / search_seconds),
            sentences_per_s=round(settings["batch_size"] / search_seconds, 1),
        )
    return report


def peer_report(step, settings, calls, profiled, warmup, top):
    """The peer's report of the same step at the same sizes: `bench/peer_profile.py` in the peer's virtualenv."""
    options = dict(step=step, embedding_dim=settings["embedding_dim"], hidden_size=settings["hidden_dim"],
                   vocab_size=settings["vocab_size"], batch_size=settings["batch_size"],
                   source_length=settings["source_length"], target_length=settings["target_length"],
                   timed=calls, profiled=profiled, warmup=warmup, top=top)
    if step == "decode":
        options.update(beam_size=settings["beam_size"], decoding_steps=settings["decoding_steps"])
    command = [str(PEER_VENV / "bin" / "python"), str(REPO_ROOT / "bench" / "peer_profile.py"),
               *(f"--{name}={value}" for name, value in options.items())]
    output = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO_ROOT).stdout
    return json.loads(output)


def step_report(step, settings):
    """`{"ours": ..., "peer": ...}` of `step` ("train" or "decode") at `settings` (a `PRESETS` entry), the peer's
    with `--peer`."""
    if step == "decode":
        settings = dict(settings, beam_size=_STEP_BEAM_SIZE.value, decoding_steps=_DECODING_STEPS.value)
        search = make_search(settings, _STEP_BEAM_SIZE.value, _DECODING_STEPS.value, _STEP_PRECISION.value)
        run = lambda: search().numpy()  # noqa: E731
        loss_op_names = frozenset()
    else:
        run, loss_op_names = make_update(settings, _KERAS_ADAM.value, _STEP_PRECISION.value)
    for _ in range(_WARMUP_CALLS.value):
        outputs = run()
    if step == "decode" and not np.all(outputs == _DECODING_STEPS.value):
        raise RuntimeError(f"hypotheses of {sorted(set(outputs.ravel()))} tokens, not {_DECODING_STEPS.value}")
    calls = _TIMED_CALLS.value or (5 if step == "decode" else 20)
    ours = profile(step, settings, run, calls, _PROFILED_CALLS.value, _TOP_OPS.value, _OPS_BY_NAME.value,
                   loss_op_names)
    ours["precision"] = _STEP_PRECISION.value
    timing = (_TIMING_ROUNDS.value, _SECONDS_PER_SAMPLE.value, LIMIT_DTYPES[_STEP_PRECISION.value])
    if step == "decode":
        matmuls, per = search_matmuls(settings, _STEP_BEAM_SIZE.value, _DECODING_STEPS.value), _DECODING_STEPS.value
        ours["matmul"] = matmul_report(matmul_flops(matmuls) / per, ours["categories_ms"]["matmul"],
                                       limit_seconds(matmuls, False, *timing) / per)
    else:
        ours["matmul"] = matmul_report(update_flops(settings), ours["categories_ms"]["matmul"],
                                       limit_seconds(forward_matmuls(settings), True, *timing))
    reports = {"ours": ours}
    if _PEER.value:
        reports["peer"] = peer_report(step, settings, calls, _PROFILED_CALLS.value, _WARMUP_CALLS.value, _TOP_OPS.value)
    return {side: with_wall_fraction(report) for side, report in reports.items()}


def with_wall_fraction(report):
    """`report` with `matmul.wall_gflop_per_s`, its matmul FLOPs over its median wall time, and
    `matmul.wall_fraction_of_limit`, that over the limit: the share of the step that its matmuls would take at the
    limit (1: a step of nothing but matmuls at the limit). Unlike `fraction_of_limit`, whose matmul time is summed
    over the threads that ran ops at once, it does not depend on how many ran at once."""
    matmul = report["matmul"]
    achieved = matmul["flops"] / (report["wall_ms"]["median"] / 1e3) / 1e9
    matmul["wall_gflop_per_s"] = float(f"{achieved:.3g}")
    limit = matmul["limit_gflop_per_s"]
    matmul["wall_fraction_of_limit"] = round(achieved / limit, 3) if limit else None  # the peer's may be unmeasured
    return report


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    unknown = sorted(set(_STEP.value) - set(CATEGORIES))
    if unknown or not _STEP.value:
        raise app.UsageError(f"--step: {unknown or 'nothing'}; choose from {sorted(CATEGORIES)}")
    report = {step: step_report(step, dict(PRESETS[_MODEL_SIZE.value])) for step in _STEP.value}
    return dict(report, provenance=provenance())


if __name__ == "__main__":
    run_report(main)
