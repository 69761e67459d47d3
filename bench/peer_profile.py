"""The peer's training update and beam search, op by op: `torch.profiler` on the CPU. Prints JSON.

Runs in the peer's virtualenv (`../shared/peer/install.sh`: OpenNMT-py 3.5.1, PyTorch 2.2.2), with the standard
library, torch and onmt only; `python -m bench.profile_step --peer` runs it beside ours:

    ~/.cache/rnnsearch-peer/bin/python bench/peer_profile.py --step=train
    ~/.cache/rnnsearch-peer/bin/python bench/peer_profile.py --step=decode --decoding_steps=22

The model is `../shared/peer/onmt_bench.py`'s, built by OpenNMT-py's own `build_model` from the options that
bench gives `onmt_train` (bidirectional GRU encoder of `--hidden_size` / 2 per direction, GRU decoder of
`--hidden_size` with input feeding, "mlp" attention, no dropout, uniform initialisation in ±0.1), with random
weights and vocabularies of `--vocab_size` entries (its 4 special tokens included):
- train: one update as `onmt_bench.py` times it, OpenNMT-py's `Trainer._gradient_accumulation` (forward,
  loss, backward, gradient clipping at 1, Adam 1e-3) on one random batch of `--batch_size` sentences of
  `--source_length` source tokens and `--target_length` target tokens (EOS included; BOS is added before them).
- decode: OpenNMT-py's `Translator.translate_batch` (beam `--beam_size`, average length penalty) of one batch of
  `--batch_size` random sentences of `--source_length` tokens, for exactly `--decoding_steps` steps: the
  minimum and the maximum length are both that (the length ratio off), so that no hypothesis ends early, as an
  untrained model's would not either. The counts of decoder calls are checked.

Categories (milliseconds per update, or per decoding step: the search's time over its steps, its encoder
included), the same as `bench.profile_step`'s: `matmul` (aten::mm, addmm, bmm and what runs inside them);
`gated_unit` (the rest of the encoder's `nn.GRU` and the decoder's `StackedGRU`, forward and backward);
`attention` (the rest of `GlobalAttention`: its tanh, softmax over the source, masking, concatenation);
`readout` (the rest of the generator, a linear layer: nothing); `loss` (train: the rest of OpenNMT-py's
`LossCompute`, the log-softmax and NLL over the target vocabulary); `optimizer` (OpenNMT-py's `Optimizer.step`:
clipping and Adam); `search` (decode: the log-softmax, top-k and beam bookkeeping outside the model,
state reordering included); `loop_control` and `input_pipeline` (0: the loops are Python's and the batch is
made before the update); `between_ops` (wall time outside every op: Python, module calls, the autograd
engine's scheduling); `other` (embeddings, the encoder's packing, gradient accumulation). An op's backward belongs where
its forward ran (matched by the autograd sequence number). The FLOPs are the profiler's count of the matmul ops
(`with_flops`): OpenNMT-py's "mlp" attention projects every source annotation again at every decoder step
(`GlobalAttention.score`'s `linear_context`), and an update skips the backward products nothing needs (the
encoder's first recurrent input is zeros). The limit is this process's float32 speed at those ops' shapes,
each timed alone.
"""

import argparse
import bisect
import collections
import json
import os
import platform
import statistics
import sys
import time

# Where module forwards are marked: `LABEL + category` record_function ranges.
LABEL = "peer_profile::"
MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::addmv", "aten::mv", "aten::dot",
              "aten::linear", "aten::matmul", "aten::_addmm_activation")
CATEGORIES = {
    "train": ("matmul", "gated_unit", "attention", "readout", "loss", "optimizer", "loop_control", "input_pipeline",
              "between_ops", "other"),
    "decode": ("matmul", "gated_unit", "attention", "readout", "search", "loop_control", "between_ops", "other"),
}
SPECIALS = ("<unk>", "<blank>", "<s>", "</s>")  # OpenNMT-py's DefaultTokens UNK, PAD, BOS, EOS: ids 0-3


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--step", choices=sorted(CATEGORIES), default="train")
    parser.add_argument("--embedding_dim", type=int, default=256)
    parser.add_argument("--hidden_size", type=int, default=512, help="onmt -hidden_size: the decoder's units")
    parser.add_argument("--vocab_size", type=int, default=10004, help="entries of each vocabulary, specials included")
    parser.add_argument("--batch_size", type=int, default=80)
    parser.add_argument("--source_length", type=int, default=14)
    parser.add_argument("--target_length", type=int, default=16, help="target tokens, EOS included")
    parser.add_argument("--beam_size", type=int, default=5)
    parser.add_argument("--decoding_steps", type=int, default=22)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)), help="torch threads")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls first")
    parser.add_argument("--timed", type=int, default=10, help="timed calls (wall time, no profiler)")
    parser.add_argument("--profiled", type=int, default=3, help="profiled calls")
    parser.add_argument("--matmul_seconds", type=float, default=0.1, help="time spent timing each matmul shape")
    parser.add_argument("--top", type=int, default=15, help="costliest (category, op) pairs in the JSON")
    return parser.parse_args(argv)


def onmt_options(args):
    """`onmt_train`'s options as `onmt_bench.py` gives them (Adam, `--hid-mode total`), validated by OpenNMT-py."""
    import onmt.bin.train as onmt_train
    from onmt.utils.parse import ArgumentParser

    argv = [
        "-data", "{}", "-src_vocab", "-", "-tgt_vocab", "-",
        "-src_vocab_size", str(args.vocab_size), "-tgt_vocab_size", str(args.vocab_size), "-vocab_size_multiple", "1",
        "-encoder_type", "brnn", "-decoder_type", "rnn", "-rnn_type", "GRU", "-global_attention", "mlp",
        "-layers", "1", "-word_vec_size", str(args.embedding_dim), "-hidden_size", str(args.hidden_size),
        "-optim", "adam", "-learning_rate", "0.001", "-max_grad_norm", "1.0", "-dropout", "0.0",
        "-batch_type", "sents", "-batch_size", str(args.batch_size), "-accum_count", "1", "-seed", "1234",
    ]
    opt = onmt_train._get_parser().parse_args(argv)
    ArgumentParser.update_model_opts(opt)
    ArgumentParser.validate_model_opts(opt)
    opt.data = {}
    return opt


def build(args):
    """(options, vocabularies, model): `onmt_train`'s model on vocabularies of `--vocab_size` entries."""
    from onmt.inputters.inputter import dict_to_vocabs
    from onmt.model_builder import build_model

    opt = onmt_options(args)
    tokens = list(SPECIALS) + [f"w{index}" for index in range(args.vocab_size - len(SPECIALS))]
    vocabs = dict_to_vocabs({"src": tokens, "tgt": tokens, "data_task": "seq2seq", "decoder_start_token": "<s>"})
    return opt, vocabs, build_model(opt, opt, vocabs, None, -1)


def random_batch(args, with_target):
    """A batch as OpenNMT-py's `tensorify` makes it: `src` `[batch, src_len, 1]`, `srclen`, and `tgt`
    `[batch, 1 + tgt_len, 1]` (BOS, words, EOS) with `tgtlen`."""
    import torch

    generator = torch.Generator().manual_seed(0)
    words = lambda length: torch.randint(len(SPECIALS), args.vocab_size, (args.batch_size, length, 1),  # noqa: E731
                                         generator=generator)
    batch = {"src": words(args.source_length),
             "srclen": torch.full((args.batch_size,), args.source_length, dtype=torch.long)}
    if with_target:
        bos = torch.full((args.batch_size, 1, 1), SPECIALS.index("<s>"))
        eos = torch.full((args.batch_size, 1, 1), SPECIALS.index("</s>"))
        batch["tgt"] = torch.cat([bos, words(args.target_length - 1), eos], dim=1)
        batch["tgtlen"] = torch.full((args.batch_size,), args.target_length + 1, dtype=torch.long)
    return batch


def labelled(function, category, calls=None, name=None):
    """`function` with each call marked as a `LABEL + category` range of the profile (and counted in
    `calls[name]`)."""
    import torch

    def call(*args, **kwargs):
        if calls is not None:
            calls[name] += 1
        with torch.profiler.record_function(LABEL + category):
            return function(*args, **kwargs)

    return call


def label_model(model, calls):
    """The model's parts as categories, their calls counted in `calls` by part; what is in none of them is
    `other` (train) or `search` (decode)."""
    for name, category in (("encoder", "other"), ("decoder", "other"), ("encoder.rnn", "gated_unit"),
                           ("decoder.rnn", "gated_unit"), ("decoder.attn", "attention"), ("generator", "readout")):
        module = model.get_submodule(name)
        module.forward = labelled(module.forward, category, calls, name)


def train_update(args):
    """A function running one update of `onmt_bench.py`'s training on one random batch, and its call counts."""
    from onmt.trainer import build_trainer
    from onmt.utils import Statistics
    from onmt.utils.optimizers import Optimizer

    opt, vocabs, model = build(args)
    calls = collections.Counter()
    label_model(model, calls)
    optimizer = Optimizer.from_opt(model, opt)
    optimizer.step = labelled(optimizer.step, "optimizer")
    trainer = build_trainer(opt, -1, model, vocabs, optimizer)
    trainer.train_loss.forward = labelled(trainer.train_loss.forward, "loss")
    model.train()
    batch = random_batch(args, with_target=True)

    def update():
        trainer._gradient_accumulation([batch], args.batch_size, Statistics(), Statistics())  # "sents" normalisation

    return update, calls


def beam_search(args):
    """A function translating one random batch for exactly `--decoding_steps` steps, and its decoder call counts."""
    import onmt.bin.translate as onmt_translate
    from onmt.translate import GNMTGlobalScorer, Translator

    opt, vocabs, model = build(args)
    calls = collections.Counter()
    label_model(model, calls)
    steps = str(args.decoding_steps)
    translate_opt = onmt_translate._get_parser().parse_args([
        "-model", "-", "-src", "-", "-beam_size", str(args.beam_size), "-n_best", "1", "-min_length", steps,
        "-max_length", steps, "-max_length_ratio", "0", "-length_penalty", "avg", "-gpu", "-1",
    ])
    model.eval()
    translator = Translator.from_opt(model, vocabs, translate_opt, opt, global_scorer=GNMTGlobalScorer.from_opt(
        translate_opt), report_score=False)
    batch = random_batch(args, with_target=False)

    def search():
        before = calls["decoder"]
        translator.translate_batch(batch, attn_debug=False)
        if calls["decoder"] - before != args.decoding_steps:
            raise RuntimeError(f"the search ran {calls['decoder'] - before} decoder steps, not {args.decoding_steps}")

    return search, calls


def _ancestor(event, test):
    """The nearest of `event` and its enclosing events that passes `test`, or None."""
    while event is not None and not test(event):
        event = event.cpu_parent
    return event


def _is_label(event):
    return event.name.startswith(LABEL)


def _is_backward_node(event):
    """An autograd node's run (`autograd::engine::evaluate_function: XBackward0`, or `XBackward0` itself): it
    carries its forward op's thread (`fwd_thread`) and sequence number; forward events have no `fwd_thread`."""
    return event.name.startswith("autograd::engine::evaluate_function") or bool(event.fwd_thread)


class _Backward:
    """Which autograd node a backward op ran in, and which forward op made that node."""

    def __init__(self, events):
        # The profiler nests events by their microsecond times, and a short op that ends or starts in the same
        # microsecond as its node may be left without a parent: such an op (a backward kernel records no sequence
        # number) is placed in the node that ran on its thread around it.
        self.runs = collections.defaultdict(list)  # thread -> [(start, end, node)] of evaluate_function events
        made = collections.defaultdict(dict)  # forward thread -> {sequence number: the last op to record it}
        for event in sorted(events, key=lambda event: event.time_range.start):
            if event.name.startswith("autograd::engine::evaluate_function"):
                self.runs[event.thread].append((event.time_range.start, event.time_range.end, event))
            elif event.sequence_nr >= 0 and not _ancestor(event, _is_backward_node):
                made[event.thread][event.sequence_nr] = event
        self.made, self.numbers = made, {thread: sorted(numbers) for thread, numbers in made.items()}

    def node(self, event):
        """The autograd node whose run `event` is part of, or None for a forward op."""
        node = _ancestor(event, _is_backward_node)
        if node is not None or event.sequence_nr >= 0 or _ancestor(event, _is_label):
            return node
        runs = self.runs.get(event.thread, [])
        index = bisect.bisect_right(runs, (event.time_range.start + 1, float("inf"))) - 1
        if index >= 0 and runs[index][1] + 1 >= event.time_range.start:
            return runs[index][2]
        return None

    def forward_op(self, node):
        """The forward op that made `node`: the last op of its forward thread to record its sequence number
        (ops that make no node record the number the next one will take), or the largest number below it (an
        in-place op on a view records one less than the `CopySlices` node it makes); None if there is none."""
        numbers = self.numbers.get(node.fwd_thread, [])
        index = bisect.bisect_right(numbers, node.sequence_nr)
        return self.made[node.fwd_thread][numbers[index - 1]] if index else None


def categorised_ops(events, step):
    """[(category, op name, self microseconds)] of the profiled ops; labels and the autograd engine's own
    `evaluate_function` events are left out (their self time is `between_ops`'). A backward op belongs where the
    forward op that made its node ran (`_Backward`)."""
    backward = _Backward(events)
    outside = "search" if step == "decode" else "other"
    rows = []
    for event in events:
        if _is_label(event) or event.name.startswith("autograd::engine::evaluate_function"):
            continue
        if _ancestor(event, lambda parent: parent.name in MATMUL_OPS):
            rows.append(("matmul", event.name, event.self_cpu_time_total))
            continue
        node = backward.node(event)
        label = _ancestor(event if node is None else backward.forward_op(node), _is_label)
        rows.append((label.name[len(LABEL):] if label else outside, event.name, event.self_cpu_time_total))
    return rows


def matmul_shapes(events):
    """{(op, input shapes): (calls, FLOPs per call)} of the profiled matmul kernels that have a FLOP count."""
    shapes = {}
    for event in events:
        if event.name in MATMUL_OPS and event.flops:
            key = (event.name, tuple(tuple(shape) for shape in event.input_shapes))
            calls, _ = shapes.get(key, (0, event.flops))
            shapes[key] = (calls + 1, event.flops)
    return shapes


def seconds_per_matmul(op, input_shapes, budget):
    """Median seconds of one call of `op` on random float32 inputs of `input_shapes`, back to back."""
    import torch

    inputs = [torch.randn(shape) if shape else torch.tensor(0.0) for shape in input_shapes]
    function = {"aten::mm": torch.mm, "aten::bmm": torch.bmm, "aten::addmm": torch.addmm,
                "aten::baddbmm": torch.baddbmm, "aten::addmv": torch.addmv, "aten::mv": torch.mv}[op]
    inputs = inputs[: {"aten::addmm": 3, "aten::baddbmm": 3, "aten::addmv": 3}.get(op, 2)]
    function(*inputs)
    started = time.perf_counter()
    function(*inputs)
    repeats = max(1, int(budget / 3 / max(time.perf_counter() - started, 1e-7)))
    samples = []
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(repeats):
            function(*inputs)
        samples.append((time.perf_counter() - started) / repeats)
    return statistics.median(samples)


def matmul_report(shapes, matmul_ms, calls, budget):
    """FLOPs per call, achieved GFLOP/s, and the float32 limit at the same shapes (each timed alone)."""
    flops = sum(count * per_call for count, per_call in shapes.values()) / calls
    limit_seconds = sum(count * seconds_per_matmul(op, input_shapes, budget)
                        for (op, input_shapes), (count, _) in shapes.items()) / calls
    achieved = flops / (matmul_ms / 1e3) / 1e9 if matmul_ms else 0.0
    limit = flops / limit_seconds / 1e9 if limit_seconds else 0.0
    return {"flops": round(flops), "ms": round(matmul_ms, 3), "gflop_per_s": float(f"{achieved:.3g}"),
            "limit_gflop_per_s": float(f"{limit:.3g}"),
            "fraction_of_limit": round(achieved / limit, 3) if limit else None,
            "shapes": len(shapes)}


def profiled(run, calls):
    """`(events, seconds)`: `torch.profiler`'s events of `calls` calls of `run` (shapes and FLOPs recorded), and
    their wall seconds."""
    import torch

    activities = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=activities, record_shapes=True, with_flops=True) as profiler:
        started = time.perf_counter()
        for _ in range(calls):
            run()
        seconds = time.perf_counter() - started
    return profiler.events(), seconds


def profile(run, args, calls):
    """The JSON report of `run` (one update, or one search of `--decoding_steps` steps)."""
    import torch

    for _ in range(args.warmup):
        run()
    seconds = []
    for _ in range(args.timed):
        started = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - started)
    events, profiled_seconds = profiled(run, args.profiled)
    rows = categorised_ops(events, args.step)
    per = args.profiled * (args.decoding_steps if args.step == "decode" else 1)  # per update or decoding step
    milliseconds = dict.fromkeys(CATEGORIES[args.step], 0.0)
    by_op = collections.Counter()
    for category, name, microseconds in rows:
        milliseconds[category] += microseconds / 1e3 / per
        by_op[(category, name)] += microseconds / 1e3 / per
    milliseconds["between_ops"] = max(0.0, profiled_seconds * 1e3 / per - sum(milliseconds.values()))
    total = sum(milliseconds.values())
    report = {
        "system": "peer",
        "step": args.step,
        "per": "decoding step" if args.step == "decode" else "update",
        "framework": {"onmt": __import__("onmt").__version__, "torch": torch.__version__,
                      "python": platform.python_version()},
        "threads": torch.get_num_threads(),
        "sizes": {name: getattr(args, name) for name in ("embedding_dim", "hidden_size", "vocab_size", "batch_size",
                                                          "source_length")
                  + (("target_length",) if args.step == "train" else ())},
        "wall_ms": {"median": round(1e3 * statistics.median(seconds) * args.profiled / per, 3),
                    "fastest": round(1e3 * min(seconds) * args.profiled / per, 3), "calls": len(seconds)},
        "profiled_calls": args.profiled,
        "profiled_wall_ms": round(profiled_seconds * 1e3 / per, 3),
        "total_ms": round(total, 3),
        "categories_ms": {name: round(value, 3) for name, value in milliseconds.items()},
        "categories_share": {name: round(value / total, 4) for name, value in milliseconds.items()},
        "matmul": matmul_report(matmul_shapes(events), milliseconds["matmul"], per, args.matmul_seconds),
        "top_ops": [{"category": category, "op": name, "ms": round(value, 3)}
                    for (category, name), value in by_op.most_common(args.top)],
    }
    if args.step == "decode":
        search_seconds = statistics.median(seconds)
        report.update(
            decoding_steps=args.decoding_steps, beam_size=args.beam_size, sentences=args.batch_size,
            search_wall_ms=round(1e3 * search_seconds, 2),
            decoder_calls_per_search=calls["decoder"] // (args.warmup + args.timed + args.profiled),
            decoding_steps_per_s=round(args.decoding_steps / search_seconds, 1),
            hypotheses_per_s=round(args.batch_size * args.beam_size * args.decoding_steps / search_seconds),
            sentences_per_s=round(args.batch_size / search_seconds, 1),
        )
    return report


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before torch is imported, as onmt_bench.py does
        os.environ[variable] = str(args.threads)
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(1234)
    run, calls = (beam_search if args.step == "decode" else train_update)(args)
    print(json.dumps(profile(run, args, calls), indent=2))


if __name__ == "__main__":
    main()
