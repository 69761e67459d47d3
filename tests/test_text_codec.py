"""TextCodec: the word-level codec is the Moses tokenizer and the shortlist; the SentencePiece codec equals the
`sentencepiece` library in-graph, spells any text, round-trips it, and groups its pieces into words; bad codec
files are named."""

import json
import re

import numpy as np
import pytest
import sentencepiece
import tensorflow as tf

from data_pipeline import constants
from data_pipeline import text_codec
from data_pipeline.moses_tokenizer import MosesTokenizer
from data_pipeline.text_codec import TextCodec
from data_pipeline.vocabulary import Vocabulary
from helpers.subword_test_data import RARE_SENTENCE

SENTENCES = ["A man in an orange hat starring at something.", "Deux hommes à vélo, près d'un lac.", "", "  x  "]


@pytest.fixture(scope="module")
def subword_files(tmp_path_factory, data_root):
    """A joint BPE model of 1,000 pieces learned from 3,000 Multi30k pairs, and its vocabulary file."""
    import gzip

    folder = tmp_path_factory.mktemp("codec")
    inputs = []
    for language in ("en", "fr"):
        with gzip.open(data_root / "multi30k" / f"train.{language}.gz", "rt", encoding="utf-8") as stream:
            lines = [line for _, line in zip(range(3000), stream)]
        (folder / f"train.{language}").write_text("".join(lines), encoding="utf-8")
        inputs.append(folder / f"train.{language}")
    model = folder / "spm.model"
    text_codec.learn_sentencepiece(inputs, model, "bpe", 1000, seed=1)
    vocabulary = folder / "vocab.tsv"
    Vocabulary.write_pieces(vocabulary, text_codec.sentencepiece_pieces(model), {}, 0)
    return model, vocabulary


@pytest.fixture(scope="module")
def codec(subword_files):
    model, vocabulary = subword_files
    return TextCodec("en", vocabulary, "sentencepiece", model)


def _strings(ragged):
    return [[token.decode("utf-8") for token in row] for row in ragged.to_list()]


def test_the_word_level_codec_is_the_moses_tokenizer_and_the_shortlist(tmp_path):
    vocabulary = tmp_path / "vocab.tsv"
    Vocabulary.write(vocabulary, {"a": 3, "man": 2, ".": 2}, 10, 2)
    codec = TextCodec("en", vocabulary)
    tokens = codec.tokenize(tf.constant(SENTENCES))
    assert tokens.to_list() == MosesTokenizer("en").tokenize(tf.constant(SENTENCES)).to_list()
    assert codec.encode(tf.constant(["a man ."]))[0].numpy().tolist() == [4, 6, 5]  # "." before "man" (tie)
    assert codec.lookup(tf.constant(["hat"])).numpy().tolist() == [constants.UNK_ID]
    np.testing.assert_array_equal(codec.detokenize(tokens), MosesTokenizer("en").detokenize(tokens))
    assert codec.starts_word(tf.constant(["a", "man"])).numpy().all() and not codec.is_subword and codec.has_unknown
    assert codec.description() == {"kind": "moses", "language": "en", "vocabulary": "vocab.tsv"}
    assert _strings(codec.tokenize_prefix(tf.constant(["le <unk> chat"]))) == [["le", "<unk>", "chat"]]


def test_sentencepiece_in_graph_equals_the_library(codec, subword_files, data_root):
    processor = sentencepiece.SentencePieceProcessor(model_file=str(subword_files[0]))
    import gzip

    with gzip.open(data_root / "multi30k" / "test_2016_flickr.en.gz", "rt", encoding="utf-8") as stream:
        sentences = [line.rstrip("\n") for _, line in zip(range(300), stream)] + [RARE_SENTENCE]
    ids = codec.encode(tf.constant(sentences)).to_list()
    assert ids == [processor.encode(sentence) for sentence in sentences]
    assert constants.UNK_ID not in {token for row in ids for token in row}  # byte fallback spells everything
    assert [text.decode("utf-8") for text in codec.detokenize(codec.tokenize(tf.constant(sentences))).numpy()] == [
        processor.decode(row) for row in ids]


def test_the_segmentation_sampler_cuts_the_same_text_otherwise_and_needs_sentencepiece(codec, subword_files):
    processor = sentencepiece.SentencePieceProcessor(model_file=str(subword_files[0]))
    sample = codec.segmentation_sampler(0.3)  # BPE-dropout: each merge dropped with probability 0.3
    fixed = processor.encode(SENTENCES[0])  # the vocabulary's ids are the model's ids
    samples = {tuple(sample(tf.constant(fixed)).numpy().tolist()) for _ in range(20)}
    assert len(samples) > 1 and all(processor.decode(list(ids)) == SENTENCES[0] for ids in samples), samples
    with pytest.raises(ValueError, match="subword sampling needs a SentencePiece codec; the en codec is moses"):
        TextCodec("en").segmentation_sampler(0.1)
    with pytest.raises(ValueError, match="subword sampling takes alpha > 0, got 0"):
        codec.segmentation_sampler(0)


def test_sentencepiece_round_trips_names_numbers_and_rare_characters(codec):
    sentences = [RARE_SENTENCE, "Zoë paid 1,250.75 € for 3 crêpes at 10:45 — ok?", "Ω≈ç√ 東京"]
    tokens = codec.tokenize(tf.constant(sentences))
    assert [text.decode("utf-8") for text in codec.detokenize(tokens).numpy()] == sentences
    pieces = _strings(tokens)[0]
    assert "▁" + "1" not in pieces and ["1", "9", "6", "1"] == [piece for piece in pieces if piece.isdigit()]
    assert codec.is_subword and not codec.has_unknown
    assert codec.description()["kind"] == "sentencepiece" and codec.description()["model"] == "spm.model"


def test_pieces_are_grouped_into_the_words_of_the_text(codec):
    tokens = codec.tokenize(tf.constant([RARE_SENTENCE, "", "a cat"]))
    padded = tf.concat([tokens, tf.ragged.constant([["</s>"]] * 3)], axis=1).to_tensor("")  # [3, length]
    words, word_index = codec.words(padded)
    expected = [RARE_SENTENCE.split() + ["</s>"], ["</s>"], ["a", "cat", "</s>"]]
    for row, sentence in enumerate(expected):
        assert [word.decode("utf-8") for word in words[row].numpy()] == sentence + [""] * (words.shape[1] - len(sentence))
        index = word_index[row].numpy()
        present = padded[row].numpy() != b""
        assert index[present].tolist() == sorted(index[present].tolist()) and index[present].max() == len(sentence) - 1
        assert (index[~present] == -1).all()
    assert codec.token_text(tf.constant(["▁chat", "s", "</s>"])).numpy().tolist() == [b" chat", b"s", b"</s>"]


def test_folders_written_before_codecs_are_word_level():
    assert text_codec.codec_descriptions({"source_language": "en", "target_language": "fr"}) == {
        "source": {"kind": "moses", "language": "en", "vocabulary": "source_vocab.tsv"},
        "target": {"kind": "moses", "language": "fr", "vocabulary": "target_vocab.tsv"},
    }


def test_bad_codec_files_are_named(subword_files, tmp_path):
    model, vocabulary = subword_files
    with pytest.raises(FileNotFoundError, match=rf"{tmp_path}/missing.model is missing: .*rnnsearch build-data"):
        TextCodec("en", vocabulary, "sentencepiece", tmp_path / "missing.model")
    (tmp_path / "corrupt.model").write_bytes(model.read_bytes()[:100])
    with pytest.raises(ValueError, match=rf"{tmp_path}/corrupt.model is not a SentencePiece model"):
        TextCodec("en", vocabulary, "sentencepiece", tmp_path / "corrupt.model")
    other = tmp_path / "other.tsv"
    entries = Vocabulary.read_entries(vocabulary)
    Vocabulary.write_entries(other, entries[:4] + entries[5:] + entries[4:5])
    with pytest.raises(ValueError, match=rf"{other} does not list the pieces of {model} in its order"):
        TextCodec("en", other, "sentencepiece", model)
    with pytest.raises(ValueError, match="codec kind must be one of"):
        TextCodec("en", vocabulary, "wordpiece")
    with pytest.raises(ValueError, match="a sentencepiece codec takes a model_file"):
        TextCodec("en", vocabulary, "sentencepiece")
    assert json.loads(json.dumps(TextCodec("en", vocabulary, "sentencepiece", model).description()))["model"] == (
        "spm.model")


def test_text_becomes_ids_in_one_place():
    """The Moses tokenizer is built by the codec only, and vocabulary files are parsed by `Vocabulary` only: no
    command tokenizes, or reads a vocabulary, on its own."""
    from conftest import REPO_ROOT

    sources = {str(path.relative_to(REPO_ROOT)): path.read_text(encoding="utf-8")
               for package in ("data_pipeline", "rnnsearch_tf", "serving", "bench")
               for path in (REPO_ROOT / package).rglob("*.py")}
    ours = re.compile(r"(?<!sacremoses\.)MosesTokenizer\(")  # sacremoses' own is the rules' source, not a codec
    assert sorted(name for name, text in sources.items() if ours.search(text)) == ["data_pipeline/text_codec.py"]
    opened = re.compile(r"(open|GFile)\([^)]*vocab")  # a vocabulary file opened to be read or written
    assert sorted(name for name, text in sources.items() if opened.search(text)) == []


@pytest.fixture(scope="module")
def chinese_codec(tmp_path_factory, data_root):
    """A SentencePiece codec of 4,000 pieces learned from the Chinese side of Tatoeba cmn-eng."""
    import gzip

    folder = tmp_path_factory.mktemp("chinese")
    with gzip.open(data_root / "tatoeba" / "cmn-eng.tsv.gz", "rt", encoding="utf-8") as stream:
        lines = [line.rstrip("\n").split("\t")[1] for _, line in zip(range(6000), stream)]
    (folder / "train.zh").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    model, vocabulary = folder / "spm.model", folder / "vocab.tsv"
    text_codec.learn_sentencepiece([folder / "train.zh"], model, "bpe", 4000, seed=1)
    Vocabulary.write_pieces(vocabulary, text_codec.sentencepiece_pieces(model), {}, 0)
    return TextCodec("zh", vocabulary, "sentencepiece", model), lines


def test_chinese_text_reads_back_exactly_full_width_punctuation_included(chinese_codec):
    codec, lines = chinese_codec
    back = [text.decode("utf-8") for text in codec.detokenize(codec.tokenize(tf.constant(lines))).numpy()]
    assert back == lines  # NFKC normalisation would have turned "？" into "?" in about one line in five
    assert sum("？" in line or "，" in line for line in lines) > 900


def test_counting_tokens_are_moses_words_or_the_characters_of_a_script_without_spaces():
    words = text_codec.counting_tokens(tf.constant(["Ein Mann, z.B. heute."]), "de")
    characters = text_codec.counting_tokens(tf.constant(["我很 好。"]), "zh")
    assert _strings(words) == [["Ein", "Mann", ",", "z.B.", "heute", "."]]
    assert _strings(characters) == [["我", "很", "好", "。"]]


def test_a_language_is_a_checked_code_and_words_need_spaces():
    with pytest.raises(ValueError, match="language='english' is not a language code"):
        TextCodec("english")
    with pytest.raises(ValueError, match="Chinese is written without spaces between words.*--subwords=sentencepiece"):
        TextCodec("zh")


def test_a_piece_continues_a_word_when_it_starts_with_a_letter_or_digit_and_no_word_start(codec):
    pieces = ["▁dog", "s", "9", "é", ",", "'", "▁", "</s>", "<unk>", "<0xE9>"]
    assert codec.continues_word(tf.constant(pieces)).numpy().tolist() == [
        False, True, True, True, False, False, False, False, False, False]
    ragged = tf.ragged.constant([["▁dog", "s"], ["▁the"]])
    assert tf.ragged.map_flat_values(codec.continues_word, ragged).to_list() == [[False, True], [False]]
    assert not TextCodec("en").continues_word(tf.constant(["s", "dog"])).numpy().any()  # a Moses token is a word


def test_each_chinese_piece_is_a_word_but_latin_pieces_go_on_their_word(chinese_codec):
    codec, _ = chinese_codec
    assert codec.starts_word(tf.constant(["▁Py", "thon", "在", "</s>"])).numpy().tolist() == [True, False, True, True]
    pieces = codec.tokenize(tf.constant(["他们在哪里？"]))
    padded = tf.concat([pieces, tf.ragged.constant([["</s>"]])], axis=1).to_tensor("")  # [1, length]
    words, _ = codec.words(padded)
    texts = [word.decode("utf-8") for word in words[0].numpy()]
    assert len(texts) == pieces.row_lengths()[0] + 1 > 3 and "".join(texts[:-1]) == "他们在哪里？"


def test_a_lowercasing_codec_reads_text_of_any_case_as_the_same_lower_cased_tokens(tmp_path):
    vocabulary = tmp_path / "vocab.tsv"
    Vocabulary.write(vocabulary, {"ein": 3, "mann": 2, "über": 2, ".": 2}, 10, 2)
    codec = TextCodec("de", vocabulary, lowercase=True)
    tokens = _strings(codec.tokenize(tf.constant(["EIN Mann ÜBER.", "ein mann über."])))
    assert tokens[0] == tokens[1] == ["ein", "mann", "über", "."]
    assert codec.encode(tf.constant(["Ein MANN"]))[0].numpy().tolist() == codec.lookup(
        tf.constant(["ein", "mann"])).numpy().tolist() != [constants.UNK_ID] * 2
    assert _strings(codec.tokenize_prefix(tf.constant(["Ein <unk> Mann"]))) == [["ein", "<unk>", "mann"]]
    assert codec.description() == {"kind": "moses", "language": "de", "vocabulary": "vocab.tsv", "lowercase": True}
    assert TextCodec.from_description(codec.description(), tmp_path).lowercase
    assert not TextCodec.from_description(TextCodec("de", vocabulary).description(), tmp_path).lowercase
    # Every script's letters, as Python's str.lower (the SentencePiece model is learned from the same text).
    text = ["ÜBER STRASSE İstanbul ΣΟΦΟΣ ЖИЗНЬ Ｆｕｌｌ 北京"]
    assert text_codec.lowercase(tf.constant(text)).numpy()[0].decode() == text[0].lower()


def test_tabs_and_line_breaks_reach_sentencepiece_as_spaces(codec):
    """SentencePiece keeps a tab as text (a piece no tab-separated file can hold); the codec makes it a space
    first, as the model was learned. Other scripts' spaces stay as written; Moses splits at all of them."""
    assert _strings(codec.tokenize(tf.constant(["a\tb", "a\u2028b\x0bc\r"]))) == _strings(
        codec.tokenize(tf.constant(["a b", "a b c "])))
    assert _strings(codec.tokenize(tf.constant(["a\tb"]))) == [["▁a", "▁b"]]
    normalized = text_codec.normalized(tf.constant(["A\tb\u00a0c\u3000d\x85e"]), "sentencepiece", lowercased=True)
    assert normalized.numpy()[0].decode() == "a b\u00a0c\u3000d e"
    assert text_codec.normalized(tf.constant(["a\tb"]), "moses").numpy().tolist() == [b"a\tb"]
    assert _strings(TextCodec("en").tokenize(tf.constant(["a\tb\u2028c"]))) == [["a", "b", "c"]]


def test_a_vocabulary_smaller_than_the_texts_characters_names_the_flag_and_the_size_it_needs(tmp_path):
    characters = [chr(0x4E00 + i) for i in range(100)]  # 100 characters, each a piece of its own
    text = tmp_path / "train.zh"
    text.write_text("".join("".join(characters[i:i + 10]) + "\n" for i in range(0, 100, 10)) * 5, encoding="utf-8")
    with pytest.raises(ValueError, match=r"^--subword_vocabulary_size=300 is too small for this text: its characters "
                                         r"and the reserved, byte and digit pieces need at least \d+$") as error:
        text_codec.learn_sentencepiece([text], tmp_path / "spm.model", "bpe", 300, seed=1)
    needed = int(str(error.value).rsplit(" ", 1)[1])
    assert needed > 300 and not (tmp_path / "spm.model").exists()
    text_codec.learn_sentencepiece([text], tmp_path / "spm.model", "bpe", needed, seed=1)  # the size it named
    assert "\u4e00" in text_codec.sentencepiece_pieces(tmp_path / "spm.model")
