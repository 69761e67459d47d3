"""ParagraphTranslator and `translate --split_sentences`, on a tiny random model."""

import json
import os
import sys

import numpy as np
import pytest
import tensorflow as tf

from conftest import REPO_ROOT
from rnnsearch_tf.inference import output_formats
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.paragraph_translator import ParagraphTranslator
from helpers.serving_test_utils import SEARCH_OPTIONS, write_model_dir
from helpers.subword_test_data import write_subword_model_dir
from helpers.toy_chinese import PAIRS, build_english_chinese
from helpers import preimported
from rnnsearch_tf.models.model_dir import ModelDir

OPTIONS = dict(SEARCH_OPTIONS, num_hypotheses=1)
LONG_SENTENCE = "The " + " ".join(["cat"] * 20) + "."  # more than maximum_source_length = 12 tokens
LINES = [
    "The cat sees the big dog. A small green house? The dog sees a house!",
    "",
    "Mr. Dog sees the cat.",
    f"The cat sleeps. {LONG_SENTENCE}",
]
SPLIT = [
    ["The cat sees the big dog.", "A small green house?", "The dog sees a house!"],
    [],
    ["Mr. Dog sees the cat."],
    ["The cat sleeps.", LONG_SENTENCE],
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return write_model_dir(tmp_path_factory.mktemp("paragraphs") / "model")


@pytest.fixture(scope="module")
def batch_translator(model_dir):
    return BatchTranslator.from_model_dir(model_dir, batch_size=3, **OPTIONS)


def test_lines_are_split_by_the_source_language_rules(batch_translator):
    assert batch_translator.source_language == "en"
    assert ParagraphTranslator(batch_translator).split(LINES) == SPLIT


def test_lines_of_several_sentences_are_those_split_in_more_than_one(batch_translator):
    assert ParagraphTranslator(batch_translator).lines_of_several_sentences(LINES) == [1, 4]


def test_a_translator_without_a_source_language_needs_one(batch_translator):
    settings = dict(batch_translator.module.settings())
    del settings["source_language"]
    without = BatchTranslator(batch_translator.module, settings)
    with pytest.raises(ValueError, match="name no source_language"):
        ParagraphTranslator(without)
    assert ParagraphTranslator(without, "fr").splitter.language == "fr"


def test_each_line_joins_the_translations_of_its_sentences_in_order(batch_translator):
    progress = []
    results = ParagraphTranslator(batch_translator).translate(SPLIT, progress.append)
    assert progress[-1] == 6  # sentences, not lines
    for result, sentences in zip(results, SPLIT, strict=True):
        alone = batch_translator.translate(sentences)
        assert [sentence["translation"] for sentence in result["sentences"]] == [r["translation"] for r in alone]
        assert result["translation"] == " ".join(r["translation"] for r in alone if r["translation"])
        assert result["source_tokens"] == [token for r in alone for token in r["source_tokens"]]
        assert result["tokens"] == [token for r in alone for token in r["tokens"]]
        np.testing.assert_allclose(result["score"], sum(r["score"] for r in alone), rtol=1e-5)
        assert result["nbest"] == [(result["translation"], result["score"])]
    assert results[1]["translation"] == "" and results[1]["sentences"] == [] and results[1]["score"] == 0.0
    assert [result["truncated"] for result in results] == [False, False, False, True]


@pytest.fixture(scope="module")
def full_stop_translator(tmp_path_factory):
    """An English -> Chinese model that writes "。" at every step (its output bias there), 1 piece per sentence."""
    folder = tmp_path_factory.mktemp("english_chinese")
    model_dir = ModelDir(write_subword_model_dir(build_english_chinese(folder, PAIRS[:4]), folder / "model"))
    model, _ = model_dir.load_model()
    size = model.config.target_vocab_size
    (bias,) = [weight for weight in model.weights if weight.path.endswith("deep_output/W_o/bias")]
    full_stop = int(model_dir.codec("target").lookup(tf.constant([["。"]]))[0, 0])
    bias.assign(tf.one_hot(full_stop, size) * 1000.0)
    tf.train.Checkpoint(model=model).save(model_dir.file("checkpoints/ckpt"))  # the latest: read by default
    return BatchTranslator.from_model_dir(model_dir.path, batch_size=3, beam_size=2, maximum_length_a=0,
                                          maximum_length_b=2)


def test_a_chinese_target_joins_its_sentences_without_a_space(full_stop_translator):
    """Chinese runs its sentences on (`languages.join_sentences`); a space gave "。 。 。"."""
    assert full_stop_translator.target_language == "zh"
    paragraphs = ParagraphTranslator(full_stop_translator)
    results = paragraphs.translate(paragraphs.split(["The cat sees the dog. The dog likes the bird. A cat.", "A dog."]))
    sentences = [[sentence["translation"] for sentence in result["sentences"]] for result in results]
    assert sentences == [["。"] * 3, ["。"]]
    assert [result["translation"] for result in results] == ["。。。", "。"]
    assert [result["searched_translation"] for result in results] == ["。。。", "。"]


def test_the_alignment_format_keeps_one_matrix_per_sentence(batch_translator):
    result = ParagraphTranslator(batch_translator).translate(SPLIT[:1])[0]
    record = json.loads(output_formats.format_translation(7, result, "alignment"))
    assert record["index"] == 7 and record["translation"] == result["translation"]
    assert [sentence["index"] for sentence in record["sentences"]] == [0, 1, 2]
    for sentence, expected in zip(record["sentences"], result["sentences"], strict=True):
        assert np.asarray(sentence["alignment"]).shape == expected["alignment"].shape
        assert sentence["source_tokens"] == expected["source_tokens"]
        np.testing.assert_allclose(np.asarray(sentence["alignment"]).sum(axis=1), 1.0, atol=1e-4)


def _run(args, stdin_text):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    return preimported.run([sys.executable, "-m", "rnnsearch_tf.translate", *args], input=stdin_text, text=True,
                           capture_output=True, env=environment, cwd=REPO_ROOT, timeout=600)


def test_command_line_split_sentences(model_dir, batch_translator):
    options = [f"--model_dir={model_dir}", "--batch_size=3", "--beam_size=3", "--maximum_source_length=12", "--forbid_unk"]
    result = _run([*options, "--split_sentences"], "\n".join(LINES) + "\n")
    assert result.returncode == 0, result.stderr[-2000:]
    expected = ParagraphTranslator(batch_translator).translate(SPLIT)
    assert result.stdout.splitlines() == [line["translation"] for line in expected]
    assert "lines with a sentence cut to its first 12 tokens (--maximum_source_length): line 4\n" in result.stderr
    assert "several sentences" not in result.stderr
    result = _run([*options, "--split_sentences", "--output_format=nbest"], "A. B.\n")
    assert result.returncode == 1 and "--split_sentences takes neither" in result.stderr


def test_without_split_sentences_the_lines_of_several_sentences_are_named(model_dir, batch_translator):
    options = [f"--model_dir={model_dir}", "--batch_size=3", "--beam_size=3", "--maximum_source_length=12", "--forbid_unk"]
    result = _run(options, "\n".join(LINES) + "\n")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines() == [r["translation"] for r in batch_translator.translate(LINES)]
    assert "warning: several sentences in lines 1, 4: " in result.stderr and "--split_sentences" in result.stderr
