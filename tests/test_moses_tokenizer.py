"""MosesTokenizer: hand-written Moses cases, agreement with sacremoses, round trip, serving-safe ops."""

import gzip
import re

import pytest
import tensorflow as tf

from data_pipeline import MosesTokenizer

# Expected tokens written from tokenizer.perl's rules (see MosesTokenizer's docstring).
ENGLISH_CASES = [
    ("Hello, world!", ["Hello", ",", "world", "!"]),
    ("It's 3.5 kg for 1,000 people.", ["It", "'s", "3.5", "kg", "for", "1,000", "people", "."]),
    ("I don't know.", ["I", "don", "'t", "know", "."]),
    ("Mr. Smith saw the U.S. on Jan. 5.", ["Mr.", "Smith", "saw", "the", "U.S.", "on", "Jan.", "5", "."]),
    ("See No. 5, not No. More.", ["See", "No.", "5", ",", "not", "No", ".", "More", "."]),
    ("It ends. then goes on.", ["It", "ends.", "then", "goes", "on", "."]),
    ("Wait... what?", ["Wait", "...", "what", "?"]),
    ("the 1990's (roughly)", ["the", "1990", "'s", "(", "roughly", ")"]),
    ('He said "yes".', ["He", "said", '"', "yes", '"', "."]),
    ("state-of-the-art costs $5 or 50%", ["state-of-the-art", "costs", "$", "5", "or", "50", "%"]),
    ("A,B and 5,a", ["A", ",", "B", "and", "5", ",", "a"]),
    ("  spaced \t out\x01  ", ["spaced", "out"]),
    ("", []),
]
FRENCH_CASES = [
    (
        "L'homme qu'il a vu n'est pas là.",
        ["L'", "homme", "qu'", "il", "a", "vu", "n'", "est", "pas", "là", "."],
    ),
    ("Il coûte 3,5 € aujourd'hui.", ["Il", "coûte", "3,5", "€", "aujourd'", "hui", "."]),
    ("« Bonjour\xa0! »", ["«", "Bonjour", "!", "»"]),
    ("M. Dupont est arrivé.", ["M.", "Dupont", "est", "arrivé", "."]),
    ("Le 1er janvier, 1 000 personnes.", ["Le", "1er", "janvier", ",", "1", "000", "personnes", "."]),
    ("l’homme", ["l", "’", "homme"]),
    # A final apostrophe has no right neighbour, so no Moses apostrophe rule applies to it.
    ("C'est-à-dire 'oui'", ["C'", "est-à-dire", "'", "oui'"]),
]



def _tokens(tokenizer, sentences):
    return [[token.decode() for token in row] for row in tokenizer.tokenize(tf.constant(sentences)).to_list()]


@pytest.mark.parametrize("language, cases", [("en", ENGLISH_CASES), ("fr", FRENCH_CASES)])
def test_tokenize_matches_hand_written_moses_tokens(language, cases):
    sentences, expected = zip(*cases)
    assert _tokens(MosesTokenizer(language), list(sentences)) == list(expected)


def test_tokenize_returns_ragged_batch():
    tokens = MosesTokenizer("en").tokenize(tf.constant(["a b.", "c"]))
    assert isinstance(tokens, tf.RaggedTensor)
    assert tokens.dtype == tf.string
    assert tokens.row_lengths().numpy().tolist() == [3, 1]


def test_unknown_language_is_rejected():
    with pytest.raises(ValueError, match="language must be one of"):
        MosesTokenizer("de")


@pytest.mark.parametrize(
    "language, tokens, expected",
    [
        ("en", ["He", "said", '"', "yes", '"', ",", "and", "left", "."], 'He said "yes", and left.'),
        ("en", ["I", "don", "'t", "pay", "$", "5", "(", "or", "10", "%", ")", "."], "I don't pay $5 (or 10%)."),
        ("fr", ["L'", "homme", "qu'", "il", "a", "vu", "?"], "L'homme qu'il a vu ?"),
        ("fr", ["160", "km", "/", "h", ",", "3,5", "€", "."], "160 km/h, 3,5 €."),
    ],
)
def test_detokenize_rejoins_punctuation(language, tokens, expected):
    text = MosesTokenizer(language).detokenize(tf.ragged.constant([tokens]))
    assert text.numpy()[0].decode() == expected


@pytest.mark.parametrize("language", ["en", "fr"])
def test_tokenize_and_detokenize_use_only_serving_safe_ops(language):
    tokenizer = MosesTokenizer(language)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def round_trip(strings):
        return tokenizer.detokenize(tokenizer.tokenize(strings))

    op_types = {op.type for op in round_trip.get_concrete_function().graph.get_operations()}
    assert not {op for op in op_types if "PyFunc" in op}
    # Core TensorFlow kernels only: TF Serving links all of them, and no custom op library is needed.
    assert all(hasattr(tf.raw_ops, op) for op in op_types)


def _newstest2014(data_root, language):
    with gzip.open(data_root / "wmt14" / f"newstest2014.{language}.gz", "rt", encoding="utf-8") as lines:
        return [line.rstrip("\n") for line in lines]


@pytest.mark.parametrize("language", ["en", "fr"])
def test_agrees_with_sacremoses_on_newstest2014(data_root, language):
    sacremoses = pytest.importorskip("sacremoses")
    sentences = _newstest2014(data_root, language)
    reference = sacremoses.MosesTokenizer(lang=language)
    ours = _tokens(MosesTokenizer(language), sentences)
    agree = sum(
        tokens == reference.tokenize(sentence, escape=False) for sentence, tokens in zip(sentences, ours)
    )
    assert agree / len(sentences) >= 0.95


@pytest.mark.parametrize("language", ["en", "fr"])
def test_round_trip_on_newstest2014_loses_only_whitespace(data_root, language):
    sentences = _newstest2014(data_root, language)
    tokenizer = MosesTokenizer(language)
    restored = tokenizer.detokenize(tokenizer.tokenize(tf.constant(sentences))).numpy()
    for sentence, back in zip(sentences, restored):
        assert re.sub(r"\s", "", back.decode()) == re.sub(r"\s", "", sentence)
