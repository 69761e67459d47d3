"""verbatim_terms: the numbers and names of a sentence, by their form and, with a codec, by what the model knows."""

import collections

import tensorflow as tf

from data_pipeline.text_codec import SENTENCEPIECE, TextCodec, learn_sentencepiece, sentencepiece_pieces
from data_pipeline.vocabulary import Vocabulary
from rnnsearch_tf.inference.verbatim_terms import rare_words, verbatim_terms, verbatim_terms_of


def test_names_after_the_first_word_and_numbers_are_kept_once():
    assert verbatim_terms("The Brakkenfeld family visited Tromsø in 1961.") == ["Brakkenfeld", "Tromsø", "1961"]
    assert verbatim_terms("Dreyth sees Dreyth and 12 dogs, then 12 more.") == ["Dreyth", "12"]  # mid-sentence
    assert verbatim_terms("A man named O'Neill-Smith rides bus 7 at 10:30 for 2.5 km, 3,500 m.") == [
        "O'Neill-Smith", "7", "10:30", "2.5", "3,500"]


def test_lone_letters_and_lower_case_words_are_not_terms():
    assert verbatim_terms("Then I saw a dog.") == []
    assert verbatim_terms("a man with an mp3 player and a B52 bomber") == ["B52"]  # a code: kept
    assert verbatim_terms("") == []


def test_a_capitalised_first_word_is_a_name_only_when_told():
    assert verbatim_terms("Kenythwix plays for 56 people.") == ["56"]
    assert verbatim_terms("Kenythwix plays for 56 people.", first_is_name=True) == ["Kenythwix", "56"]
    assert verbatim_terms("I play.", first_is_name=True) == []  # a lone letter is never a name


def _sentencepiece_codec(tmp_path):
    """A small BPE codec learned from sentences where "the", "two", "dog" and "tom" are frequent."""
    text = tmp_path / "train.txt"
    words = ["the", "two", "dog", "tom", "runs", "and", "plays", "with", "a", "ball", "in", "park", "red"]
    text.write_text("\n".join(" ".join(words[(i * 7 + j * 3) % len(words)] for j in range(8)) for i in range(400))
                    + "\n", encoding="utf-8")
    model = tmp_path / "spm.model"
    learn_sentencepiece([text], model, "bpe", 300, seed=1)
    vocabulary = tmp_path / "vocab.tsv"
    Vocabulary.write_pieces(vocabulary, sentencepiece_pieces(model), {}, 0)
    return TextCodec("en", str(vocabulary), SENTENCEPIECE, str(model))


def test_the_first_word_is_a_name_when_the_subword_model_cuts_it_into_pieces(tmp_path):
    codec = _sentencepiece_codec(tmp_path)
    assert codec.tokenize(tf.constant(["tom", "zyxwvq"])).row_lengths().numpy().tolist()[0] == 1
    sentences = ["Tom plays with Dreyth.", "Zyxwvq runs in 1961.", "Zyxwvq's dog runs.", "\"Zyxwvq\" runs.",
                 "I'm Zyxwvq.", "12 dogs run.", ""]
    assert verbatim_terms_of(sentences, codec) == [
        ["Dreyth"], ["Zyxwvq", "1961"], ["Zyxwvq's"], ["Zyxwvq"], ["Zyxwvq"], ["12"], []]
    assert verbatim_terms_of(sentences) == [verbatim_terms(sentence) for sentence in sentences]
    assert rare_words(codec, ["The", "Zyxwvq", ""]) == [False, True, False]


def test_the_first_word_is_a_name_when_a_word_vocabulary_lacks_it(tmp_path):
    vocabulary = tmp_path / "vocab.tsv"
    Vocabulary.write(vocabulary, {"the": 3, "dog": 2, "tom": 2, "runs": 2, ".": 2}, 10, 2)
    codec = TextCodec("en", str(vocabulary))
    assert rare_words(codec, ["The", "Tom", "Brakkenfeld"]) == [False, False, True]
    assert verbatim_terms_of(["Tom runs.", "Brakkenfeld runs."], codec) == [[], ["Brakkenfeld"]]


def test_german_nouns_the_vocabulary_knows_are_not_names(tmp_path):
    """German capitalises every noun: a capitalised word is a name only when the model finds it rare."""
    sentences = ["Der Mann sieht den Hund.", "Ein Hund läuft über die Straße.", "Die Frau und der Mann gehen.",
                 "Mit dem Hund geht ein Kind in die Stadt.", "Zwei Kinder sehen den Hund."]
    codec = TextCodec("de")
    counts = collections.Counter(token.decode() for row in codec.tokenize(tf.constant(sentences)).to_list()
                                 for token in row)
    vocabulary = tmp_path / "vocab.tsv"
    Vocabulary.write(vocabulary, counts, len(counts), len(sentences))
    codec = TextCodec("de", str(vocabulary))
    assert verbatim_terms_of(["Ein Mann geht mit dem Hund nach Trondheim.", "Hund und Straße, 12 Kinder.",
                              "Kenythwix sieht Brakkenfeld."], codec) == [
        ["Trondheim"], ["12"], ["Kenythwix", "Brakkenfeld"]]
    assert rare_words(codec, ["Hund", "Straße", "Mann", "Trondheim"]) == [False, False, False, True]
    assert verbatim_terms("Ein Mann geht mit dem Hund nach Trondheim.") == ["Mann", "Hund", "Trondheim"]  # form only
