"""rnnsearch_tf/inference/decoding_model.py: a model decoding from int8 (or bf16) stored weights computes what the
paper's equations compute with those weights (a NumPy transcription), the widening runs once per call outside the
search's loop, and only the stored form is tracked."""

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.constants import BOS_ID
from helpers import numpy_reference
from helpers.model_test_utils import padded_batch, randomize_weights, small_config
from helpers.serving_test_utils import SEARCH_OPTIONS
from rnnsearch_tf import RNNEncDec, RNNSearch
from rnnsearch_tf.inference.decoding_model import DecodingModel, reading_stored_weights
from rnnsearch_tf.inference.translator import Translator
from rnnsearch_tf.models.ensemble import Ensemble

REFERENCES = {RNNSearch: numpy_reference.rnnsearch_log_probs, RNNEncDec: numpy_reference.rnnencdec_log_probs}


def int8_reference(weights):
    """The paper's weights as int8 stores them, written out channel by channel: each column of a `[in, out]` matrix
    (an output unit) and each row of an embedding table (E, E_src: a word) scaled by max|w| / 127 and rounded."""
    stored = {}
    for name, value in weights.items():
        if value.ndim != 2:
            stored[name] = value  # biases and v_a are not quantized
            continue
        channels = value if name.startswith("E") else value.T  # one channel per row
        rows = []
        for channel in channels:
            scale = np.float32(np.abs(channel).max() / 127)
            rows.append(np.round(channel / scale) * scale if scale > 0 else np.zeros_like(channel))
        stored[name] = np.array(rows, np.float32) if name.startswith("E") else np.array(rows, np.float32).T
    return stored


def random_model(model_class, seed):
    model = model_class(small_config())
    randomize_weights(model, seed=seed)
    return model


@pytest.mark.parametrize("model_class", [RNNSearch, RNNEncDec])
def test_int8_log_probs_and_one_step_match_the_numpy_transcription_with_int8_weights(model_class):
    model = random_model(model_class, seed=5)
    decoding = DecodingModel(model, quantize="int8")
    sources, targets, source_ids, target_ids = padded_batch()
    with reading_stored_weights(decoding):
        log_probs = decoding.token_log_probs(source_ids, target_ids).numpy()
        logits, _, _ = decoding.symbols_to_logits_fn(tf.fill([len(sources)], BOS_ID), 0, decoding.encode(source_ids))
    first_step = tf.nn.log_softmax(logits).numpy()  # [batch, K_y]
    weights = model.paper_weights()
    quantized = int8_reference(weights)
    for index, (source, target) in enumerate(zip(sources, targets)):
        expected, _ = REFERENCES[model_class](quantized, source, target)
        np.testing.assert_allclose(log_probs[index, : len(target)], expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(first_step[index, target[0]], expected[0], rtol=1e-5, atol=1e-5)
        unquantized, _ = REFERENCES[model_class](weights, source, target)
        assert np.abs(expected - unquantized).max() > 1e-4  # the int8 weights really were read


def test_int8_holds_every_matrix_in_int8_and_the_rest_as_trained():
    model = random_model(RNNSearch, seed=6)
    decoding = DecodingModel(model, quantize="int8")
    paths = {weight.path.split("/", 1)[1]: weight for weight in model.weights}
    matrices = {path for path, weight in paths.items() if len(weight.shape) == 2}
    assert set(decoding.stored) == set(decoding.scales) == matrices
    assert {variable.dtype for variable in decoding.stored.values()} == {tf.int8}
    assert decoding.scales["decoder/E/embeddings"].shape == (small_config().target_vocab_size, 1)  # one per word
    assert decoding.scales["decoder/deep_output/W_o/kernel"].shape == (1, small_config().target_vocab_size)
    assert {path: id(weight) for path, weight in decoding.kept.items()} == {
        path: id(weight) for path, weight in paths.items() if path not in matrices}  # the model's own variables
    assert (decoding.dtype_policy.name, decoding.quantize) == ("float32", "int8")


def test_bf16_holds_every_weight_rounded_to_bf16_once():
    model = RNNSearch(small_config(precision="mixed_bfloat16"))
    randomize_weights(model, seed=7)
    decoding = DecodingModel(model)
    assert decoding.dtype_policy.name == "bfloat16" and not decoding.kept and not decoding.scales
    for weight in model.weights:
        stored = decoding.stored[weight.path.split("/", 1)[1]]
        assert stored.dtype == tf.bfloat16
        np.testing.assert_array_equal(stored.numpy(), tf.cast(weight, tf.bfloat16).numpy())


def test_an_ensemble_reads_every_members_stored_weights_in_one_scope():
    members = [random_model(RNNSearch, seed=8), random_model(RNNEncDec, seed=9)]
    widened = []  # float32 models holding the members' int8 weights, widened
    for member in members:
        copy = type(member)(member.config)
        copy.set_weights(member.get_weights())
        values = {id(weight): value for weight, value in DecodingModel(member, quantize="int8").stored_values()}
        for weight, original in zip(copy.weights, member.weights):
            if id(original) in values:
                weight.assign(values[id(original)])
        widened.append(copy)
    ensemble = Ensemble([DecodingModel(member, quantize="int8") for member in members])
    _, _, source_ids, target_ids = padded_batch()
    with reading_stored_weights(ensemble):
        log_probs = ensemble.token_log_probs(source_ids, target_ids).numpy()
    np.testing.assert_allclose(log_probs, Ensemble(widened).token_log_probs(source_ids, target_ids), atol=1e-6)


def test_outside_its_scope_or_in_a_nested_one_a_decoding_model_refuses_to_decode():
    decoding = DecodingModel(random_model(RNNSearch, seed=10), quantize="int8")
    _, _, source_ids, _ = padded_batch()
    with pytest.raises(RuntimeError, match=r"decodes inside `reading_stored_weights\(model\)` only"):
        decoding.encode(source_ids)  # it would read the model's float32 weights
    with reading_stored_weights(decoding):
        with pytest.raises(RuntimeError, match="entered once per call, not nested"):
            with reading_stored_weights(decoding):
                pass
    with pytest.raises(ValueError, match="quantize must be one of"):
        DecodingModel(random_model(RNNSearch, seed=10), quantize="int4")


def _int8_casts(nodes):
    return sum(node.op == "Cast" and node.attr["SrcT"].type == tf.int8.as_datatype_enum for node in nodes)


def _called(nodes):
    """Names of the functions `nodes` call: their ops and their `func` attributes (a loop's body, a cond's branch)."""
    names = set()
    for node in nodes:
        names.add(node.op)
        for value in node.attr.values():
            names.update([value.func.name] if value.HasField("func") else [])
            names.update(function.name for function in value.list.func)
    return names


def test_the_widening_runs_once_outside_the_search_loop_and_no_float32_matrix_is_captured(tiny_model_dirs):
    translator = Translator.from_model_dir(tiny_model_dirs["rnnsearch"], quantize="int8", **SEARCH_OPTIONS)
    decoding = translator.model
    concrete = translator.translate_ids.get_concrete_function()
    graph = concrete.graph.as_graph_def()
    functions = {function.signature.name: function for function in graph.library.function}
    nodes = [*graph.node, *(node for function in functions.values() for node in function.node_def)]
    loop_bodies = {node.attr["body"].func.name for node in nodes if node.op in ("While", "StatelessWhile")}
    inside, frontier = set(), set(loop_bodies)
    while frontier:  # every function a loop body runs, nested loops and branches included
        name = frontier.pop()
        inside.add(name)
        frontier |= {called for called in _called(functions[name].node_def) if called in functions} - inside
    assert loop_bodies and not any(_int8_casts(functions[name].node_def) for name in inside)
    outside = _int8_casts(graph.node) + sum(
        _int8_casts(function.node_def) for name, function in functions.items() if name not in inside)
    assert outside == len(decoding.stored) == 19  # each int8 matrix widened once per call
    captured = {id(tensor) for tensor in concrete.captured_inputs}
    assert all(id(variable.handle) in captured for variable in decoding.stored.values())
    float32_matrices = [weight for weight in decoding.model.weights if len(weight.shape) == 2]
    assert not any(id(weight.value.handle) in captured for weight in float32_matrices)
    tracked = {id(trackable) for trackable in tf.train.TrackableView(translator).descendants()}
    assert all(id(variable) in tracked for variable in decoding.stored.values())
    assert not any({id(weight), id(weight.value)} & tracked for weight in float32_matrices)  # saved: int8 only
