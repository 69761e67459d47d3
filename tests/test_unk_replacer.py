"""UnkReplacer: the most-attended source word, the dictionary, and the edge cases."""

import numpy as np
import pytest

from rnnsearch_tf.inference.unk_replacer import UnkReplacer

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


def test_nothing_to_replace_and_empty_source():
    assert UnkReplacer().replace(["le", "chat"], SOURCE, ALIGNMENT) == (["le", "chat"], 0)
    assert UnkReplacer().replace(["<unk>"], ["</s>"], np.ones([1, 1])) == (["<unk>"], 0)
    assert UnkReplacer().replace([], [], np.zeros([0, 1])) == ([], 0)


def test_bad_dictionary_line_is_named(tmp_path):
    path = tmp_path / "dictionary.tsv"
    path.write_text("chat\tcat\nno tab here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"dictionary.tsv:2: expected 'source word<TAB>target text'"):
        UnkReplacer.from_file(path)
