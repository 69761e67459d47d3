"""Translator: text in, text out, on a tiny random-weight model (garbage translations, exact contracts)."""

import json
import shutil

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.constants import TARGET_VOCABULARY_FILE, UNK_ID
from data_pipeline.export_dir import ExportSettings
from data_pipeline.text_codec import TextCodec
from rnnsearch_tf.inference.translator import Translator
from rnnsearch_tf.models.model_dir import ModelDir
from serving.export import export
from helpers.serving_test_utils import (BAD_SENTENCES, INVALID_UTF8, SEARCH_OPTIONS, SENTENCES, assert_outputs_equal,
                                        write_model_dir)


@pytest.fixture(scope="module")
def model_dir(tiny_model_dirs):
    return tiny_model_dirs["rnnsearch"]


@pytest.fixture(scope="module")
def translator(tiny_translators):
    return tiny_translators["rnnsearch"]


def _strings(tensor):
    return [value.decode("utf-8") for value in np.asarray(tensor).reshape(-1)]


def test_outputs_are_consistent(translator):
    outputs = {name: value.numpy() for name, value in translator.translate(tf.constant(SENTENCES)).items()}
    batch, n = len(SENTENCES), SEARCH_OPTIONS["num_hypotheses"]
    assert outputs["translation"].shape == (batch,)
    assert outputs["nbest_translations"].shape == outputs["nbest_scores"].shape == (batch, n)
    np.testing.assert_array_equal(outputs["nbest_translations"][:, 0], outputs["translation"])
    np.testing.assert_array_equal(outputs["nbest_scores"][:, 0], outputs["score"])
    assert np.all(np.diff(outputs["nbest_scores"], axis=1) <= 0)
    tgt_len, src_len = outputs["tokens"].shape[1], outputs["source_tokens"].shape[1]
    assert outputs["alignment"].shape == (batch, tgt_len, src_len)
    detokenizer = TextCodec("fr")
    for row in range(batch):
        tokens = _strings(outputs["tokens"][row])
        length = tokens.index("</s>") + 1
        assert all(token == "" for token in tokens[length:])
        assert "<unk>" not in tokens and "<s>" not in tokens and "<pad>" not in tokens
        expected = detokenizer.detokenize(tf.ragged.constant([tokens[: length - 1]], dtype=tf.string))
        assert outputs["translation"][row] == expected.numpy()[0]
        source = _strings(outputs["source_tokens"][row])
        source_length = source.index("</s>") + 1
        np.testing.assert_allclose(outputs["alignment"][row, :length].sum(axis=1), 1.0, rtol=1e-5)
        assert np.all(outputs["alignment"][row, :, source_length:] == 0)
        assert np.all(outputs["alignment"][row, length:] == 0)
    assert not outputs["truncated"].any()
    assert _strings(outputs["source_tokens"][0])[:7] == ["The", "cat", "sees", "the", "big", "dog", "."]


def test_translate_ids_matches_translate(translator, model_dir):
    outputs = translator.translate(tf.constant(SENTENCES))
    source_ids = TextCodec("en", model_dir / "source_vocab.tsv").encode(tf.constant(SENTENCES)).to_tensor()
    by_ids = translator.translate_ids(source_ids)
    np.testing.assert_allclose(by_ids["score"], outputs["score"], rtol=1e-6)
    target_tokens = TextCodec("fr", model_dir / "target_vocab.tsv").tokens(by_ids["target_ids"])
    target_tokens = tf.where(by_ids["target_ids"] == 0, "", target_tokens)
    np.testing.assert_array_equal(target_tokens, outputs["tokens"][:, : target_tokens.shape[1]])
    np.testing.assert_allclose(by_ids["alignment"], outputs["alignment"][:, : target_tokens.shape[1]], atol=1e-6)


def test_score_of_a_translation_is_its_search_log_prob(translator):
    outputs = translator.translate(tf.constant(SENTENCES))
    scored = translator.score(tf.constant(SENTENCES), outputs["translation"])
    np.testing.assert_allclose(scored["log_prob"], outputs["score"], rtol=1e-5)
    assert not scored["source_truncated"].numpy().any() and not scored["target_truncated"].numpy().any()
    assert scored["token_log_probs"].shape[0] == len(SENTENCES)


@pytest.fixture(scope="module")
def unk_translator(tmp_path_factory):
    """A `Translator` (`<unk>` not forbidden) of a tiny random model whose output bias for `<unk>` is raised by 5,
    so that some translations hold it."""
    model_dir = ModelDir(write_model_dir(tmp_path_factory.mktemp("unk") / "model"))
    model, _ = model_dir.load_model()
    bias = model.decoder.deep_output.output_projection.bias  # [target vocabulary]
    bias.assign(tf.tensor_scatter_nd_add(bias, [[UNK_ID]], [5.0]))
    tf.train.Checkpoint(model=model).save(model_dir.file("checkpoints/ckpt"))  # the latest: the one loaded
    return Translator.from_model_dir(model_dir.path, beam_size=3, num_hypotheses=3, maximum_source_length=12)


def test_score_of_a_translation_with_unk_is_its_search_log_prob(unk_translator):
    """`score` reads the text `<unk>` a translation holds as the one token `<unk>` (as a prefix is read), not as
    "<", "unk", ">": a hypothesis of translate's n-best list scores its beam score (no length normalisation)."""
    outputs = unk_translator.translate(tf.constant(SENTENCES))
    translations = outputs["nbest_translations"].numpy().reshape(-1)  # [batch * 3]
    assert any(b"<unk>" in translation for translation in translations)
    scored = unk_translator.score(tf.constant([sentence for sentence in SENTENCES for _ in range(3)]), translations)
    np.testing.assert_allclose(scored["log_prob"], outputs["nbest_scores"].numpy().reshape(-1), rtol=1e-5)
    with_unk = [row for row, translation in enumerate(translations) if b"<unk>" in translation]
    assert all("<unk>" in _strings(scored["tokens"][row]) for row in with_unk)


def test_bad_inputs_have_defined_results(translator):
    outputs = translator.translate(tf.constant(BAD_SENTENCES + [INVALID_UTF8, "the cat sees dog"]))
    translations = outputs["translation"].numpy()
    assert list(translations[:2]) == [b"", b""]  # nothing to translate
    np.testing.assert_array_equal(outputs["score"][:2], [0.0, 0.0])
    assert np.all(outputs["tokens"].numpy()[:2] == b"")
    assert np.all(outputs["alignment"].numpy()[:2] == 0)
    assert _strings(outputs["source_tokens"][2])[:4] == ["the", "cat", "sees", "dog"]  # controls dropped
    assert list(outputs["truncated"].numpy()) == [False, False, False, False, True, False, False]
    maximum = SEARCH_OPTIONS["maximum_source_length"]
    assert _strings(outputs["source_tokens"][4]) == ["cat"] * maximum + ["</s>"]
    assert "\ufffd" in outputs["source_tokens"].numpy()[5][2].decode("utf-8")  # invalid bytes replaced
    empty = translator.translate(tf.constant([], tf.string))
    assert empty["translation"].shape == (0,) and empty["alignment"].shape[0] == 0
    assert translator.score(tf.constant([], tf.string), tf.constant([], tf.string))["log_prob"].shape == (0,)
    long_target = translator.score(tf.constant(["the cat"]), tf.constant([" ".join(["chat"] * 1000)]))
    assert long_target["target_truncated"].numpy()[0]
    assert long_target["token_log_probs"].shape == (1, translator.maximum_target_length)


def test_misuse_is_refused(translator, model_dir):
    with pytest.raises(tf.errors.InvalidArgumentError, match="at most 1000 sentences"):
        translator.translate(tf.constant(["the cat"] * 1001))
    with pytest.raises(tf.errors.InvalidArgumentError, match="vocabulary ids"):
        translator.translate_ids(tf.constant([[4, 99]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="as many sentences"):
        translator.score(tf.constant(["a", "b"]), tf.constant(["la"]))
    model = translator.model
    target = TextCodec("fr", model_dir / "target_vocab.tsv")
    with pytest.raises(ValueError, match="vocabularies of the model directory"):
        Translator(model, target, target)
    with pytest.raises(ValueError, match="maximum_batch_size must be at least 1"):
        Translator(model, translator.source_codec, translator.target_codec, maximum_batch_size=0)


def test_serving_signatures_and_their_settings(translator):
    signatures = translator.serving_signatures(version=4)
    assert {"score", "serving_default", "settings", "translate", "translate_ids"} <= set(signatures)
    assert signatures["serving_default"] is signatures["translate"]
    settings = {name: value.numpy() for name, value in signatures["settings"]().items()}
    recorded = translator.recorded_settings(4)
    assert sorted(settings) == sorted(recorded) and settings["version"] == 4
    assert settings["beam_size"] == SEARCH_OPTIONS["beam_size"] and settings["forbid_unk"]
    assert settings["checkpoint"].decode() == translator.checkpoint_path == recorded["checkpoint"]
    assert settings["precision"] == b"float32"
    assert settings["length_normalization"] == b"none"


def test_rnnencdec_translates_with_zero_alignment(tmp_path):
    translator = Translator.from_model_dir(write_model_dir(tmp_path / "encdec", "rnnencdec"), beam_size=2)
    outputs = translator.translate(tf.constant(SENTENCES[:2]))
    assert outputs["alignment"].shape[:2] == outputs["tokens"].shape
    assert outputs["alignment"].shape[2] == outputs["source_tokens"].shape[1]
    assert np.all(outputs["alignment"].numpy() == 0)
    assert "nbest_translations" not in outputs


def test_decoding_precision_overrides_the_models(model_dir, translator, tiny_model_dirs):
    mixed = Translator.from_model_dir(model_dir, precision="mixed_bfloat16", **SEARCH_OPTIONS)
    assert mixed.model.model.decoder.compute_dtype == "bfloat16"  # the model under its bf16 weights (DecodingModel)
    assert translator.model.decoder.compute_dtype == "float32"  # model.json's precision
    outputs = mixed.translate(tf.constant(SENTENCES))
    assert outputs["score"].dtype == tf.float32 and np.all(np.isfinite(outputs["score"].numpy()))
    assert outputs["translation"].shape == (len(SENTENCES),)
    assert mixed.recorded_settings(1)["precision"] == "bfloat16"
    assert translator.recorded_settings(1)["precision"] == "float32"
    ensemble = Translator.from_model_dir("+".join(map(str, tiny_model_dirs.values())), precision="mixed_bfloat16")
    assert ensemble.recorded_settings(1)["precision"] == "bfloat16+bfloat16"


def test_int8_storage_is_recorded_with_the_precision_it_widens_to(model_dir, translator, tiny_model_dirs):
    assert translator.recorded_settings(1)["quantize"] == "none"
    int8 = Translator.from_model_dir(model_dir, quantize="int8", precision="mixed_bfloat16", **SEARCH_OPTIONS)
    assert (int8.recorded_settings(1)["precision"], int8.recorded_settings(1)["quantize"]) == ("bfloat16", "int8")
    ensemble = Translator.from_model_dir("+".join(map(str, tiny_model_dirs.values())), quantize="int8")
    assert (ensemble.recorded_settings(1)["precision"], ensemble.recorded_settings(1)["quantize"]) == (
        "float32+float32", "int8+int8")


@pytest.mark.parametrize("model_name", ["rnnsearch", "rnnencdec"])
def test_bf16_weights_translate_as_float32_weights_cast_at_every_step(tiny_model_dirs, model_name):
    model_dir = tiny_model_dirs[model_name]
    bf16 = Translator.from_model_dir(model_dir, precision="mixed_bfloat16", **SEARCH_OPTIONS)
    model, _ = ModelDir(model_dir).load_model(precision="mixed_bfloat16")  # as decoding was: float32 weights
    cast = Translator(model, bf16.source_codec, bf16.target_codec, bf16.search_config)
    assert {w.dtype for w in bf16.model.stored.values()} == {tf.bfloat16} and not bf16.model.kept
    assert {w.dtype for w in model.weights} == {"float32"}
    text = tf.constant(SENTENCES + BAD_SENTENCES)
    translated = {name: value.numpy() for name, value in bf16.translate(text).items()}
    assert_outputs_equal(translated, cast.translate(text), model_name)  # translations and tokens equal, scores close
    assert_outputs_equal(bf16.score(text, translated["translation"]), cast.score(text, translated["translation"]))


def test_the_fingerprint_holds_what_the_graphs_are_built_from(model_dir, translator, tmp_path):
    options = dict(SEARCH_OPTIONS, num_alternatives=translator.num_alternatives)  # the options of `translator`
    assert Translator.from_model_dir(model_dir, **options).fingerprint() == translator.fingerprint()
    other_search = Translator.from_model_dir(model_dir, **dict(options, beam_size=2))
    mixed = Translator.from_model_dir(model_dir, precision="mixed_bfloat16", **options)
    copied = tmp_path / "model"
    shutil.copytree(model_dir, copied)
    vocabulary = copied / TARGET_VOCABULARY_FILE
    lines = vocabulary.read_text(encoding="utf-8").splitlines(keepends=True)
    vocabulary.write_text("".join(lines[:-2] + lines[-1:] + lines[-2:-1]), encoding="utf-8")
    renamed_words = Translator.from_model_dir(copied, **options)  # two ids swapped, the same size
    int8 = Translator.from_model_dir(model_dir, quantize="int8", **options)
    codec = translator.source_codec  # the same files, lower-casing its input
    lowercasing = TextCodec(codec.language, codec.vocabulary.vocabulary_file, codec.kind, codec.model_file, True)
    lowercased = Translator(translator.model, lowercasing, translator.target_codec, translator.search_config,
                            translator.maximum_batch_size, num_alternatives=translator.num_alternatives)
    fingerprints = [t.fingerprint() for t in (translator, other_search, mixed, renamed_words, int8, lowercased)]
    assert len({json.dumps(f, sort_keys=True) for f in fingerprints}) == 6
    assert int8.fingerprint()["models"] == [["RNNSearch", translator.model.config.to_dict(), "float32", "int8"]]
    assert json.loads(json.dumps(translator.fingerprint())) == translator.fingerprint()  # JSON as it is
    # What an export records: a word-level export's Moses codecs are rebuilt from it (`ExportSettings.moses_codec`).
    recorded = [ExportSettings(t.recorded_settings(1)) for t in (translator, lowercased)]
    assert [(r["source_lowercase"], r["target_lowercase"]) for r in recorded] == [(False, False), (True, False)]
    assert [r.moses_codec("source").lowercase for r in recorded] == [False, True]


# translate_prefix: the start of each translation given (interactive translation).

PREFIX_TEXT = SENTENCES + ["", "the cat"]


@pytest.fixture(scope="module")
def prefix_translators(tiny_translators):
    return tiny_translators


def _numpy(outputs):
    return {name: value.numpy() for name, value in outputs.items()}


def _check_alternatives(translator, text, prefixes, outputs):
    """Each alternative's score is log p(word | prefix, x) as `score` computes it (teacher forcing)."""
    for row, (sentence, prefix) in enumerate(zip(text, prefixes)):
        words, scores = _strings(outputs["alternatives"][row]), outputs["alternative_scores"][row]
        if not sentence.strip():
            # Nothing translated, nothing offered.
            assert words == [""] * translator.num_alternatives and np.all(scores == -np.inf)
            continue
        assert all(words) and np.all(np.diff(scores) <= 0) and np.all(np.isfinite(scores))
        assert "<unk>" not in words and "<s>" not in words and "<pad>" not in words  # forbidden
        typed = " ".join("zyzzyva" if word == "<unk>" else word for word in prefix.split())  # score() splits <unk>
        position = len(prefix.split())
        for word, score in zip(words, scores):
            if word == "</s>":
                continue
            scored = translator.score(tf.constant([sentence]), tf.constant([f"{typed} {word}"]))
            np.testing.assert_allclose(scored["token_log_probs"][0, position], score, atol=1e-5, err_msg=word)


@pytest.mark.parametrize("name", ["rnnsearch", "rnnencdec", "ensemble"])
def test_an_empty_prefix_gives_the_translation_of_translate(prefix_translators, name):
    translator = prefix_translators[name]
    free = _numpy(translator.translate(tf.constant(PREFIX_TEXT)))
    prefixed = _numpy(translator.translate_prefix(tf.constant(PREFIX_TEXT), tf.constant([""] * len(PREFIX_TEXT))))
    assert sorted(prefixed) == sorted(list(free) + ["alternatives", "alternative_scores", "prefix_truncated"])
    for key, value in free.items():
        np.testing.assert_array_equal(prefixed[key], value, err_msg=key)
    alternatives_shape = (len(PREFIX_TEXT), translator.num_alternatives)
    assert prefixed["alternatives"].shape == prefixed["alternative_scores"].shape == alternatives_shape
    assert not prefixed["prefix_truncated"].any()
    _check_alternatives(translator, PREFIX_TEXT, [""] * len(PREFIX_TEXT), prefixed)


@pytest.mark.parametrize("name", ["rnnsearch", "rnnencdec", "ensemble"])
def test_a_prefix_of_the_translation_gives_the_same_translation_and_score(prefix_translators, name):
    translator = prefix_translators[name]
    free = _numpy(translator.translate(tf.constant(PREFIX_TEXT)))
    words = [_strings(free["tokens"][row]) for row in range(len(PREFIX_TEXT))]
    words = [row[: row.index("</s>")] if "</s>" in row else [] for row in words]
    assert max(len(row) for row in words) >= 2
    prefixes = [" ".join(row[:count]) for row, count in zip(words, [1, 2, 3, 1, 0, 2])]
    prefixed = _numpy(translator.translate_prefix(tf.constant(PREFIX_TEXT), tf.constant(prefixes)))
    np.testing.assert_array_equal(prefixed["translation"], free["translation"])
    np.testing.assert_array_equal(prefixed["tokens"], free["tokens"])
    np.testing.assert_allclose(prefixed["score"], free["score"], rtol=1e-5)
    _check_alternatives(translator, PREFIX_TEXT, prefixes, prefixed)


@pytest.mark.parametrize("name", ["rnnsearch", "ensemble"])
def test_forced_words_appear_verbatim_and_unknown_ones_as_unk(prefix_translators, name):
    translator = prefix_translators[name]
    text = SENTENCES[:3] + ["the cat", "a dog"]
    # "zyzzyva", "Chat" and "!" are not target words; the text <unk> is the unknown word.
    prefixes = ["vert vert une", "zyzzyva le", "", "la Chat !", "le <unk> chat"]
    outputs = _numpy(translator.translate_prefix(tf.constant(text), tf.constant(prefixes)))
    expected_starts = [["vert", "vert", "une"], ["<unk>", "le"], [], ["la", "<unk>", "<unk>"], ["le", "<unk>", "chat"]]
    for row, start in enumerate(expected_starts):
        tokens = _strings(outputs["tokens"][row])
        tokens = tokens[: tokens.index("</s>")]
        assert tokens[: len(start)] == start
        assert "<unk>" not in tokens[len(start):]  # forbid_unk holds after the prefix
        assert outputs["translation"][row].decode("utf-8") == TextCodec("fr").detokenize(
            tf.ragged.constant([tokens], dtype=tf.string)).numpy()[0].decode("utf-8")
        # The score is the sum of the log-probabilities, the forced words' included: teacher forcing of the
        # prefix as typed (unknown words looked up as <unk>) and the rest of the translation.
        typed = ["zyzzyva" if word == "<unk>" else word for word in prefixes[row].split()]  # score() splits <unk>
        target = " ".join(typed + tokens[len(start):])
        scored = translator.score(tf.constant([text[row]]), tf.constant([target]))
        np.testing.assert_allclose(outputs["score"][row], scored["log_prob"][0], rtol=1e-5)
    assert outputs["translation"][1].decode("utf-8").startswith("<unk> le")
    _check_alternatives(translator, text, prefixes, outputs)


def test_a_long_prefix_is_cut_and_flagged(prefix_translators):
    translator = prefix_translators["rnnsearch"]
    prefixes = tf.constant([" ".join(["chat"] * 200), "chat"])
    outputs = _numpy(translator.translate_prefix(tf.constant(["dog", "dog"]), prefixes))
    assert list(outputs["prefix_truncated"]) == [True, False]
    assert _strings(outputs["tokens"][0]) == ["chat"] * (translator.maximum_target_length - 1) + ["</s>"]
    assert _strings(outputs["tokens"][1])[0] == "chat"


def test_prefix_misuse_is_refused(prefix_translators, model_dir):
    translator = prefix_translators["rnnsearch"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="as many sentences"):
        translator.translate_prefix(tf.constant(["a", "b"]), tf.constant(["la"]))
    with pytest.raises(ValueError, match="num_alternatives must be at least 1"):
        Translator.from_model_dir(model_dir, num_alternatives=0)


def _long_sentences():
    """Sentences of 100 tokens (the default maximum_source_length), 101 and 12."""
    words = ["the", "cat", "sees", "a", "big", "dog", ",", "house", "small", "green"]
    return [" ".join(words[i % len(words)] for i in range(length)) for length in (100, 101, 12)]


def test_inputs_of_100_tokens_are_searched_whole_and_longer_ones_cut_and_flagged(model_dir):
    # The default maximum_source_length (100): a 100-token sentence is searched whole, with up to
    # 2 * 100 + 10 target tokens; one token more is cut to 100 and flagged.
    sentences = _long_sentences()
    translator = Translator.from_model_dir(model_dir, beam_size=3)
    assert translator.maximum_source_length == 100 and translator.maximum_target_length == 210
    outputs = {name: value.numpy() for name, value in translator.translate(tf.constant(sentences)).items()}
    np.testing.assert_array_equal(outputs["truncated"], [False, True, False])
    source_tokens = [[t for t in _strings(row) if t] for row in outputs["source_tokens"]]
    assert source_tokens[0] == sentences[0].split() + ["</s>"]
    assert source_tokens[1] == sentences[1].split()[:100] + ["</s>"]
    assert outputs["alignment"].shape[2] == 101 and outputs["tokens"].shape[1] <= 210
    for row in range(3):
        target_length = sum(1 for token in _strings(outputs["tokens"][row]) if token)
        alignment = outputs["alignment"][row, :target_length, : len(source_tokens[row])]
        np.testing.assert_allclose(alignment.sum(axis=1), 1.0, rtol=1e-4)  # every column a real token
    scored = translator.score(tf.constant(sentences[:1]), outputs["translation"][:1])
    assert not scored["source_truncated"].numpy()[0]


# large: an export of its own (~12 s); the default suite exports the same signatures with their length bounds and
# compares them with the Python path (tests/test_export.py), and searches these inputs in-process (above)
@pytest.mark.large
def test_the_export_searches_inputs_of_100_tokens_as_its_translator(model_dir, tmp_path):
    sentences = tf.constant(_long_sentences())
    translator = Translator.from_model_dir(model_dir, beam_size=3)
    outputs = {name: value.numpy() for name, value in translator.translate(sentences).items()}
    loaded = tf.saved_model.load(export(translator, str(tmp_path / "export"))).signatures["translate"](text=sentences)
    np.testing.assert_array_equal(loaded["translation"].numpy(), outputs["translation"])
    np.testing.assert_array_equal(loaded["truncated"].numpy(), outputs["truncated"])
    np.testing.assert_allclose(loaded["score"].numpy(), outputs["score"], rtol=1e-5)


@pytest.mark.parametrize("name", ["rnnsearch", "rnnencdec", "ensemble"])
def test_token_probabilities_are_the_models_after_teacher_forcing(prefix_translators, name):
    """Each hypothesis's `token_probabilities`, recorded by the search, are exp log_softmax of the model's
    logits for its tokens after teacher forcing (an ensemble's: the mean of its models' log-probabilities)."""
    translator = prefix_translators[name]
    outputs = _numpy(translator.translate(tf.constant(PREFIX_TEXT)))
    n = SEARCH_OPTIONS["num_hypotheses"]
    assert outputs["nbest_token_probabilities"].shape == outputs["nbest_tokens"].shape
    np.testing.assert_array_equal(outputs["nbest_token_probabilities"][:, 0], outputs["token_probabilities"])
    np.testing.assert_array_equal(outputs["nbest_mean_log_probs"][:, 0], outputs["mean_log_prob"])
    for row in range(len(PREFIX_TEXT)):
        source = [token for token in _strings(outputs["source_tokens"][row]) if token]
        source_ids = translator.source_codec.lookup(tf.ragged.constant([source])).to_tensor()  # [1, src_len]
        for rank in range(n):
            tokens = [token for token in _strings(outputs["nbest_tokens"][row, rank]) if token]
            probabilities = outputs["nbest_token_probabilities"][row, rank]
            np.testing.assert_array_equal(probabilities[len(tokens):], 0.0)
            if not tokens:  # an empty source: nothing searched
                assert outputs["nbest_mean_log_probs"][row, rank] == 0.0
                continue
            target_ids = translator.target_codec.lookup(tf.ragged.constant([tokens])).to_tensor()  # [1, tgt_len]
            expected = translator.model.token_log_probs(source_ids, target_ids).numpy()[0]
            np.testing.assert_allclose(np.log(probabilities[: len(tokens)]), expected, atol=1e-4)
            log_prob = np.log(probabilities[: len(tokens)]).sum()  # no length normalization: the score
            np.testing.assert_allclose(log_prob, outputs["nbest_scores"][row, rank], atol=1e-4)
            np.testing.assert_allclose(outputs["nbest_mean_log_probs"][row, rank], log_prob / len(tokens), atol=1e-5)
