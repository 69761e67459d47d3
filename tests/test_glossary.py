"""Glossary and constraints files (`rnnsearch_tf.inference.glossary`): a malformed line is named with its file
and line number; terms are found on the source codec's tokens (Moses words, SentencePiece pieces ending a
word; the characters of a language without spaces), longest first, once per line, case folded as Unicode does;
the constraints file's phrases; the report of skipped and unmet ones."""

import pytest
import tensorflow as tf

from data_pipeline import text_codec
from data_pipeline.text_codec import TextCodec
from helpers.toy_translation import write_corpus
from rnnsearch_tf.inference.glossary import (Glossary, TerminologyFileError, constraint_report, merge_constraints,
                                             read_constraints, read_glossary)


@pytest.fixture(scope="module")
def sentencepiece_codec(tmp_path_factory):
    """An English BPE codec of 400 pieces learned on the toy corpus (tokenization only: no vocabulary)."""
    folder = tmp_path_factory.mktemp("glossary")
    source, _ = write_corpus(folder / "raw", train_pairs=2000)["train"]
    text_codec.learn_sentencepiece([source], folder / "en.model", "bpe", 400, seed=1)
    return TextCodec("en", None, text_codec.SENTENCEPIECE, folder / "en.model")


def _write(path, text):
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def test_a_glossary_skips_comments_and_blank_lines_and_trims_terms(tmp_path):
    path = _write(tmp_path / "terms.tsv", "\ufeff# source\ttarget\n\nblack dog \t chien noir\r\n  \ncat\tchat\n")
    assert read_glossary(path) == ([("black dog", "chien noir"), ("cat", "chat")], [3, 5])


@pytest.mark.parametrize("line, problem", [
    ("black dog chien noir", r"expected 'source term<TAB>target term', got 'black dog chien noir' \(no TAB\)"),
    ("dog\tchien\tnoun", r"expected 'source term<TAB>target term', got 'dog\\tchien\\tnoun' \(2 TABs\)"),
    (" \tchien", r"the source term is empty"),
    ("dog\t  ", r"the target term is empty"),
    (b"caf\xe9\tcafe", r"not UTF-8 \(invalid continuation byte at byte 3\)"),
])
def test_a_malformed_glossary_line_is_named_by_file_and_number(tmp_path, line, problem):
    line = line if isinstance(line, bytes) else line.encode()
    path = _write(tmp_path / "terms.tsv", b"# terms\ncat\tchat\n" + line)
    with pytest.raises(TerminologyFileError, match=f"^{tmp_path / 'terms.tsv'} line 3: {problem}") as raised:
        read_glossary(path)
    assert isinstance(raised.value, ValueError)  # the commands' one-line user error (cli/errors.py)
    assert raised.value.number == 3


def test_a_source_term_without_tokens_is_named_by_its_line(tmp_path):
    path = _write(tmp_path / "terms.tsv", "cat\tchat\n\x07\tbip\n")
    with pytest.raises(ValueError, match=f"{tmp_path / 'terms.tsv'} line 2: the source term has no tokens"):
        Glossary.from_file(path, TextCodec("en"))


def test_word_level_terms_match_moses_tokens_longest_first_once_per_line():
    glossary = Glossary([("black dog", "chien noir"), ("dog", "chien"), ("U.S.", "É.-U."), ("Dog", "Chien"),
                         ("dog", "toutou"), ("hound", "chien")], TextCodec("en"))
    assert glossary.constraints([
        "The black dog, barking, sees a dog.",  # the longest term at a token wins; "dog," is the token "dog"
        "dogs and a hotdog",  # tokens, not characters
        "A dog sees a hound and a dog.",  # a term found twice and two terms of one target: one constraint
        "Dog in the U.S. army",
        "",
    ]) == [["chien noir", "chien"], [], ["chien"], ["Chien", "É.-U."], []]
    assert len(glossary) == 6


def test_ignore_case_matches_terms_whatever_their_case():
    entries = [("Black Dog", "chien noir"), ("cat", "chat")]
    assert Glossary(entries, TextCodec("en")).constraints(["a black dog and a CAT"]) == [[]]
    assert Glossary(entries, TextCodec("en"), ignore_case=True).constraints(["a black dog and a CAT"]) == [
        ["chien noir", "chat"]]


def test_sentencepiece_terms_match_pieces_that_end_a_word(sentencepiece_codec):
    pieces = [token.decode() for token in sentencepiece_codec.tokenize(tf.constant(["Brakkenfeld"]))[0].numpy()]
    assert len(pieces) > 1 and pieces[0].startswith(text_codec.WORD_START)  # a term of several pieces
    glossary = Glossary([("dog", "chien"), ("Brakkenfeld", "Brakkenfeld"), ("red car", "voiture rouge")],
                        sentencepiece_codec)
    assert glossary.constraints([
        "The dog, with Brakkenfeld.",  # "dog" before a comma piece, the name's pieces
        "The dogs and the hotdog wait.",  # "▁dog" then "s": not a word of its own
        "The red car moves with the red cars.",
    ]) == [["chien", "Brakkenfeld"], [], ["voiture rouge"]]


def test_many_terms_and_lines_are_matched_quickly():
    import time

    start = time.perf_counter()
    glossary = Glossary([(f"word{index} thing", f"mot{index}") for index in range(3000)], TextCodec("en"))
    found = glossary.constraints([f"the word{index} thing and word7 thing ." for index in range(2000)])
    assert found[5] == ["mot5", "mot7"] and found[7] == ["mot7"]
    assert time.perf_counter() - start < 20  # one codec call for the glossary, one per 10,000 lines


def test_a_constraints_file_gives_each_lines_phrases(tmp_path):
    path = _write(tmp_path / "constraints.txt", "chien noir\tchat\n\n \t maison \t\nvert\n")
    assert read_constraints(path) == [["chien noir", "chat"], [], ["maison"], ["vert"]]
    assert merge_constraints([["chien", "chat"], []], [["chat", "vert"], ["le"]]) == [["chien", "chat", "vert"], ["le"]]
    assert merge_constraints(None, [["chat"]]) == [["chat"]] and merge_constraints(None, None) is None


def test_the_report_names_constraints_skipped_and_not_met_then_sums_up():
    constraints = [["chien noir", "zyzzyva"], [], ["chat"], ["vert"]]
    results = [
        dict(constraints_met=[True, False], constraints_skipped=[False, True], source_tokens=["the", "dog"]),
        dict(constraints_met=[], constraints_skipped=[], source_tokens=["a"]),
        dict(constraints_met=[False], constraints_skipped=[False], source_tokens=["a", "cat"]),
        dict(constraints_met=[False], constraints_skipped=[False], source_tokens=[]),
    ]
    report = constraint_report(constraints, results)
    assert report == [
        "line 1: constraint 'zyzzyva' skipped: none of its words is in the target vocabulary",
        "line 3: constraint 'chat' not met: the translation ended without it (a line's constraints must fit its "
        "length bound, --maximum_length_a and --maximum_length_b)",
        "line 4: constraint 'vert' not met: the line is empty",
        "constraints: 4 on 3 of 4 lines: 1 met, 2 not met, 1 skipped",
    ]
    shortened = constraint_report(constraints, results, most=1)
    assert shortened[1:] == ["... and 2 more constraints skipped or not met", report[-1]]


def test_german_terms_match_moses_tokens_and_fold_case_as_unicode_does():
    glossary = Glossary([("Hauptbahnhof", "main station"), ("Straße", "street"), ("Hund", "dog")], TextCodec("de"))
    assert glossary.constraints(["Der Hund wartet am Hauptbahnhof.", "Die Hunde am Hauptbahnhofsplatz.",
                                 "Die STRASSE zum Hauptbahnhof"]) == [["dog", "main station"], [], ["main station"]]
    folded = Glossary(glossary.entries, TextCodec("de"), ignore_case=True)
    assert folded.constraints(["Die STRASSE zum HAUPTBAHNHOF", "die strasse"]) == [["street", "main station"],
                                                                                   ["street"]]


@pytest.fixture(scope="module")
def chinese_codec(tmp_path_factory):
    """A Chinese BPE codec (tokenization only): its pieces of a word differ alone and in a sentence."""
    folder = tmp_path_factory.mktemp("chinese_glossary")
    lines = ["我们明天去北京看长城。", "他在北京大学读书。", "南京很美。", "北京的冬天很冷。", "长城很长。"] * 50
    (folder / "zh.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    text_codec.learn_sentencepiece([folder / "zh.txt"], folder / "zh.model", "bpe", 300, seed=1)
    return TextCodec("zh", None, text_codec.SENTENCEPIECE, folder / "zh.model")


def test_terms_of_a_language_without_spaces_are_found_in_its_characters(chinese_codec):
    (alone,), (in_line,) = (chinese_codec.tokenize(tf.constant(texts)).to_list() for texts in (["北京"], ["去北京看"]))
    assert alone[0] == text_codec.WORD_START.encode()  # a term alone starts a word; in a line it does not:
    assert all(in_line[start : start + len(alone)] != alone for start in range(len(in_line)))  # pieces never match
    glossary = Glossary([("北京", "Beijing"), ("长城", "Great Wall"), ("北京 大学", "Peking University")],
                        chinese_codec)
    assert glossary.constraints(["我们明天去北京看长城。", "他在北京大学读书，不在北京。", "南京很美。", ""]) == [
        ["Beijing", "Great Wall"], ["Peking University", "Beijing"], [], []]  # spaces left out, longest first
    with pytest.raises(ValueError, match="the source term has no tokens"):
        Glossary([(" \x07 ", "bip")], chinese_codec)
