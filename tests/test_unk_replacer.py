"""UnkReplacer: the most-attended source word, the dictionary, the edge cases, every hypothesis of an n-best; a
sentence's placements (target terms searched as `<unk>`) written over the run that attends most to their source."""

import json

import numpy as np
import pytest
import tensorflow as tf

from rnnsearch_tf.inference import output_formats
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.translator import Translator
from rnnsearch_tf.inference.unk_replacer import Placement, UnkReplacer
from helpers.serving_test_utils import SEARCH_OPTIONS, SENTENCES, write_model_dir

SOURCE = ["Mr", "Zyzzyva", "loves", "Quetzalcoatl", "</s>", ""]
TARGET = ["M.", "<unk>", "aime", "<unk>", "</s>"]
# α_ij: row i is target token i; the </s> column (4) is the largest for both <unk>s and must be skipped.
ALIGNMENT = np.array(
    [
        [0.7, 0.1, 0.1, 0.0, 0.1, 0.0],
        [0.1, 0.3, 0.1, 0.1, 0.4, 0.0],
        [0.0, 0.1, 0.8, 0.0, 0.1, 0.0],
        [0.0, 0.1, 0.1, 0.35, 0.45, 0.0],
        [0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
    ]
)


def test_copies_the_most_attended_source_word():
    tokens, replaced = UnkReplacer().replace(TARGET, SOURCE, ALIGNMENT)
    assert tokens == ["M.", "Zyzzyva", "aime", "Quetzalcoatl", "</s>"]
    assert replaced == 2


def test_follows_the_alignment_not_the_position():
    swapped = ALIGNMENT.copy()
    swapped[[1, 3]] = swapped[[3, 1]]  # the first <unk> now looks at "Quetzalcoatl", the second at "Zyzzyva"
    tokens, _ = UnkReplacer().replace(TARGET, SOURCE, swapped)
    assert tokens[1] == "Quetzalcoatl" and tokens[3] == "Zyzzyva"


def test_dictionary_entry_wins_over_copy(tmp_path):
    path = tmp_path / "dictionary.tsv"
    path.write_text("Zyzzyva\tzyzzyva du Brésil\t0.9\nZyzzyva\tcharançon\t0.1\n\nloves\taime\n", encoding="utf-8")
    replacer = UnkReplacer.from_file(path)
    assert replacer.dictionary == {"Zyzzyva": "zyzzyva du Brésil", "loves": "aime"}
    tokens, replaced = replacer.replace(TARGET, SOURCE, ALIGNMENT)
    assert tokens == ["M.", "zyzzyva du Brésil", "aime", "Quetzalcoatl", "</s>"]
    assert replaced == 2
    path.write_text("\ufeffZyzzyva\tzyzzyva du Brésil\n", encoding="utf-8")  # a byte-order mark, as Notepad writes
    assert UnkReplacer.from_file(path).dictionary == {"Zyzzyva": "zyzzyva du Brésil"}


def test_nothing_to_replace_and_empty_source():
    assert UnkReplacer().replace(["le", "chat"], SOURCE, ALIGNMENT) == (["le", "chat"], 0)
    assert UnkReplacer().replace(["<unk>"], ["</s>"], np.ones([1, 1])) == (["<unk>"], 0)
    assert UnkReplacer().replace([], [], np.zeros([0, 1])) == ([], 0)


def test_a_placement_takes_the_run_of_unks_that_attends_most_to_its_source():
    """Two one-word runs for the term of "Quetzalcoatl" (source word 3): the second <unk> attends to it more."""
    placements = lambda words: [Placement(("serpent",), (3, 4))]  # noqa: E731
    tokens, replaced = UnkReplacer(placements=placements).replace(TARGET, SOURCE, ALIGNMENT)
    assert tokens == ["M.", "Zyzzyva", "aime", "serpent", "</s>"] and replaced == 2  # then the copy
    only = UnkReplacer(placements=placements, copy_source_words=False)
    assert only.replace(TARGET, SOURCE, ALIGNMENT) == (["M.", "<unk>", "aime", "serpent", "</s>"], 1)
    nowhere = lambda words: [Placement(("serpent",))]  # noqa: E731  source not known: the first run
    assert UnkReplacer(placements=nowhere, copy_source_words=False).replace(TARGET, SOURCE, ALIGNMENT)[0][1] == "serpent"
    several = lambda words: [Placement(("aime", "serpent"), (2, 4)), Placement(("le", "dieu"), (0, 1))]  # noqa: E731
    tokens, replaced = UnkReplacer(placements=several, copy_source_words=False).replace(TARGET, SOURCE, ALIGNMENT)
    assert tokens == ["M.", "<unk>", "aime", "serpent", "</s>"] and replaced == 1  # "le dieu" has no run
    held = lambda words: [Placement(("aime",), (2, 3))]  # noqa: E731  in the translation already
    assert UnkReplacer(placements=held, copy_source_words=False).replace(TARGET, SOURCE, ALIGNMENT) == (TARGET, 0)


def test_bad_dictionary_line_is_named(tmp_path):
    path = tmp_path / "dictionary.tsv"
    path.write_text("chat\tcat\nno tab here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"dictionary.tsv:2: expected 'source word<TAB>target text'"):
        UnkReplacer.from_file(path)


def test_a_dictionary_line_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "dictionary.tsv"
    path.write_bytes("chat\tcat\n".encode() + b"caf\xe9\tcoffee\n")  # Latin-1, not UTF-8
    with pytest.raises(ValueError, match=r"dictionary.tsv:2: not UTF-8 \(invalid continuation byte at byte 3\)$"):
        UnkReplacer.from_file(path)


class _NbestExport:
    """A loaded SavedModel's stand-in with 2 hypotheses for "the big Zyzzyva", each with an `<unk>` aligned
    to a different source word (hypothesis 1's to "big", hypothesis 0's to "Zyzzyva")."""

    def __init__(self):
        self.signatures = {"translate": self._translate, "score": None}

    @staticmethod
    def _translate(text):
        del text
        alignments = np.array(
            [
                [[0.8, 0.1, 0.1, 0.0], [0.1, 0.2, 0.6, 0.1], [0.0, 0.0, 0.0, 1.0]],  # le <unk> </s>
                [[0.1, 0.6, 0.2, 0.1], [0.7, 0.1, 0.1, 0.1], [0.0, 0.0, 0.0, 1.0]],  # <unk> le </s>
            ],
            dtype=np.float32,
        )  # [n, tgt_len, src_len]
        tokens = [[b"le", b"<unk>", b"</s>"], [b"<unk>", b"le", b"</s>"]]
        return {name: tf.constant(value) for name, value in dict(
            translation=[b"le <unk>"],
            score=[-1.5],
            tokens=[tokens[0]],
            alignment=alignments[None, 0],
            source_tokens=[[b"the", b"big", b"Zyzzyva", b"</s>"]],
            truncated=[False],
            nbest_translations=[[b"le <unk>", b"<unk> le"]],
            nbest_scores=[[-1.5, -2.25]],
            nbest_tokens=[tokens],
            nbest_alignment=alignments[None],
        ).items()}


def test_every_hypothesis_of_an_nbest_list_is_replaced():
    settings = dict(target_language="fr", maximum_batch_size=10)
    result = BatchTranslator(_NbestExport(), settings, unk_replacer=UnkReplacer()).translate(["the big Zyzzyva"])[0]
    assert result["translation"] == "le Zyzzyva" and result["searched_translation"] == "le <unk>"
    assert result["nbest"] == [("le Zyzzyva", -1.5), ("big le", -2.25)]
    assert [hypothesis["unks_replaced"] for hypothesis in result["hypotheses"]] == [1, 1]
    assert output_formats.format_translation(4, result, "nbest") == (
        "4 ||| le Zyzzyva ||| beam_score= -1.500000 ||| -1.500000\n"
        "4 ||| big le ||| beam_score= -2.250000 ||| -2.250000\n"
    )
    record = json.loads(output_formats.format_translation(4, result, "alignment"))
    assert [hypothesis["translation"] for hypothesis in record["nbest"]] == ["le Zyzzyva", "big le"]
    assert [hypothesis["target_tokens"] for hypothesis in record["nbest"]] == [["le", "Zyzzyva"], ["big", "le"]]
    assert [hypothesis["hard_alignment"] for hypothesis in record["nbest"]] == ["0-0 2-1", "1-0 0-1"]
    assert record["nbest"][1]["alignment"][0] == pytest.approx([0.1, 0.6, 0.2, 0.1])
    without = BatchTranslator(_NbestExport(), settings).translate(["the big Zyzzyva"])[0]
    assert without["nbest"] == [("le <unk>", -1.5), ("<unk> le", -2.25)]  # as searched


def test_translator_returns_every_hypothesis_tokens_and_alignment(tmp_path):
    model_dir = write_model_dir(tmp_path / "model")
    options = dict(SEARCH_OPTIONS, forbid_unk=False)
    translator = Translator.from_model_dir(model_dir, **options)  # held: its tf.functions refer to it weakly
    outputs = translator.translate(tf.constant(SENTENCES))
    batch, n = len(SENTENCES), options["num_hypotheses"]
    assert outputs["nbest_tokens"].shape[:2] == (batch, n)
    assert outputs["nbest_alignment"].shape[:2] == (batch, n)
    np.testing.assert_array_equal(outputs["nbest_tokens"][:, 0], outputs["tokens"])
    np.testing.assert_array_equal(outputs["nbest_alignment"][:, 0], outputs["alignment"])
    results = BatchTranslator.from_model_dir(model_dir, **options).translate(SENTENCES)
    for row, result in enumerate(results):
        assert [hypothesis["translation"] for hypothesis in result["hypotheses"]] == [
            text.decode() for text in outputs["nbest_translations"][row].numpy()
        ]
        assert result["hypotheses"][0]["tokens"] == result["tokens"]
    translator = Translator.from_model_dir(model_dir, **dict(options, num_hypotheses=1))
    single = translator.translate(tf.constant(SENTENCES))
    assert "nbest_tokens" not in single and "nbest_alignment" not in single
