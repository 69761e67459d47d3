"""data_pipeline/nonbreaking_prefixes.py: the Moses nonbreaking prefix lists for English and French equal
those sacremoses 0.2.0 bundles (numeric-only words kept apart), and the tokenizer applies them: "Mr."
stays one token, "No." only before a number."""

import pytest
import tensorflow as tf

from data_pipeline import nonbreaking_prefixes
from data_pipeline.moses_tokenizer import MosesTokenizer

LANGUAGES = ("en", "fr")


def test_both_languages_and_only_they_have_lists():
    assert set(nonbreaking_prefixes.NONBREAKING_PREFIXES) == set(LANGUAGES)
    assert set(nonbreaking_prefixes.NUMERIC_ONLY_PREFIXES) == set(LANGUAGES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_prefixes_are_words_without_their_period_or_spaces(language):
    words = nonbreaking_prefixes.NONBREAKING_PREFIXES[language] | nonbreaking_prefixes.NUMERIC_ONLY_PREFIXES[language]
    assert all(word and not word.endswith(".") and word == word.strip() and " " not in word for word in words)
    assert set("ABCDEFGHIJKLMNOPQRSTUVWXYZ") <= nonbreaking_prefixes.NONBREAKING_PREFIXES[language]  # initials
    assert not nonbreaking_prefixes.NONBREAKING_PREFIXES[language] & nonbreaking_prefixes.NUMERIC_ONLY_PREFIXES[language]


@pytest.mark.parametrize("language", LANGUAGES)
def test_lists_equal_the_moses_files_sacremoses_bundles(language):
    sacremoses = pytest.importorskip("sacremoses")
    reference = sacremoses.MosesTokenizer(lang=language)
    assert set(reference.NUMERIC_ONLY_PREFIXES) == nonbreaking_prefixes.NUMERIC_ONLY_PREFIXES[language]
    # sacremoses keeps the Moses file's lines, numeric-only words among them marked "No #NUMERIC_ONLY#"
    assert {line.removesuffix(" #NUMERIC_ONLY#") for line in reference.NONBREAKING_PREFIXES} == (
        nonbreaking_prefixes.NONBREAKING_PREFIXES[language] | nonbreaking_prefixes.NUMERIC_ONLY_PREFIXES[language]
    )


def test_known_entries():
    assert {"Mr", "Dr", "e.g", "i.e", "Jan"} <= nonbreaking_prefixes.NONBREAKING_PREFIXES["en"]
    assert nonbreaking_prefixes.NUMERIC_ONLY_PREFIXES == {"en": {"No", "Art", "pp"}, "fr": frozenset()}
    assert {"M", "MM", "etc", "c.-à-d", "p.ex", "tél", "éd"} <= nonbreaking_prefixes.NONBREAKING_PREFIXES["fr"]
    assert "Mme" not in nonbreaking_prefixes.NONBREAKING_PREFIXES["fr"]  # in the English list only
    assert "Mme" in nonbreaking_prefixes.NONBREAKING_PREFIXES["en"]


@pytest.mark.parametrize("language, sentence, expected", [
    ("en", "Mr. Smith saw Dr. Who .", "Mr. Smith saw Dr. Who ."),
    ("en", "See No. 5 and Art. 7 .", "See No. 5 and Art. 7 ."),
    ("en", "He said No. Then he left", "He said No . Then he left"),
    ("en", "I like Paris. Then", "I like Paris . Then"),
    ("fr", "Voir p.ex. Paris. Puis etc. Fin", "Voir p.ex. Paris . Puis etc. Fin"),
    ("fr", "Le No. 5 Fin", "Le No . 5 Fin"),  # "No" is numeric-only in English, not a French prefix
])
def test_the_tokenizer_keeps_the_period_of_a_prefix(language, sentence, expected):
    tokens = MosesTokenizer(language).tokenize(tf.constant([sentence]))
    assert " ".join(token.decode() for token in tokens[0].numpy()) == expected
