"""serving/export.py: the SavedModel (layout, ops TF Serving has, every signature reloaded in a fresh process; bf16
and int8 weights) and the `rnnsearch export` command (`rnnsearch export`)."""

import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import prediction_log_pb2

from data_pipeline.export_dir import ExportDir, ExportVersion, graph_ops
from rnnsearch_tf.inference.translator import Translator
from serving import export
from helpers.serving_test_utils import (BAD_SENTENCES, INVALID_UTF8, SEARCH_OPTIONS, SENTENCES, assert_outputs_equal,
                                        exported_model)
from helpers.trained_toy_model import dev_pairs, translated
from helpers.trained_toy_model import exported as trained_toy_model_export
from helpers import preimported

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIGNATURES = ("serving_default", "translate", "translate_prefix", "translate_constrained", "translate_ids", "score",
              "settings")
SOURCE_IDS = np.array([[4, 6, 9, 0], [7, 0, 0, 0], [0, 0, 0, 0]], np.int32)


def signature_inputs():
    text = np.array([s.encode("utf-8") for s in SENTENCES + BAD_SENTENCES] + [INVALID_UTF8], dtype=object)
    targets = np.array([b"le chat voit", b"", b"la la", b"une maison"] + [b"chat"] * (len(text) - 4), dtype=object)
    prefixes = np.array([b"le chat", b"", b"zyzzyva", b"la <unk> la"] + [b""] * (len(text) - 4), dtype=object)
    return {
        "serving_default": {"text": text},
        "translate": {"text": text},
        "translate_prefix": {"text": text, "prefix": prefixes},
        "translate_constrained": {"text": text, "constraints": np.stack([prefixes, targets], axis=1)},
        "translate_ids": {"source_ids": SOURCE_IDS},
        "score": {"source": text, "target": targets},
        "settings": {},
    }


# Runs in a fresh interpreter: the registry of a plain `import tensorflow` (no tensorflow_text), then the
# SavedModel loaded and every signature called.
_FRESH_PROCESS = textwrap.dedent(
    """
    import pickle, sys
    import tensorflow as tf
    from tensorflow.core.framework import op_def_pb2
    from tensorflow.python.client import pywrap_tf_session
    op_list = op_def_pb2.OpList()
    op_list.ParseFromString(pywrap_tf_session.TF_GetBuffer(pywrap_tf_session.TF_GetAllOpList()))
    registered = sorted(op.name for op in op_list.op)
    assert "tensorflow_text" not in sys.modules
    path, inputs_file, outputs_file = sys.argv[1:]
    with open(inputs_file, "rb") as stream:
        inputs = pickle.load(stream)
    loaded = tf.saved_model.load(path)
    outputs = {
        name: {key: value.numpy() for key, value in loaded.signatures[name](**{
            key: tf.constant(value) for key, value in arguments.items()}).items()}
        for name, arguments in inputs.items()
    }
    with open(outputs_file, "wb") as stream:
        pickle.dump({"registered_ops": registered, "signatures": sorted(loaded.signatures), "outputs": outputs}, stream)
    """
)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    return exported_model(tmp_path_factory)


@pytest.fixture(scope="module")
def fresh_process(exported, tmp_path_factory):
    _, _, version_path = exported
    folder = tmp_path_factory.mktemp("fresh")
    with open(folder / "inputs.pkl", "wb") as stream:
        pickle.dump(signature_inputs(), stream)
    subprocess.run(
        [sys.executable, "-c", _FRESH_PROCESS, version_path, str(folder / "inputs.pkl"), str(folder / "outputs.pkl")],
        check=True,
        cwd=folder,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
        timeout=300,
    )
    with open(folder / "outputs.pkl", "rb") as stream:
        return pickle.load(stream)


def test_layout_and_settings(exported):
    model_dir, export_dir, version_path = exported
    assert version_path == os.path.join(export_dir, "1")
    assert sorted(os.listdir(export_dir)) == ["1", "batching_parameters.txt"]
    assert sorted(os.listdir(os.path.join(version_path, "assets"))) == ["source_vocab.tsv", "target_vocab.tsv"]
    assert sorted(os.listdir(os.path.join(version_path, "assets.extra"))) == [
        "export_settings.json", "tf_serving_warmup_requests"]
    with open(os.path.join(version_path, "assets.extra", "export_settings.json")) as stream:
        settings = json.load(stream)
    for name, value in SEARCH_OPTIONS.items():
        assert settings[name] == value
    assert settings["version"] == 1 and "checkpoints" in settings["checkpoint"] and settings["precision"] == "float32"
    assert (settings["source_language"], settings["target_language"]) == ("en", "fr")


def test_the_warm_up_requests_call_every_signature_but_settings(exported):
    """A signature's first call instantiates its graph (seconds): a server replays these before it serves, and
    `serving_default` is a graph of its own beside `translate`."""
    _, _, version_path = exported
    loaded = tf.saved_model.load(version_path)
    records = tf.data.TFRecordDataset(os.path.join(version_path, "assets.extra", "tf_serving_warmup_requests"))
    called = [prediction_log_pb2.PredictionLog.FromString(record).predict_log.request.model_spec.signature_name
              for record in records.as_numpy_iterator()]
    assert sorted(set(called)) == sorted(set(loaded.signatures) - {"settings"}) and len(called) == 7
    assert called[:2] == ["translate", "translate"]  # one sentence, then a batch


# large: TensorFlow's saved_model_cli in a fresh process; the default suite reads the settings signature of the
# export in a fresh process (test_fresh_process_signatures_equal_the_python_path)
@pytest.mark.large
def test_saved_model_cli_shows_the_search_settings(exported):
    _, _, version_path = exported
    shown = subprocess.run(
        [sys.executable, "-m", "tensorflow.python.tools.saved_model_cli", "show", "--all", "--dir", version_path],
        check=True, capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), timeout=300,
    ).stdout
    settings = shown[shown.index("Function Name: 'export_settings'"):]
    for name, value in SEARCH_OPTIONS.items():
        assert f"{name}={value}" in settings, (name, settings[:2000])
    assert "signature_def['settings']" in shown
    assert "signature_def['translate_prefix']" in shown


# An export of its own: `large`. The default suite exports a searching translator with every signature (above) and
# samples in-process (tests/test_sentence_search.py, tests/test_search_config.py)
@pytest.mark.large
def test_a_sampling_export_has_no_constrained_signature_and_warms_up_its_own(exported, tmp_path):
    """Sampling draws, it does not search: an export of a sampling translator is saved without
    `translate_constrained` (and its warm-up requests), and its settings say it samples."""
    translator = Translator.from_model_dir(exported[0], sampling=True, num_samples=2, beam_size=1,
                                           maximum_source_length=12)
    version_path = export.export(translator, str(tmp_path / "exports"))
    loaded = ExportVersion(version_path).load()
    assert sorted(loaded.signatures) == sorted(set(SIGNATURES) - {"translate_constrained"})
    settings = loaded.signatures["settings"]()
    assert (bool(settings["sampling"]), int(settings["num_samples"])) == (True, 2)
    records = tf.data.TFRecordDataset(ExportVersion(version_path).warmup_file).as_numpy_iterator()
    called = [prediction_log_pb2.PredictionLog.FromString(record).predict_log.request.model_spec.signature_name
              for record in records]
    assert sorted(set(called)) == sorted(set(loaded.signatures) - {"settings"})
    outputs = loaded.signatures["translate"](text=tf.constant(SENTENCES))
    assert outputs["nbest_translations"].shape == (len(SENTENCES), 2)
    unconstrained = translator.translate_constrained(tf.constant(SENTENCES), tf.constant([[""]] * len(SENTENCES)))
    assert_outputs_equal({key: value for key, value in unconstrained.items() if not key.startswith("constraints_")},
                         translator.translate(tf.constant(SENTENCES)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="sampling draws, it does not search"):
        translator.translate_constrained(tf.constant(SENTENCES[:1]), tf.constant([["chat"]]))


def test_next_version_is_one_more_than_the_newest(tmp_path):
    assert export.next_version(str(tmp_path / "missing")) == 1
    for name in ("1", "7", "9", "notes", ".incomplete-12"):
        (tmp_path / name).mkdir()
    for name in ("1", "7", "9"):
        (tmp_path / name / "saved_model.pb").touch()
    for name in ("1", "7"):
        (tmp_path / name / "variables").mkdir()
        (tmp_path / name / "variables" / "variables.index").touch()
    assert export.next_version(str(tmp_path)) == 8  # the servers' rule: 9 has no variables/ (a copy under way)
    assert export.new_version(str(tmp_path)) == 8 and export.new_version(str(tmp_path), 0) == 0
    with pytest.raises(FileExistsError, match="versions are never overwritten"):
        export.new_version(str(tmp_path), 7)
    with pytest.raises(ValueError, match="version -1: versions are integers from 0"):  # no server would load it
        export.new_version(str(tmp_path), -1)


def test_an_export_folder_that_is_a_file_is_refused_in_one_line_before_the_model_is_read(tmp_path):
    (tmp_path / "notes.txt").write_text("not a folder\n")
    with pytest.raises(NotADirectoryError, match=f"^{tmp_path / 'notes.txt'} is a file, not a folder"):
        export.new_version(str(tmp_path / "notes.txt"))
    under_it = tmp_path / "notes.txt" / "a"
    with pytest.raises(NotADirectoryError, match=f"^{under_it}: {tmp_path / 'notes.txt'} is a file"):
        export.new_version(under_it)
    refused = preimported.run(
        [sys.executable, "-m", "rnnsearch_tf.cli.main", "export", f"--model_dir={tmp_path / 'no_model'}",
         f"--export_dir={tmp_path / 'notes.txt'}"],
        cwd=REPO_ROOT, capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), timeout=300)
    assert refused.returncode == 1 and refused.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'notes.txt'} is a file, not a folder (an export folder holds versions)"]


def _saved_model_ops(version_path):
    saved_model = ExportVersion(version_path).read_saved_model()
    function_names = {
        function.signature.name for meta_graph in saved_model.meta_graphs for function in meta_graph.graph_def.library.function
    }
    return graph_ops(saved_model) - function_names  # a call of a library function: a node of the function's name


def test_every_op_is_a_core_tensorflow_op(exported, fresh_process):
    ops = _saved_model_ops(exported[2])
    assert {"StaticRegexReplace", "LookupTableFindV2", "While", "TopKV2"} <= ops  # the walk saw the functions' bodies
    not_core = sorted(ops - set(fresh_process["registered_ops"]))
    assert not not_core, f"ops TF Serving does not link: {not_core}"


def test_fresh_process_signatures_equal_the_python_path(fresh_process, exported_translator):
    assert fresh_process["signatures"] == sorted(SIGNATURES)
    translator = exported_translator
    inputs = signature_inputs()
    expected = {
        "translate": translator.translate(**inputs["translate"]),
        "translate_prefix": translator.translate_prefix(**inputs["translate_prefix"]),
        "translate_constrained": translator.translate_constrained(**inputs["translate_constrained"]),
        "translate_ids": translator.translate_ids(**inputs["translate_ids"]),
        "score": translator.score(**inputs["score"]),
    }
    expected["serving_default"] = expected["translate"]
    for name, outputs in expected.items():
        assert_outputs_equal(fresh_process["outputs"][name], outputs, name)
    settings = fresh_process["outputs"]["settings"]
    assert settings["beam_size"] == SEARCH_OPTIONS["beam_size"] and settings["forbid_unk"]
    assert settings["length_normalization"] == b"none" and settings["version"] == 1


def _weight_bytes(version_path):
    """{dtype name: bytes} of an export's weights in its variables' data file, the object graph's bytes left out."""
    prefix = os.path.join(version_path, "variables", "variables")
    reader = tf.train.load_checkpoint(prefix)
    weights = {name: dtype for name, dtype in reader.get_variable_to_dtype_map().items() if dtype != tf.string}
    data_bytes = sum(os.path.getsize(path) for path in tf.io.gfile.glob(f"{prefix}.data-*"))
    object_graph = reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH")
    return {dtype.name for dtype in weights.values()}, data_bytes - len(object_graph)


# large: a second export of the tiny model (~25 s); the default suite runs its parts: a DecodingModel's stored weights
# exported and served (the tiny int8 export below), bf16 weights translating as float32 ones cast at every step
# (tests/test_translator.py), and the export's settings signature (above)
@pytest.mark.large
def test_a_bf16_export_holds_its_weights_in_half_the_bytes_and_translates_as_its_translator(exported, tmp_path):
    model_dir, _, float32_path = exported
    translator = Translator.from_model_dir(model_dir, precision="mixed_bfloat16", **SEARCH_OPTIONS)
    version_path = export.export(translator, str(tmp_path / "exports"))
    (bf16_dtypes, bf16_bytes), (float32_dtypes, float32_bytes) = map(_weight_bytes, (version_path, float32_path))
    assert (bf16_dtypes, float32_dtypes) == ({"bfloat16"}, {"float32"})
    assert bf16_bytes / float32_bytes == pytest.approx(0.5, abs=0.01)
    loaded = ExportVersion(version_path).load()
    assert loaded.signatures["settings"]()["precision"].numpy() == b"bfloat16"
    inputs = signature_inputs()
    for name in ("translate", "translate_ids", "score"):
        served = loaded.signatures[name](**{key: tf.constant(value) for key, value in inputs[name].items()})
        assert_outputs_equal({key: value.numpy() for key, value in served.items()},
                             getattr(translator, name)(**inputs[name]), name)


def _saved_variables(version_path):
    """{name: (dtype, shape)} of an export's saved weights (the object graph left out)."""
    reader = tf.train.load_checkpoint(os.path.join(version_path, "variables", "variables"))
    shapes = reader.get_variable_to_shape_map()
    return {name: (dtype, tuple(shapes[name])) for name, dtype in reader.get_variable_to_dtype_map().items()
            if dtype != tf.string}


# large: an export of its own (23 s); the default suite translates with int8 weights in-process
# (tests/test_quantization.py, tests/test_decoding_model.py) and checks the export's float32 signatures here
@pytest.mark.large
def test_an_int8_export_saves_int8_matrices_only_and_translates_as_its_translator(exported, fresh_process, tmp_path):
    model_dir, _, float32_path = exported
    translator = Translator.from_model_dir(model_dir, quantize="int8", **SEARCH_OPTIONS)
    version_path = export.export(translator, str(tmp_path / "exports"))
    saved, float32_saved = _saved_variables(version_path), _saved_variables(float32_path)
    matrices = sorted(shape for dtype, shape in float32_saved.values() if len(shape) == 2)
    assert sorted(shape for dtype, shape in saved.values() if dtype == tf.int8) == matrices
    floats = [shape for dtype, shape in saved.values() if dtype == tf.float32]
    assert floats and all(min(shape) == 1 for shape in floats if len(shape) == 2)  # vectors and per-channel scales
    assert not any(dtype == tf.float32 and shape in matrices for dtype, shape in saved.values())
    with open(ExportDir(tmp_path / "exports").version(1).settings_file) as stream:
        assert (json.load(stream)["quantize"], translator.recorded_settings(1)["quantize"]) == ("int8", "int8")
    not_core = sorted(_saved_model_ops(version_path) - set(fresh_process["registered_ops"]))
    assert not not_core, f"ops TF Serving does not link: {not_core}"
    loaded = ExportVersion(version_path).load()
    assert loaded.signatures["settings"]()["quantize"].numpy() == b"int8"
    inputs = signature_inputs()
    for name in ("translate", "translate_ids", "score"):
        served = loaded.signatures[name](**{key: tf.constant(value) for key, value in inputs[name].items()})
        assert_outputs_equal({key: value.numpy() for key, value in served.items()},
                             getattr(translator, name)(**inputs[name]), name)


def _variables_bytes(version_path):
    folder = os.path.join(version_path, "variables")
    return sum(os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder))


# large: a model trained for the purpose (tests/helpers/trained_toy_model.py) and fresh processes; the parts run in
# the default suite (tests/test_decoding_model.py, the tiny int8 export in tests/test_export.py)
@pytest.mark.large
def test_the_int8_export_of_a_trained_model_is_under_half_the_bytes_and_translates_as_the_command(
        trained_toy_model, toy_data, tmp_path_factory, tmp_path):
    version = ExportDir(trained_toy_model_export(tmp_path_factory, trained_toy_model, "int8")).newest_version()
    float32_path = export.export(Translator.from_model_dir(trained_toy_model, beam_size=2), str(tmp_path / "float32"))
    assert _variables_bytes(version.path) <= 0.5 * _variables_bytes(float32_path)  # 0.36 when written
    with open(version.settings_file) as stream:
        assert json.load(stream)["quantize"] == "int8"
    loaded = tf.saved_model.load(version.path)
    sources, _ = dev_pairs(toy_data)
    served = loaded.signatures["translate"](text=tf.constant(sources))["translation"].numpy()
    by_command = translated(tmp_path_factory, trained_toy_model, toy_data, "int8")  # rnnsearch translate --quantize
    assert [text.decode("utf-8") for text in served] == [record["translation"] for record in by_command]


# large: two fresh `export` processes; the default suite exports through the command (tests/helpers/other_languages.py,
# tests/test_errors.py) and numbers versions in-process (above)
@pytest.mark.large
def test_the_command_exports_the_next_version_with_its_search_flags(exported, tmp_path):
    model_dir, fixture_export_dir, _ = exported
    export_dir = tmp_path / "exports"
    shutil.copytree(fixture_export_dir, export_dir)  # version 1, written by `export.export`

    def run_export(*args):
        return preimported.run(
            [sys.executable, "-m", "rnnsearch_tf.cli.main", "export", f"--export_dir={export_dir}", "--beam_size=2",
             "--maximum_source_length=12", *args],
            cwd=REPO_ROOT, capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), timeout=300,
        )

    completed = run_export(f"--model_dir={model_dir}")
    assert completed.returncode == 0, completed.stderr[-3000:]
    checkpoint = os.path.join(model_dir, "checkpoints", "ckpt-1")
    assert completed.stdout == f"exported {checkpoint} to {export_dir / '2'}\n"
    with open(ExportDir(export_dir).version(2).settings_file) as stream:
        settings = json.load(stream)
    assert (settings["version"], settings["beam_size"], settings["maximum_source_length"]) == (2, 2, 12)
    # Refused before the model is read: the model directory named here does not exist.
    refused = run_export(f"--model_dir={tmp_path / 'no_model'}", "--version=1")
    assert refused.returncode != 0
    assert f"{export_dir / '1'} exists: versions are never overwritten, pick another --version" in refused.stderr
    assert sorted(os.listdir(export_dir)) == ["1", "2", "batching_parameters.txt"]


def test_export_help_lists_its_flags_and_the_search_flags():
    shown = preimported.run([sys.executable, "-m", "rnnsearch_tf.cli.main", "export", "--helpshort"], cwd=REPO_ROOT,
                            capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
                            timeout=300).stdout
    listed = {line.split(":")[0].strip() for line in shown.splitlines() if line.startswith("  --")}
    assert {"--export_dir", "--model_dir", "--batch_size", "--beam_size", "--maximum_source_length"} <= listed, listed
