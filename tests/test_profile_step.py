"""bench.profile_step and bench/peer_profile.py: the categories of real tiny traces, the matmul FLOPs, the JSON."""

import collections
import json
import subprocess

import pytest
import tensorflow as tf
from absl import app
from absl import flags
from absl.testing import flagsaver

from bench import profile_step
from bench.gemm_limits import decode_step_matmuls
from bench.model_sizes import PRESETS, forward_matmuls, matmul_flops
from bench.peer import PEER_VENV
from bench.provenance import REPO_ROOT

TINY = dict(vocab_size=40, embedding_dim=8, hidden_dim=16, maxout_dim=8, alignment_dim=12, batch_size=3,
            source_length=5, target_length=6)
PEER_PYTHON = PEER_VENV / "bin" / "python"
needs_the_peer = pytest.mark.skipif(not PEER_PYTHON.exists(), reason=f"no peer virtualenv at {PEER_VENV} "
                                    "(bash ../shared/peer/install.sh)")


def _categories_by_type(ops, step, loss_op_names=frozenset()):
    """{op type: set of the categories its ops of the trace fell in}."""
    found = {}
    for op_name, op_type, _ in ops:
        found.setdefault(op_type, set()).add(profile_step.category(op_name, op_type, step, loss_op_names))
    return found


def _milliseconds(trace, step, per=1, loss_op_names=frozenset()):
    milliseconds, _ = profile_step.categorised(trace, step, per, loss_op_names=loss_op_names)
    return milliseconds


def test_a_tiny_updates_trace_falls_into_the_categories_it_names():
    update, loss_op_names = profile_step.make_update(TINY)
    update()
    trace = profile_step.traced_ops(update, 1)
    ops, between_ops, input_pipeline = trace.ops, trace.between_ops, trace.input_pipeline
    by_type = _categories_by_type(ops, "train", loss_op_names)
    assert by_type["ResourceApplyAdam"] == {"optimizer"}
    assert by_type["TensorScatterSub"] == {"loss"}  # the loss gradient's target entries (`train_step.token_losses`)
    assert by_type["SigmoidGrad"] == by_type["Sigmoid"] == {"gated_unit"}  # only the GRUs have sigmoids
    assert {category for op_type, found in by_type.items() if "MatMul" in op_type for category in found} == {"matmul"}
    assert by_type["TensorListPushBack"] == {"loop_control"}  # what the recurrences keep for their gradient
    attention = {name for name, op_type, _ in ops
                 if profile_step.category(name, op_type, "train", loss_op_names) == "attention"}
    assert attention and all("alignment_model" in name for name in attention)
    milliseconds = _milliseconds(trace, "train", loss_op_names=loss_op_names)
    assert list(milliseconds) == list(profile_step.CATEGORIES["train"])
    assert all(milliseconds[name] > 0 for name in milliseconds)
    total_ps = sum(picoseconds for *_, picoseconds in ops) + between_ops + input_pipeline
    assert sum(milliseconds.values()) == pytest.approx(total_ps / 1e9)


def test_a_tiny_search_runs_its_steps_and_its_trace_falls_into_the_categories_it_names():
    steps = 4
    search = profile_step.make_search(TINY, beam_size=3, decoding_steps=steps)
    assert search().numpy().tolist() == [[steps]] * TINY["batch_size"]  # EOS's bias keeps every hypothesis to the bound
    trace = profile_step.traced_ops(search, 1)
    ops, between_ops, input_pipeline = trace.ops, trace.between_ops, trace.input_pipeline
    assert input_pipeline == 0
    by_type = _categories_by_type(ops, "decode")
    assert by_type["Sigmoid"] == {"gated_unit"}
    assert by_type["TopKV2"] == {"search"}
    assert {category for op_type, found in by_type.items() if "MatMul" in op_type for category in found} == {"matmul"}
    in_the_step = [op_name for op_name, *_ in ops if "/while/" in op_name and profile_step.STEP_SCOPE in op_name]
    assert in_the_step, "the loop's decoder steps carry the step's name scope"
    milliseconds = _milliseconds(trace, "decode", per=steps)
    assert list(milliseconds) == list(profile_step.CATEGORIES["decode"])
    assert all(milliseconds[name] > 0 for name in ("matmul", "gated_unit", "attention", "search", "between_ops"))
    total_ps = sum(picoseconds for *_, picoseconds in ops) + between_ops
    assert sum(milliseconds.values()) == pytest.approx(total_ps / 1e9 / steps)


@pytest.mark.parametrize("op_name, op_type, step, expected", [
    ("decoder/scan/while/body/_7/decoder/scan/while/alignment_model/v_a/Tanh", "Tanh", "train", "attention"),
    ("gradient_tape/encoder_1/forward_rnn_1/scan/while/encoder_1/forward_rnn_1/scan/while_grad/body/_9/"
     "gradient_tape/encoder_1/forward_rnn_1/scan/while/gradients/AddN_4", "AddN", "train", "gated_unit"),
    ("decoder/scan/while/cond/_3/decoder/scan/while/Less", "Less", "train", "loop_control"),
    ("cond/then/_0/cond/fused_adam/Pow_3", "Pow", "train", "optimizer"),
    ("decoder/deep_output/Maximum", "Maximum", "train", "readout"),
    ("ReduceLogSumExp/Exp", "Exp", "train", "loss"),
    ("mul_22", "Mul", "train", "other"),  # a gradient's clipping
    ("while/body/_4/while/decoder_step/Tanh", "Tanh", "decode", "gated_unit"),
    ("while/body/_4/while/decoder_step/E_1/GatherV2", "GatherV2", "decode", "other"),
    ("while/body/_4/while/decoder_step/deep_output_1/W_o_1/BiasAdd", "_MklNativeFusedMatMul", "decode", "matmul"),
    ("while/body/_4/while/Softmax", "_MklSoftmax", "decode", "search"),
    ("encode/encoder_1/backward_rnn_1/scan/while/body/_2/encode/encoder_1/backward_rnn_1/scan/while/Sigmoid",
     "Sigmoid", "decode", "gated_unit"),
])
def test_an_op_is_categorised_by_its_scope_and_type(op_name, op_type, step, expected):
    assert profile_step.category(op_name, op_type, step, loss_op_names={"ReduceLogSumExp/Exp"}) == expected


def test_a_beam_1_search_has_the_matmul_flops_of_teacher_forcing_over_its_steps():
    steps = 7
    search = matmul_flops(profile_step.search_matmuls(PRESETS["peer"], beam_size=1, decoding_steps=steps))
    assert search == matmul_flops(forward_matmuls(dict(PRESETS["peer"], target_length=steps)))


def test_each_more_decoding_step_adds_one_beam_step_of_matmuls():
    flops = [matmul_flops(profile_step.search_matmuls(TINY, beam_size=5, decoding_steps=steps)) for steps in (3, 4)]
    assert flops[1] - flops[0] == matmul_flops(decode_step_matmuls(TINY, TINY["batch_size"], beam_size=5))
    assert profile_step.update_flops(TINY) == 3 * matmul_flops(forward_matmuls(TINY))


def _main_report(**overrides):
    """The report `main` returns (as JSON, as `bench.provenance.run_report` prints and writes it) at
    `PRESETS["tiny"]`, each step called once, each product timed once, briefly."""
    flags.FLAGS.mark_as_parsed()
    try:
        with flagsaver.flagsaver(model_size="tiny", warmup_calls=1, timed_calls=1, profiled_calls=1, timing_rounds=1,
                                 seconds_per_sample=0.0001, **overrides):
            report = profile_step.main(["profile_step"])
    finally:
        flags.FLAGS.unparse_flags()
    return json.loads(json.dumps(report))


def _check_categories(report, step):
    assert list(report["categories_ms"]) == list(profile_step.CATEGORIES[step])
    assert sum(report["categories_ms"].values()) == pytest.approx(report["total_ms"], abs=0.01)
    assert sum(report["categories_share"].values()) == pytest.approx(1.0, abs=0.01)
    assert report["matmul"]["ms"] == report["categories_ms"]["matmul"]
    assert report["matmul"]["limit_gflop_per_s"] > 0 and report["profiled_wall_ms"] > 0
    matmul, wall_seconds = report["matmul"], report["wall_ms"]["median"] / 1e3
    assert matmul["wall_gflop_per_s"] == pytest.approx(matmul["flops"] / wall_seconds / 1e9, rel=0.01)
    assert matmul["wall_fraction_of_limit"] == pytest.approx(
        matmul["wall_gflop_per_s"] / matmul["limit_gflop_per_s"], rel=0.01, abs=0.002)


def test_the_update_report_has_its_fields_and_its_matmul_flops():
    report = _main_report(step=["train"])
    assert set(report) == {"train", "provenance"} and set(report["train"]) == {"ours"}
    ours = report["train"]["ours"]
    assert (ours["system"], ours["step"], ours["per"], ours["sizes"]) == ("ours", "train", "update", PRESETS["tiny"])
    _check_categories(ours, "train")
    assert ours["matmul"]["flops"] == 3 * matmul_flops(forward_matmuls(PRESETS["tiny"]))
    assert len(report["provenance"]["commit"]) == 40


def test_the_decode_report_has_its_fields_and_its_matmul_flops():
    ours = _main_report(step=["decode"], decoding_steps=3, step_beam_size=2)["decode"]["ours"]
    assert (ours["per"], ours["decoding_steps"], ours["beam_size"]) == ("decoding step", 3, 2)
    _check_categories(ours, "decode")
    searched = matmul_flops(profile_step.search_matmuls(PRESETS["tiny"], beam_size=2, decoding_steps=3))
    assert ours["matmul"]["flops"] == int(searched / 3)
    assert ours["wall_ms"]["median"] == pytest.approx(ours["search_wall_ms"] / 3, rel=0.01)
    sentences = PRESETS["tiny"]["batch_size"]
    assert ours["hypotheses_per_s"] == pytest.approx(sentences * 2 * ours["decoding_steps_per_s"], rel=0.01)



def test_a_bf16_search_multiplies_bf16_weights_and_reports_its_precision():
    steps = 3
    search = profile_step.make_search(TINY, beam_size=2, decoding_steps=steps, precision="mixed_bfloat16")
    assert search().numpy().tolist() == [[steps]] * TINY["batch_size"]
    graph = search.get_concrete_function().graph
    graphs = [graph] + [function.graph for function in graph._functions.values()]
    step_matmuls = [operation for body in graphs for operation in body.get_operations()
                    if operation.type == "MatMul" and profile_step.STEP_SCOPE in operation.name]
    assert step_matmuls and {operation.get_attr("T") for operation in step_matmuls} == {tf.bfloat16}
    weights = [operation for operation in graph.get_operations() if operation.type == "ReadVariableOp"]
    assert weights and {operation.outputs[0].dtype for operation in weights} == {tf.bfloat16}  # read as stored
    ours = _main_report(step=["decode"], decoding_steps=steps, step_beam_size=2,
                        step_precision="mixed_bfloat16")["decode"]["ours"]
    assert ours["precision"] == "mixed_bfloat16"
    _check_categories(ours, "decode")

def test_stray_arguments_and_unknown_steps_are_usage_errors():
    flags.FLAGS.mark_as_parsed()
    try:
        with pytest.raises(app.UsageError, match="unexpected arguments"):
            profile_step.main(["profile_step", "decode"])
        with flagsaver.flagsaver(step=["train", "translate"]):
            with pytest.raises(app.UsageError, match="translate"):
                profile_step.main(["profile_step"])
    finally:
        flags.FLAGS.unparse_flags()


# The peer's categorised ops of one tiny profiled update or search, from bench/peer_profile.py in the peer's
# virtualenv: [category, op name] of each, as JSON.
PEER_CATEGORISED = """
import json, sys
from bench import peer_profile
args = peer_profile.parse_args(sys.argv[1:])
run, calls = (peer_profile.beam_search if args.step == "decode" else peer_profile.train_update)(args)
run()
events, _ = peer_profile.profiled(run, 1)
print(json.dumps([(category, name) for category, name, _ in peer_profile.categorised_ops(events, args.step)]))
"""
PEER_TINY = dict(embedding_dim=8, hidden_size=16, vocab_size=40, batch_size=3, source_length=5, target_length=6)


@needs_the_peer
def test_the_peers_tiny_update_falls_into_the_categories_it_names():
    arguments = [f"--{name}={value}" for name, value in PEER_TINY.items()] + ["--step=train", "--threads=1"]
    output = subprocess.run([str(PEER_PYTHON), "-c", PEER_CATEGORISED, *arguments], cwd=REPO_ROOT, check=True,
                            capture_output=True, text=True).stdout
    categories = {}
    for category, name in json.loads(output):
        categories.setdefault(name, collections.Counter())[category] += 1
    steps = PEER_TINY["target_length"] + 2 * PEER_TINY["source_length"]  # the decoder's and both encoder directions'
    # Two gates per step, and their backward, each in its GRU; the tree of a short op can break (microsecond
    # times), so that its node is found by time, which this checks too.
    assert categories["aten::sigmoid_"] == categories["aten::sigmoid_backward"] == {"gated_unit": 2 * steps}
    assert categories["aten::_softmax"] == {"attention": PEER_TINY["target_length"]}
    assert categories["aten::_softmax_backward_data"] == {"attention": PEER_TINY["target_length"]}
    assert set(categories["aten::_log_softmax"]) == set(categories["aten::nll_loss_forward"]) == {"loss"}
    assert set(categories["aten::addcdiv_"]) == {"optimizer"}  # Adam
    assert set(categories["aten::mm"]) == set(categories["aten::addmm"]) == set(categories["aten::bmm"]) == {"matmul"}


def _peer_decode_flops(embedding, hidden, vocab, batch, source_length, beam, steps):
    """OpenNMT-py's matmul FLOPs of one search, counted by hand: its encoder once per sentence, then every step
    of `batch * beam` rows computes the GRU cell (input feeding), the "mlp" attention (the keys W h of every
    source position again) and the generator."""
    half, rows = hidden // 2, batch * beam
    encoder = 2 * 2 * batch * source_length * (embedding * 3 * half + half * 3 * half)  # 2 directions
    step = 2 * rows * ((embedding + hidden) * 3 * hidden + hidden * 3 * hidden  # the GRU cell
                       + hidden * hidden + source_length * hidden * hidden  # query W s, keys W h_j
                       + source_length * hidden + source_length * hidden  # v tanh(.), the context
                       + 2 * hidden * hidden + hidden * vocab)  # W [c; s], the generator
    return encoder + steps * step


@needs_the_peer
def test_the_peers_search_report_has_our_categories_and_its_counted_flops():
    settings = dict(TINY, beam_size=2, decoding_steps=3)
    report = profile_step.peer_report("decode", settings, calls=1, profiled=1, warmup=1, top=3)
    assert (report["system"], report["per"], report["decoder_calls_per_search"]) == ("peer", "decoding step", 3)
    assert len(report["top_ops"]) == 3 and report["profiled_wall_ms"] > 0
    assert report["wall_ms"]["median"] == pytest.approx(report["search_wall_ms"] / 3, rel=0.01)
    assert list(report["categories_ms"]) == list(profile_step.CATEGORIES["decode"])
    assert sum(report["categories_ms"].values()) == pytest.approx(report["total_ms"], abs=0.01)
    assert all(report["categories_ms"][name] > 0 for name in ("matmul", "gated_unit", "attention", "search"))
    flops = _peer_decode_flops(TINY["embedding_dim"], TINY["hidden_dim"], TINY["vocab_size"], TINY["batch_size"],
                               TINY["source_length"], beam=2, steps=3)
    assert report["matmul"]["flops"] == round(flops / 3)
    hypotheses_per_s = TINY["batch_size"] * 2 * report["decoding_steps_per_s"]
    assert report["hypotheses_per_s"] == pytest.approx(hypotheses_per_s, rel=0.01)
