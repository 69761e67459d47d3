"""The warning for input in another language than the model's source language."""

import pytest

from data_pipeline.text_codec import TextCodec
from rnnsearch_tf.inference.source_coverage import oov_warning, training_oov_rate


@pytest.fixture
def vocabulary_file(tmp_path):
    path = tmp_path / "source_vocab.tsv"
    # 20 running training tokens, 1 of them outside the vocabulary (5%)
    path.write_text("<pad>\t0\n<s>\t0\n</s>\t7\n<unk>\t1\nthe\t10\ncat\t5\ndog\t4\n", encoding="utf-8")
    return path


def _results(*sentences):
    return [{"source_tokens": sentence.split()} for sentence in sentences]


def test_training_rate_comes_from_the_unk_count(vocabulary_file):
    rate, words = training_oov_rate(vocabulary_file)
    assert rate == pytest.approx(1 / 20) and words == {"the", "cat", "dog"}


def test_input_like_the_training_data_passes(vocabulary_file):
    assert oov_warning(_results("the cat", "the dog the cat", "the bird"), TextCodec("en", vocabulary_file)) is None
    assert oov_warning(_results(""), TextCodec("en", vocabulary_file)) is None


def test_input_in_another_language_is_named(vocabulary_file):
    warning = oov_warning(_results("die Katze", "der Hund the"), TextCodec("en", vocabulary_file))
    assert warning.startswith("warning: 80.0% of the source tokens") and "(5.0% in its training data)" in warning
    assert warning.endswith("is the input English, the model's source language, and not the reference side?")


def test_the_warning_names_the_languages_of_any_pair(tmp_path):
    path = tmp_path / "source_vocab.tsv"
    # a German source vocabulary: 20 running training tokens, 1 of them outside it
    path.write_text("<pad>\t0\n<s>\t0\n</s>\t7\n<unk>\t1\nder\t10\nHund\t5\nbellt\t4\n", encoding="utf-8")
    warning = oov_warning(_results("the dog barks", "a cat Hund"), TextCodec("de", path), "cs")
    assert warning.startswith("warning: 83.3% of the source tokens")
    assert warning.endswith("is the input German, the model's source language, and not Czech?")


def test_a_short_input_with_a_name_or_two_is_not_named(vocabulary_file):
    assert oov_warning(_results("Hi"), TextCodec("en", vocabulary_file)) is None  # 1 unknown token of 1
    assert oov_warning(_results("Zorro the cat", "Zelda"), TextCodec("en", vocabulary_file)) is None  # 2 of 4
    assert oov_warning(_results("Zorro the cat", "Zelda Link"), TextCodec("en", vocabulary_file)) is not None  # 3 of 5
