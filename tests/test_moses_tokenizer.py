"""MosesTokenizer: hand-written Moses cases in four languages, agreement with sacremoses' tokenizer and detokenizer
(newstest2014 En/Fr, Multi30k De/Cs, quotes, clitics), round trip, rules taken from sacremoses, refusals, serving-safe
ops."""

import gzip
import re

import pytest
import tensorflow as tf

from data_pipeline import MosesTokenizer
from data_pipeline.moses_tokenizer import MosesRules

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
# German and Czech: no apostrophe rules of their own (an apostrophe is a token), their own prefixes.
GERMAN_CASES = [
    ("Ein Mann geht's an, z.B. heute.", ["Ein", "Mann", "geht", "'", "s", "an", ",", "z.B.", "heute", "."]),
    ("Er zahlt 3,50 € usw. Dann geht er.", ["Er", "zahlt", "3,50", "€", "usw.", "Dann", "geht", "er", "."]),
    ("„Hallo“, sagt sie.", ["„", "Hallo", "“", ",", "sagt", "sie", "."]),
]
CZECH_CASES = [
    ("Muž v modrém tričku, tzv. turista.", ["Muž", "v", "modrém", "tričku", ",", "tzv.", "turista", "."]),
    ("Dítě si hraje.", ["Dítě", "si", "hraje", "."]),
]
# Multi30k test sets of other languages, each checked against sacremoses.
OTHER_TEST_SETS = [("de", "test_2016_flickr"), ("de", "test_2017_flickr"), ("cs", "test_2016_flickr")]



def _tokens(tokenizer, sentences):
    return [[token.decode() for token in row] for row in tokenizer.tokenize(tf.constant(sentences)).to_list()]


@pytest.mark.parametrize("language, cases", [
    ("en", ENGLISH_CASES), ("fr", FRENCH_CASES), ("de", GERMAN_CASES), ("cs", CZECH_CASES)])
def test_tokenize_matches_hand_written_moses_tokens(language, cases):
    sentences, expected = zip(*cases)
    assert _tokens(MosesTokenizer(language), list(sentences)) == list(expected)


def test_tokenize_returns_ragged_batch():
    tokens = MosesTokenizer("en").tokenize(tf.constant(["a b.", "c"]))
    assert isinstance(tokens, tf.RaggedTensor)
    assert tokens.dtype == tf.string
    assert tokens.row_lengths().numpy().tolist() == [3, 1]


def test_unknown_language_is_rejected_in_one_line():
    with pytest.raises(ValueError, match=r"^language='xx' is not a language code: give an ISO 639-1 code"):
        MosesTokenizer("xx")


@pytest.mark.parametrize("language", ["zh", "ja", "th", "yue"])
def test_a_language_without_spaces_has_no_moses_words(language):
    with pytest.raises(ValueError, match="written without spaces between words.*--subwords=sentencepiece"):
        MosesTokenizer(language)


def test_rules_come_from_sacremoses_behaviour():
    english, french, italian, german, czech = (MosesRules.of(language) for language in ("en", "fr", "it", "de", "cs"))
    assert english.english_contractions and not english.elisions and not english.space_before_high_punctuation
    assert french.elisions and french.space_before_high_punctuation and not french.english_contractions
    assert italian.elisions and not italian.space_before_high_punctuation
    assert not (german.elisions or german.english_contractions or german.space_before_high_punctuation)
    assert italian.apostrophe == french.apostrophe != german.apostrophe != english.apostrophe
    assert english.possessive_apostrophes and not (french.possessive_apostrophes or german.possessive_apostrophes)
    assert czech.low_high_quotes and not (german.low_high_quotes or english.low_high_quotes)
    assert german.cjk_ranges == english.cjk_ranges
    assert any(first <= ord("東") <= last for first, last in german.cjk_ranges)


@pytest.mark.parametrize(
    "language, tokens, expected",
    [
        ("en", ["He", "said", '"', "yes", '"', ",", "and", "left", "."], 'He said "yes", and left.'),
        ("en", ["I", "don", "'t", "pay", "$", "5", "(", "or", "10", "%", ")", "."], "I don't pay $5 (or 10%)."),
        ("fr", ["L'", "homme", "qu'", "il", "a", "vu", "?"], "L'homme qu'il a vu ?"),
        ("fr", ["160", "km", "/", "h", ",", "3,5", "€", "."], "160 km / h, 3,5 €."),  # detokenizer.perl keeps "/"
        ("it", ["L'", "uomo", "è", "qui", "?"], "L'uomo è qui?"),
        ("de", ["Er", "kommt", "(", "heute", ")", "!", "Oder", "?"], "Er kommt (heute)! Oder?"),
        ("de", ["Ein", "Mann", "geht", "'", "s", "an", "."], "Ein Mann geht 's an."),  # a quote left open opens
        ("de", ["Der", "„", "Bär", "“", "ist", "groß", "."], "Der „Bär“ ist groß."),
        ("cs", ["Žena", "říká", ":", "„", "Ahoj", "!", "“"], "Žena říká: „Ahoj!“"),
        ("en", ["An", "abandoned", "'", "Cafe", "Express", "'", "sign", "."], "An abandoned 'Cafe Express' sign."),
        ("en", ["at", "a", "McDonald", "'s", "."], "at a McDonald's."),
        ("en", ["the", "cat", "'s", "."], "the cat's."),
        ("en", ["the", "Jones", "'", "house"], "the Jones' house"),
    ],
)
def test_detokenize_rejoins_punctuation(language, tokens, expected):
    assert _detokenized(language, [tokens]) == [expected]


def _detokenized(language, token_lists):
    texts = MosesTokenizer(language).detokenize(tf.ragged.constant(token_lists, dtype=tf.string, ragged_rank=1))
    return [text.decode() for text in texts.numpy()]


# Token lists for sacremoses' detokenizer: each of its cases, quotes of every kind paired left to right, and its
# language cases in the languages that have them and those that do not.
DETOKENIZER_CASES = [
    ["Der", "„", "Bär", "“", "sagt", "„", "hallo", "“", ",", "dann", "„", "tschüss", "“", "."],
    ["He", "said", '"', "yes", '"', ",", '"', "no", '"', "and", '"', "maybe"],
    ["Michael", "Jackson", "'s", "'", "Thriller", "'", "video", "."],
    ["the", "Jones", "'", "house", "and", "'", "Jones", "'", "'", "."],
    ["they", "'re", "here", ",", "I", "'m", "sure", ":", "'", "em", "'", "!"],
    ["l'", "homme", "qu'", "l'", "on", "voit", ",", "d'", "?", "aujourd'", "hui"],
    ["Quoi", "?", "(", "!", ")", "«", "Bonjour", "»", ":", "50", "%", ";", "a", "\\", "b", "?!"],
    ["Der", "‚", "Bär", "‘", "und", "«", "Hund", "»", "."],
    ["“", "a", "„", "b", '"', "c", '"', "“", "d", '"'],
    ["$", "5", "or", "¢", "3", "[", "a", "]", "{", "b", "}", "¿", "Qué", "?", "¡", "Hola", "!"],
    ["``", "a", "''", "b", "``", "c", "`", "d", "`", "e", "''", "f", "''"],
    ["a", "@-@", "b", "km", "/", "h", "...", "1,000", "."],
    ["東京", "大学", "is", "in", "東京", "."],
    [],
]


@pytest.mark.parametrize("language", ["en", "fr", "it", "de", "cs", "es"])
def test_detokenize_agrees_with_sacremoses(language):
    import sacremoses

    reference = sacremoses.MosesDetokenizer(lang=language)
    assert _detokenized(language, DETOKENIZER_CASES) == [reference.detokenize(tokens) for tokens in DETOKENIZER_CASES]


@pytest.mark.parametrize("language, sentence", [
    ("de", "Der „Bär“ ist groß."),
    ("cs", "Žena říká: „Ahoj!“"),
    ("en", "An abandoned 'Cafe Express' sign is now covered in graffiti."),
    ("en", "A crowd of people fill the street in front of a McDonald's."),
    ("en", "The cat's."),
    ("en", "Hopefully when I mix these I 'll still have eyebrows."),
    ("fr", "Une famille est assise dans un parc sur l\"herbe."),
])
def test_round_trip_of_reviewed_sentences_is_sacremoses_detokenization(language, sentence):
    import sacremoses

    tokens = _tokens(MosesTokenizer(language), [sentence])[0]
    back = _detokenized(language, [tokens])[0]
    assert back == sacremoses.MosesDetokenizer(lang=language).detokenize(tokens)
    assert re.sub(r"\s", "", back) == re.sub(r"\s", "", sentence)


@pytest.mark.parametrize("language", ["en", "fr", "de"])
def test_tokenize_and_detokenize_use_only_serving_safe_ops(language):
    tokenizer = MosesTokenizer(language)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def round_trip(strings):
        return tokenizer.detokenize(tokenizer.tokenize(strings))

    op_types = {op.type for op in round_trip.get_concrete_function().graph.get_operations()}
    assert not {op for op in op_types if "PyFunc" in op}
    # Core TensorFlow kernels only: TF Serving links all of them, and no custom op library is needed.
    assert all(hasattr(tf.raw_ops, op) for op in op_types)


def _multi30k(data_root, split, language):
    with gzip.open(data_root / "multi30k" / f"{split}.{language}.gz", "rt", encoding="utf-8") as lines:
        return [line.rstrip("\n") for line in lines]


def _agreement(sentences, language):
    """The share of `sentences` our tokenizer cuts exactly as sacremoses (unescaped) does."""
    import sacremoses

    reference = sacremoses.MosesTokenizer(lang=language)
    ours = _tokens(MosesTokenizer(language), sentences)
    return sum(tokens == reference.tokenize(sentence, escape=False) for sentence, tokens in zip(sentences, ours)) / len(
        sentences)


@pytest.mark.parametrize("language, split", OTHER_TEST_SETS)
def test_agrees_with_sacremoses_on_multi30k_of_other_languages(data_root, language, split):
    assert _agreement(_multi30k(data_root, split, language), language) >= 0.95


def _sacremoses_joins_every_number(tokens):
    """Whether sacremoses' Czech case for decimal numbers ("3 , 5" -> "3,5") joins every number token of `tokens`
    from the third on to the token before: it reads the last two tokens of the sentence where detokenizer.perl reads
    the two before the number (`tokens[-2]` for `$words[$i-2]`), so "číslem 4 ." becomes "číslem4." (docs/data.md).
    Ours has no such case: the tokenizer never cuts a decimal number at its point or comma."""
    return len(tokens) > 3 and tokens[-2].isdigit() and tokens[-1] in (".", ",")


def _detokenization_agreement(sentences, language):
    """The lines of `sentences` whose tokens (ours) our detokenizer joins otherwise than sacremoses' does, leaving out
    Czech lines that sacremoses' number case spoils."""
    import sacremoses

    reference = sacremoses.MosesDetokenizer(lang=language)
    tokenizer = MosesTokenizer(language)
    token_lists = _tokens(tokenizer, sentences)
    ours = [text.decode() for text in tokenizer.detokenize(tokenizer.tokenize(tf.constant(sentences))).numpy()]
    return [(back, reference.detokenize(tokens)) for tokens, back in zip(token_lists, ours)
            if back != reference.detokenize(tokens)
            and not (language == "cs" and _sacremoses_joins_every_number(tokens))]


@pytest.mark.parametrize("language, split", OTHER_TEST_SETS)
def test_detokenize_agrees_with_sacremoses_on_multi30k_of_other_languages(data_root, language, split):
    assert _detokenization_agreement(_multi30k(data_root, split, language), language) == []


@pytest.mark.parametrize("language, split", OTHER_TEST_SETS)
def test_round_trip_on_other_languages_loses_only_whitespace(data_root, language, split):
    sentences = _multi30k(data_root, split, language)
    tokenizer = MosesTokenizer(language)
    restored = tokenizer.detokenize(tokenizer.tokenize(tf.constant(sentences))).numpy()
    for sentence, back in zip(sentences, restored):
        assert re.sub(r"\s", "", back.decode()) == re.sub(r"\s", "", sentence)


def _newstest2014(data_root, language):
    with gzip.open(data_root / "wmt14" / f"newstest2014.{language}.gz", "rt", encoding="utf-8") as lines:
        return [line.rstrip("\n") for line in lines]


@pytest.mark.parametrize("language", ["en", "fr"])
def test_agrees_with_sacremoses_on_newstest2014(data_root, language):
    assert _agreement(_newstest2014(data_root, language), language) >= 0.95


@pytest.mark.parametrize("language", ["en", "fr"])
def test_detokenize_agrees_with_sacremoses_on_newstest2014(data_root, language):
    assert _detokenization_agreement(_newstest2014(data_root, language), language) == []


@pytest.mark.parametrize("language", ["en", "fr"])
def test_round_trip_on_newstest2014_loses_only_whitespace(data_root, language):
    sentences = _newstest2014(data_root, language)
    tokenizer = MosesTokenizer(language)
    restored = tokenizer.detokenize(tokenizer.tokenize(tf.constant(sentences))).numpy()
    for sentence, back in zip(sentences, restored):
        assert re.sub(r"\s", "", back.decode()) == re.sub(r"\s", "", sentence)
