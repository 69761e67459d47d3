"""data_pipeline/nonbreaking_prefixes.py: the Moses nonbreaking prefix lists of any language are those the
installed sacremoses reads (numeric-only words kept apart), and the tokenizer applies them: "Mr." stays one
token, "No." only before a number, German "usw." in German only."""

import pytest
import tensorflow as tf

from data_pipeline import nonbreaking_prefixes
from data_pipeline.moses_tokenizer import MosesTokenizer

LANGUAGES = ("en", "fr", "de", "cs", "it", "pt")


def test_english_and_french_lists_are_the_moses_files():
    english, english_numeric = nonbreaking_prefixes.prefixes("en")
    french, french_numeric = nonbreaking_prefixes.prefixes("fr")
    assert {"Mr", "Dr", "e.g", "i.e", "Jan", "Mme"} <= english and english_numeric == {"No", "Art", "pp"}
    assert {"M", "MM", "etc", "c.-à-d", "p.ex", "tél", "éd"} <= french and french_numeric == frozenset()
    assert "Mme" not in french  # in the English file only


@pytest.mark.parametrize("language", LANGUAGES)
def test_prefixes_are_words_without_their_period_or_spaces(language):
    nonbreaking, numeric_only = nonbreaking_prefixes.prefixes(language)
    assert nonbreaking and nonbreaking_prefixes.has_own_list(language)
    assert all(word and not word.endswith(".") and word == word.strip() and " " not in word
               for word in nonbreaking | numeric_only)
    assert not any(word.startswith("#") for word in nonbreaking)  # comments are not prefixes


@pytest.mark.parametrize("language", LANGUAGES)
def test_lists_are_those_sacremoses_reads(language):
    import sacremoses

    reference = sacremoses.MosesTokenizer(lang=language)
    nonbreaking, numeric_only = nonbreaking_prefixes.prefixes(language)
    assert set(reference.NUMERIC_ONLY_PREFIXES) == numeric_only
    # sacremoses keeps numeric-only lines as "No #NUMERIC_ONLY#": never equal to a word, so not a prefix
    assert {line for line in reference.NONBREAKING_PREFIXES if " " not in line} == nonbreaking


def test_german_and_czech_have_their_own_abbreviations():
    assert {"z.B", "usw", "Nr"} & nonbreaking_prefixes.prefixes("de")[0] >= {"z.B", "usw"}
    assert {"např", "tzv"} <= nonbreaking_prefixes.prefixes("cs")[0]


def test_a_language_without_a_file_takes_the_english_list_as_moses_does():
    assert not nonbreaking_prefixes.has_own_list("sw")
    assert nonbreaking_prefixes.prefixes("sw") == nonbreaking_prefixes.prefixes("en")


@pytest.mark.parametrize("language, sentence, expected", [
    ("en", "Mr. Smith saw Dr. Who .", "Mr. Smith saw Dr. Who ."),
    ("en", "See No. 5 and Art. 7 .", "See No. 5 and Art. 7 ."),
    ("en", "He said No. Then he left", "He said No . Then he left"),
    ("en", "I like Paris. Then", "I like Paris . Then"),
    ("fr", "Voir p.ex. Paris. Puis etc. Fin", "Voir p.ex. Paris . Puis etc. Fin"),
    ("fr", "Le No. 5 Fin", "Le No . 5 Fin"),  # "No" is numeric-only in English, not a French prefix
    ("de", "Er kam z.B. gestern. Dann ging er", "Er kam z.B. gestern . Dann ging er"),
    ("en", "Er kam z.B. gestern. Dann", "Er kam z.B. gestern . Dann"),  # "z.B" holds a period and a letter
    ("de", "Siehe usw. Dann", "Siehe usw. Dann"),
    ("en", "Siehe usw. Dann", "Siehe usw . Dann"),  # a German prefix only
])
def test_the_tokenizer_keeps_the_period_of_a_prefix(language, sentence, expected):
    tokens = MosesTokenizer(language).tokenize(tf.constant([sentence]))
    assert " ".join(token.decode() for token in tokens[0].numpy()) == expected


@pytest.mark.parametrize("variety, language, sentence", [
    ("ekk", "et", "Kohtusin kapt. Tammega ."),  # "kapt" (kapten): an Estonian prefix
    ("lvs", "lv", "Tikos ar prof. Bērziņu ."),  # "prof": a Latvian one
])
def test_an_iso_639_3_variety_has_its_languages_prefixes_not_the_english_ones(variety, language, sentence):
    """Standard Estonian and Standard Latvian are scored as et and lv (`languages.base_language`); sacremoses knows
    only the two-letter codes, and gave them the English list."""
    assert nonbreaking_prefixes.has_own_list(variety)
    assert nonbreaking_prefixes.prefixes(variety) == nonbreaking_prefixes.prefixes(language)
    assert nonbreaking_prefixes.prefixes(variety) != nonbreaking_prefixes.prefixes("en")
    tokens = [MosesTokenizer(code).tokenize(tf.constant([sentence]))[0].numpy().tolist()
              for code in (variety, language, "en")]
    assert tokens[0] == tokens[1] != tokens[2]
