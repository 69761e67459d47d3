"""FunctionCache (`rnnsearch_tf.utils.function_cache`): a traced function written once and loaded by later
callers with their own weights; what does not fit is traced again; and through `rnnsearch translate`,
a changed checkpoint translates as without the cache."""

import base64
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.translator import Translator
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.utils import function_cache
from rnnsearch_tf.utils.function_cache import FunctionCache
from helpers.serving_test_utils import SEARCH_OPTIONS, SENTENCES
from helpers.translation_test_data import INPUT, PREFIXES, translation_model_dir, write_model_dir
from helpers import preimported


class Scaler(tf.Module):
    """Words -> ids (a lookup table) -> ids * weight + offset (a variable and a captured constant)."""

    def __init__(self, weight, size=3):
        super().__init__()
        self.weight = tf.Variable(tf.fill([size], float(weight)))
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64)), -1
        )
        self.offset = tf.constant(0.5)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="words")], autograph=False)
    def scale(self, words):
        ids = tf.cast(self.table.lookup(words), tf.float32)  # [words]
        return {"ids": ids, "scaled": ids[:, None] * self.weight[None, :] + self.offset}  # [words, size]


WORDS = tf.constant(["a", "b", "c"])


def expected(weight, size=3):
    ids = np.array([1.0, 2.0, -1.0], np.float32)
    return ids[:, None] * np.full([size], weight, np.float32)[None, :] + 0.5


def test_a_function_is_written_once_and_loaded_with_the_callers_weights(tmp_path):
    first = Scaler(2.0)
    traced = FunctionCache(tmp_path).function(first, "scale", {"size": 3})
    np.testing.assert_allclose(traced(words=WORDS)["scaled"], expected(2.0))
    files = list(tmp_path.glob("scale-*.json"))
    assert len(files) == 1
    second = Scaler(3.0)
    loaded = FunctionCache(tmp_path).function(second, "scale", {"size": 3})
    assert second.scale.experimental_get_tracing_count() == 0  # loaded, not traced
    assert loaded.name == traced.name and loaded.name.endswith(files[0].stem.split("-")[1])  # named by the key
    np.testing.assert_allclose(loaded(words=WORDS)["scaled"], expected(3.0))
    second.weight.assign(tf.fill([3], 5.0))  # weights are inputs, never part of the file
    np.testing.assert_allclose(loaded(words=WORDS)["scaled"], expected(5.0))
    np.testing.assert_array_equal(loaded(words=WORDS)["ids"], [1.0, 2.0, -1.0])
    assert list(tmp_path.glob("*.json")) == files


def test_another_fingerprint_or_code_is_another_file(tmp_path, monkeypatch):
    cache = FunctionCache(tmp_path)
    cache.function(Scaler(1.0), "scale", {"size": 3})
    cache.function(Scaler(1.0), "scale", {"size": 3, "other": 1})
    assert len(list(tmp_path.glob("*.json"))) == 2
    monkeypatch.setattr(function_cache, "code_digest", lambda: "other code")
    assert not cache.path("scale", {"size": 3}).exists()


def test_a_file_that_does_not_fit_is_traced_again(tmp_path):
    cache = FunctionCache(tmp_path)
    cache.function(Scaler(1.0), "scale", {"size": 3})
    wider = Scaler(4.0, size=5)  # as if the fingerprint had missed the size: the variable's shape differs
    function = cache.function(wider, "scale", {"size": 3})
    assert wider.scale.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(function(words=WORDS)["scaled"], expected(4.0, size=5))
    path = cache.path("scale", {"size": 3})
    path.write_text("{not json")
    again = Scaler(2.0)
    np.testing.assert_allclose(cache.function(again, "scale", {"size": 3})(words=WORDS)["scaled"], expected(2.0))
    assert again.scale.experimental_get_tracing_count() == 1
    record = json.loads(path.read_text())
    assert record["inputs"] == ["words"]  # written again
    path.write_text(json.dumps(dict(record, library=base64.b64encode(b"\x0a\xff not a library").decode())))
    broken = Scaler(6.0)
    np.testing.assert_allclose(cache.function(broken, "scale", {"size": 3})(words=WORDS)["scaled"], expected(6.0))
    assert broken.scale.experimental_get_tracing_count() == 1


def test_a_folder_that_cannot_be_written_only_means_tracing(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder should be")
    function = FunctionCache(blocked / "functions").function(Scaler(2.0), "scale", {})
    np.testing.assert_allclose(function(words=WORDS)["scaled"], expected(2.0))


def test_a_write_that_fails_leaves_nothing_behind(tmp_path, monkeypatch):
    def disk_full(record, stream):
        stream.write("{")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(function_cache.json, "dump", disk_full)
    function = FunctionCache(tmp_path).function(Scaler(2.0), "scale", {})
    np.testing.assert_allclose(function(words=WORDS)["scaled"], expected(2.0))
    assert list(tmp_path.iterdir()) == []


def test_the_newest_files_are_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(function_cache, "KEPT_FILES", 2)
    cache = FunctionCache(tmp_path)
    for size in (1, 2, 3):
        cache.function(Scaler(1.0, size), "scale", {"size": size})
    assert sorted(tmp_path.glob("*.json")) == sorted([cache.path("scale", {"size": 2}), cache.path("scale", {"size": 3})])


def test_wrong_inputs_are_refused(tmp_path):
    function = FunctionCache(tmp_path).function(Scaler(1.0), "scale", {})
    with pytest.raises(TypeError, match="takes inputs \\['words'\\]"):
        function(text=WORDS)


def test_the_graph_used_last_under_a_hint_is_warmed_up_with_stand_ins(tmp_path):
    cache = FunctionCache(tmp_path)
    assert cache.warm_up(["model", "beam 3"]) is None  # nothing used under it yet
    cache.function(Scaler(2.0), "scale", {"size": 3}, ["model", "beam 3"])
    path = cache.path("scale", {"size": 3})
    assert json.loads(cache.hint_path(["model", "beam 3"]).read_text()) == {"file": path.name}
    assert cache.hint_path(["model", "beam 3"]).parent == tmp_path / function_cache.HINTS
    later = FunctionCache(tmp_path)  # the next process's
    assert later.warm_up(["model", "beam 4"]) is None
    warm_up = later.warm_up(["model", "beam 3"])
    warm_up.join()
    assert warm_up.path == path
    assert warm_up.outcome == "FailedPreconditionError"  # its table and variable stand-ins hold no values
    second = Scaler(3.0)
    np.testing.assert_allclose(later.function(second, "scale", {"size": 3}, ["model", "beam 3"])(words=WORDS)["scaled"],
                               expected(3.0))
    assert second.scale.experimental_get_tracing_count() == 0


def test_a_warm_up_that_cannot_be_done_is_skipped_and_logged_never_raised(tmp_path):
    cache = FunctionCache(tmp_path)
    cache.function(Scaler(2.0), "scale", {}, "hint")
    path = cache.path("scale", {})
    record = json.loads(path.read_text())
    path.write_text(json.dumps(dict(record, library=base64.b64encode(b"\x0a\xff not a library").decode())))
    warm_up = cache.warm_up("hint")
    warm_up.join()
    assert warm_up.outcome.startswith("not warmed up: DecodeError")
    path.unlink()
    assert cache.warm_up("hint") is None  # the file it named is gone
    cache.hint_path("hint").write_text("{not json")
    assert cache.warm_up("hint") is None
    function = cache.function(Scaler(2.0), "scale", {}, "hint")  # traced again, and remembered again
    np.testing.assert_allclose(function(words=WORDS)["scaled"], expected(2.0))
    assert json.loads(cache.hint_path("hint").read_text()) == {"file": path.name}


def test_a_hint_that_cannot_be_kept_only_means_no_warm_up(tmp_path):
    (tmp_path / function_cache.HINTS).write_text("a file where the folder should be")
    cache = FunctionCache(tmp_path)
    function = cache.function(Scaler(2.0), "scale", {}, "hint")
    np.testing.assert_allclose(function(words=WORDS)["scaled"], expected(2.0))
    assert cache.path("scale", {}).exists() and cache.warm_up("hint") is None


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return translation_model_dir(tmp_path_factory)


def test_a_batch_translator_through_the_cache_translates_prefixes_and_scores_as_without(model_dir, tmp_path):
    plain = BatchTranslator.from_model_dir(model_dir, batch_size=2, **SEARCH_OPTIONS)
    results = plain.translate(INPUT)
    for attempt in range(2):  # traced and written, then loaded
        cached = BatchTranslator.from_model_dir(model_dir, batch_size=2, function_cache=FunctionCache(tmp_path),
                                                **SEARCH_OPTIONS)
        for result, expected_result in zip(cached.translate(INPUT), results, strict=True):
            assert result["translation"] == expected_result["translation"]
            assert [text for text, _ in result["nbest"]] == [text for text, _ in expected_result["nbest"]]
            np.testing.assert_allclose([score for _, score in result["nbest"]],
                                       [score for _, score in expected_result["nbest"]], rtol=1e-5)
            np.testing.assert_allclose(result["alignment"], expected_result["alignment"], atol=1e-6)
        assert [r["translation"] for r in cached.translate(INPUT, prefixes=PREFIXES)] == [
            r["translation"] for r in plain.translate(INPUT, prefixes=PREFIXES)]
        targets = [r["translation"] for r in results]
        np.testing.assert_allclose([r["log_prob"] for r in cached.score(INPUT, targets)],
                                   [r["log_prob"] for r in plain.score(INPUT, targets)], rtol=1e-5)
    assert cached.module.translate.experimental_get_tracing_count() == 0
    assert sorted(path.name.split("-")[0] for path in tmp_path.glob("*.json")) == [
        "score", "translate", "translate_prefix"]


# rnnsearch is `large`: the cache keeps and runs a constrained search the same way for both models; the default
# suite runs it for RNNencdec, whose empty alignments had failed, and RNNsearch's constrained search without the
# cache (tests/test_translator_constraints.py)
@pytest.mark.parametrize("name", [pytest.param("rnnsearch", marks=pytest.mark.large), "rnnencdec"])
def test_constrained_translations_through_the_cache_are_those_without(tiny_model_dirs, name, tmp_path):
    # A few sentences are searched eagerly, the cache runs its graphs without Grappler: both had failed on
    # RNNencdec's empty alignments where a constrained search puts its rows back (`translate --terminology`).
    constraints = [["chat", "vert"], ["maison"], [], ["le chien", "une"]]
    plain, cached = (BatchTranslator.from_model_dir(tiny_model_dirs[name], batch_size=2, function_cache=cache,
                                                    **SEARCH_OPTIONS) for cache in (None, FunctionCache(tmp_path)))
    expected = plain.translate(SENTENCES, constraints=constraints)
    assert any(result["translation"] != free["translation"]
               for result, free in zip(expected, plain.translate(SENTENCES)))  # constraints searched again
    for result, expected_result in zip(cached.translate(SENTENCES, constraints=constraints), expected, strict=True):
        assert result["translation"] == expected_result["translation"]
        np.testing.assert_allclose(result["score"], expected_result["score"], rtol=1e-5)


def test_bf16_weights_and_float32_weights_cast_at_every_step_are_two_graphs(model_dir, tmp_path):
    bf16 = Translator.from_model_dir(model_dir, precision="mixed_bfloat16", **SEARCH_OPTIONS)
    model, _ = ModelDir(model_dir).load_model(precision="mixed_bfloat16")  # float32 weights under the mixed policy
    cast = Translator(model, bf16.source_codec, bf16.target_codec, bf16.search_config)
    cache = FunctionCache(tmp_path)
    assert cast.fingerprint()["models"][0][2] == "mixed_bfloat16" and bf16.fingerprint()["models"][0][2] == "bfloat16"
    translations = [cache.function(translator, "translate", translator.fingerprint())(text=tf.constant(INPUT))
                    for translator in (cast, bf16)]
    assert len(list(tmp_path.glob("translate-*.json"))) == 2  # one graph each
    np.testing.assert_array_equal(translations[0]["translation"], translations[1]["translation"])
    np.testing.assert_allclose(translations[0]["score"], translations[1]["score"], rtol=1e-5)
    again = Translator.from_model_dir(model_dir, precision="mixed_bfloat16", **SEARCH_OPTIONS)
    loaded = cache.function(again, "translate", again.fingerprint())(text=tf.constant(INPUT))
    assert again.translate.experimental_get_tracing_count() == 0  # loaded with its bf16 variables
    np.testing.assert_array_equal(loaded["score"], translations[1]["score"])


def _translate_command(model_dir, source, cache, loads=False, verbosity="--verbosity=1"):
    """The translations of `rnnsearch translate` (checking whether it loaded its search from `cache`, and
    instantiated it while the model loaded: `FunctionCache.warm_up`, which `--verbosity=1` logs)."""
    completed = preimported.run(
        [sys.executable, "-m", "rnnsearch_tf.cli.main", "translate", f"--model_dir={model_dir}",
         f"--input={source}", f"--function_cache={cache}", "--beam_size=3", "--noprogress", *([verbosity] if verbosity else [])],
        check=True, capture_output=True, text=True,
    )
    if not verbosity:  # what a user sees: no word of the cache
        lines = completed.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("translating with "), completed.stderr
        return completed.stdout
    assert ("loaded the traced __inference_translate" in completed.stderr) == loads
    warmed_up = re.search(r"warmed up the traced (__inference_translate\S+) from \S+ \((\w+)\)", completed.stderr)
    assert (warmed_up is not None) == loads, completed.stderr
    if loads:
        assert warmed_up.group(2) == "FailedPreconditionError"  # the stand-ins hold no values
        assert f"loaded the traced {warmed_up.group(1)} " in completed.stderr  # the graph it then ran
    return completed.stdout


def test_translate_with_a_changed_checkpoint_translates_as_without_the_cache(tmp_path):
    model_dir = write_model_dir(tmp_path / "model", seed=3)
    source = tmp_path / "source.en"
    source.write_text("\n".join(INPUT) + "\n", encoding="utf-8")
    cache = tmp_path / "cache"
    first = _translate_command(model_dir, source, cache)
    assert len(list(cache.glob("translate-*.json"))) == 1
    write_model_dir(tmp_path / "model", seed=4)  # new weights, a newer checkpoint in the same directory
    changed = _translate_command(model_dir, source, cache, loads=True)
    assert changed != first
    assert changed == _translate_command(model_dir, source, cache, verbosity="")  # loaded again, silently
    assert changed == _translate_command(model_dir, source, "")
    assert len(list(cache.glob("translate-*.json"))) == 1  # the same graph, loaded


def test_run_graphs_without_grappler_turns_the_optimizer_off_for_the_process():
    """In a fresh process: the setting is the whole process's (`serve`, `translate --saved_model` call it)."""
    check = ("import tensorflow as tf; from rnnsearch_tf.utils.function_cache import run_graphs_without_grappler; "
             "before = tf.config.optimizer.get_experimental_options().get('disable_meta_optimizer', False); "
             "run_graphs_without_grappler(); "
             "print(before, tf.config.optimizer.get_experimental_options()['disable_meta_optimizer'])")
    shown = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True, timeout=120,
                           env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert shown.stdout == "False True\n"
