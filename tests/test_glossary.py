"""Glossary and constraints files (`rnnsearch_tf.inference.glossary`): a malformed line is named with its file
and line number; terms are found on the source codec's tokens (Moses words, SentencePiece pieces ending a
word; the characters of a language without spaces), longest first, once per line, case folded as Unicode does,
a line's first letter in either case; a capital kept where such a term starts the translation; a term outside
a word vocabulary written over the `<unk>` searched for it; the constraints file's phrases; the report of
skipped, unmet and `<unk>` ones."""

import pytest
import tensorflow as tf

from data_pipeline import constants, text_codec
from data_pipeline.text_codec import TextCodec
from helpers.toy_translation import write_corpus
import numpy as np

from rnnsearch_tf.inference.glossary import (Glossary, TermMatch, TerminologyFileError, constraint_report,
                                             merge_constraints, read_constraints, read_glossary, searched_phrases)
from rnnsearch_tf.inference.unk_replacer import UnkReplacer


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
    bom = _write(tmp_path / "bom.txt", "\ufeffchien noir\tchat\n")  # a byte-order mark, as Notepad writes
    assert read_constraints(bom) == [["chien noir", "chat"]]


def test_the_report_names_constraints_skipped_and_not_met_then_sums_up():
    constraints = [["chien noir", "zyzzyva"], [], ["chat"], ["vert"]]
    results = [
        dict(constraints_met=[True, False], constraints_skipped=[False, True], source_tokens=["the", "dog"],
             translation="Le chien noir ."),
        dict(constraints_met=[], constraints_skipped=[], source_tokens=["a"], translation="un"),
        dict(constraints_met=[False], constraints_skipped=[False], source_tokens=["a", "cat"], translation="un"),
        dict(constraints_met=[False], constraints_skipped=[False], source_tokens=[], translation=""),
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
    assert shortened[1:] == ["... and 2 more constraints skipped, not met or written as <unk>", report[-1]]
    typed = constraint_report(constraints[2:3], results[2:3], before=6)  # the 7th line typed at a terminal, alone
    assert typed[0].startswith("line 7: constraint 'chat' not met") and typed[1] == (
        "constraints: 1 on 1 of 1 lines: 0 met, 1 not met, 0 skipped")


def test_the_report_names_a_constraint_met_as_unk_that_nothing_wrote():
    """A word outside a word vocabulary beside a known one is searched as `<unk>`: met, but the translation holds
    the phrase only where something wrote it there (a glossary's term; spaces, and a sentence's capital, aside)."""
    constraints = [["le zyzzyva", "chat"], ["toutou", "l'homme"]]
    results = [dict(constraints_met=[True, True], constraints_skipped=[False, False], source_tokens=["a", "b"],
                    translation="Le chat le <unk> ."),
               dict(constraints_met=[True, True], constraints_skipped=[False, False], source_tokens=["a", "b"],
                    translation="Toutou et l' homme")]
    assert constraint_report(constraints, results) == [
        "line 1: constraint 'le zyzzyva' written as <unk>: a word of it is outside the target vocabulary",
        "constraints: 4 on 2 of 2 lines: 3 met, 0 not met, 0 skipped, 1 written as <unk>"]


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


def test_a_term_matches_the_first_word_of_a_line_in_either_case():
    glossary = Glossary([("man", "monsieur"), ("Paris", "Paris"), ("dog", "toutou"), ("big dog", "gros toutou"),
                         ("Dog", "Chien")], TextCodec("en"))
    assert glossary.constraints([
        "Man sitting at a table.",  # the first word: "man" in either case
        "A Man and a man.",  # elsewhere, as written
        "paris by night",
        '"Man at work"',  # the first word after an opening quote
        "Dog and big dog",  # "Dog" is a term of its own, which wins over "dog" at the start
        "Big dog.",  # the first letter of a term of two words
    ]) == [["monsieur"], ["monsieur"], ["Paris"], ["monsieur"], ["Chien", "gros toutou"], ["gros toutou"]]
    assert glossary.matches(["Man sitting", "man sitting", "A man"]) == [
        [TermMatch("monsieur", (0, 1), True)], [TermMatch("monsieur", (0, 1), False)],
        [TermMatch("monsieur", (1, 2), False)]]


def test_a_sentencepiece_term_matches_the_first_word_of_a_line_in_either_case(sentencepiece_codec):
    glossary = Glossary([("dog", "chien"), ("red car", "voiture rouge")], sentencepiece_codec)
    assert glossary.constraints(["Dog, with a dog.", "Red car moves.", "Dogs wait."]) == [
        ["chien"], ["voiture rouge"], []]  # "Dogs": "▁Dog" then a piece that continues the word


def test_a_target_term_starting_a_translation_gets_the_capital_of_its_source_term():
    glossary = Glossary([("man", "monsieur"), ("table", "guéridon")], TextCodec("en"))
    sentences = ["Man sitting at a table.", "Man sitting at a table.", "A man at a table.", "man at a table.",
                 "Man with monsieurs"]
    translations = ["monsieur assis à un guéridon .", "Un monsieur assis à un guéridon .",
                    "monsieur à un guéridon .", "monsieur à un guéridon .", "monsieurs"]
    results = [dict(translation=text, nbest=[(text, -1.0)]) for text in translations]
    results[0]["hypotheses"] = [dict(translation=translations[0]), dict(translation="guéridon")]
    glossary.capitalise_sentence_starts(sentences, results)
    assert [result["translation"] for result in results] == [
        "Monsieur assis à un guéridon .",  # the term starts the translation and its source the sentence
        "Un monsieur assis à un guéridon .",  # not at the start of the translation
        "monsieur à un guéridon .",  # not at the start of the sentence
        "monsieur à un guéridon .",  # the sentence starts without a capital
        "monsieurs"]  # another word
    assert results[0]["nbest"] == [("Monsieur assis à un guéridon .", -1.0)]
    assert [hypothesis["translation"] for hypothesis in results[0]["hypotheses"]] == [
        "Monsieur assis à un guéridon .", "guéridon"]


# α_ij of "le <unk> voit un <unk> chaud" on "the dog sees a hot dog </s>": the first <unk> attends to "dog",
# the second to "hot"; the second <unk>'s run "<unk> chaud" is "saucisse chaude"'s as searched.
SOURCE_WORDS = ["the", "dog", "sees", "a", "hot", "dog", "Zyzzyva", "</s>"]
ALIGNMENT = np.eye(8)[[0, 1, 2, 3, 4, 5, 6]] * 0.6 + 0.05


def test_a_term_of_unknown_words_only_is_searched_as_unks(tmp_path):
    """`Translator.translate_constrained` skips a phrase of unknown words, but forces the text `<unk>`."""
    entries = [("dog", "toutou"), ("hot dog", "toutou chaud"), ("sees", "voit"), ("big cat", "gros matou")]
    glossary = Glossary(entries, TextCodec("en"))
    words = [*constants.RESERVED_TOKENS, "le", "voit", "chaud"]
    codec = TextCodec("fr", _write(tmp_path / "fr.tsv", "".join(f"{word}\t1\n" for word in words)))
    constraints = [["toutou", "voit", "zyzzyva"], ["toutou chaud", "gros matou"], []]
    assert glossary.searched_as(constraints, codec) == [  # "toutou chaud" is searched as "<unk> chaud" already;
        ["<unk>", "voit", "zyzzyva"], ["toutou chaud", "<unk> <unk>"], []]  # "zyzzyva" is no term of the glossary
    assert glossary.searched_as(constraints, None) == constraints  # a subword model knows every word
    assert glossary.searched_as(constraints, TextCodec("fr")) == constraints  # no vocabulary: an export's rules


def test_a_phrase_of_unknown_words_only_is_skipped_unless_a_glossary_term(tmp_path):
    """The search forces the text `<unk>` (a glossary's term of unknown words is given so, then written back): a
    constraints file's phrase made only of words outside the vocabulary, `<unk>` among them, is given as "" and
    so skipped, as one of unknown words alone is; a phrase with a known word is searched as it is."""
    words = [*constants.RESERVED_TOKENS, "le", "voit", "chien"]
    codec = TextCodec("fr", _write(tmp_path / "fr.tsv", "".join(f"{word}\t1\n" for word in words)))
    constraints = [["<unk>", "zyzzyva <unk>", "le <unk>", "toutou"], ["zyzzyva", "chien"], []]
    glossary = Glossary([("dog", "toutou")], TextCodec("en"))
    assert searched_phrases(constraints, codec, glossary) == [["", "", "le <unk>", "<unk>"], ["", "chien"], []]
    assert searched_phrases(constraints, codec) == [["", "", "le <unk>", ""], ["", "chien"], []]
    assert searched_phrases(constraints, None, glossary) == constraints  # a subword model knows every word
    assert searched_phrases(constraints, TextCodec("fr")) == constraints  # no vocabulary to tell them


def test_a_glossary_replacer_made_again_keeps_the_choice_of_copying_source_words():
    """A line typed at a terminal makes the glossary's replacer anew from the one before: without --replace_unk
    the `<unk>`s no term takes stay."""
    glossary = Glossary([("dog", "toutou")], TextCodec("en"))
    again = glossary.unk_replacer(TextCodec("fr"), glossary.unk_replacer(TextCodec("fr")))
    assert not again.copy_source_words
    no_term = (["le", "<unk>"], ["the", "Zyzzyva", "</s>"], np.eye(3)[:2])  # "Zyzzyva": no term of the glossary
    assert glossary.unk_replacer(TextCodec("fr"), again).replace(*no_term)[0] == ["le", "<unk>"]
    assert glossary.unk_replacer(TextCodec("fr"), UnkReplacer()).replace(*no_term)[0] == ["le", "Zyzzyva"]
    assert glossary.unk_replacer(TextCodec("fr"), UnkReplacer()).copy_source_words


def test_a_term_outside_a_word_vocabulary_is_written_over_the_unk_that_attends_to_its_source():
    glossary = Glossary([("dog", "toutou"), ("hot dog", "saucisse chaude"), ("sees", "voit")], TextCodec("en"))
    placing = glossary.unk_replacer(TextCodec("fr"))
    searched = ["le", "<unk>", "voit", "un", "<unk>", "chaude", "<unk>"]
    tokens, replaced = placing.replace(searched, SOURCE_WORDS, ALIGNMENT)
    assert tokens == ["le", "toutou", "voit", "un", "saucisse", "chaude", "<unk>"] and replaced == 2
    attending = ALIGNMENT[[0, 6, 2, 3, 4, 5, 1]]  # now the last <unk> attends to "dog", the second to "Zyzzyva"
    swapped = ["le", "<unk>", "voit", "un", "<unk>", "chaude", "<unk>"]
    tokens, _ = glossary.unk_replacer(TextCodec("fr"), UnkReplacer({"Zyzzyva": "Zyzz"})).replace(
        swapped, SOURCE_WORDS, attending)
    assert tokens == ["le", "Zyzz", "voit", "un", "saucisse", "chaude", "toutou"]  # then --replace_unk's rule
    held = ["le", "toutou", "voit", "un", "<unk>"]  # a term the translation holds takes no <unk>
    assert placing.replace(held, SOURCE_WORDS[:2] + ["</s>"], ALIGNMENT)[0] == held


def test_a_capitalised_first_word_finds_its_terms_unk():
    glossary = Glossary([("dog", "toutou")], TextCodec("en"))
    tokens, replaced = glossary.unk_replacer(TextCodec("fr")).replace(
        ["<unk>", "court", "."], ["Dog", "runs", ".", "</s>"], np.eye(4)[:3])
    assert tokens == ["toutou", "court", "."] and replaced == 1
