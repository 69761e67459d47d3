"""Vocabulary: file format, shortlist order and coverage, in-graph lookup both ways."""

import collections

import pytest
import tensorflow as tf

from data_pipeline import Vocabulary
from data_pipeline import constants


@pytest.fixture
def vocabulary_file(tmp_path):
    counts = collections.Counter({"the": 5, "cat": 2, "bat": 2, "a": 3, "zebra": 1})
    path = tmp_path / "vocab.tsv"
    summary = Vocabulary.write(path, counts, vocabulary_size=4, num_sentences=3)
    assert summary == {"size": 8, "coverage": 12 / 13}
    return path


def test_file_lists_reserved_then_kept_tokens_by_count_then_token(vocabulary_file):
    assert vocabulary_file.read_text().splitlines() == [
        "<pad>\t0", "<s>\t0", "</s>\t3", "<unk>\t1", "the\t5", "a\t3", "bat\t2", "cat\t2",
    ]


def test_lookup_maps_tokens_outside_the_vocabulary_to_unk(vocabulary_file):
    vocabulary = Vocabulary(vocabulary_file)
    ids = vocabulary.lookup(tf.ragged.constant([["the", "zebra", "cat"], ["</s>"]]))
    assert ids.dtype == tf.int32
    assert ids.to_list() == [[4, constants.UNK_ID, 7], [constants.EOS_ID]]
    assert vocabulary.size == 8


def test_tokens_inverts_lookup(vocabulary_file):
    vocabulary = Vocabulary(vocabulary_file)
    tokens = vocabulary.tokens(tf.constant([[4, 5, 0, 99]]))
    assert tokens.numpy().tolist() == [[b"the", b"a", b"<pad>", b"<unk>"]]


def test_lookup_runs_inside_tf_function(vocabulary_file):
    vocabulary = Vocabulary(vocabulary_file)
    lookup = tf.function(vocabulary.lookup, input_signature=[tf.TensorSpec([None], tf.string)])
    assert lookup(tf.constant(["a", "dog"])).numpy().tolist() == [5, constants.UNK_ID]


def test_file_without_reserved_tokens_is_rejected(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("the\t5\n")
    with pytest.raises(ValueError, match="must start with"):
        Vocabulary(path)


def test_entries_are_read_whatever_the_line_ends_and_a_bad_line_is_named(vocabulary_file, tmp_path):
    entries = Vocabulary.read_entries(vocabulary_file)
    counts = (0, 0, 3, 1, 5)  # 3 sentences (</s>), 1 token outside the vocabulary (<unk>), "the" 5 times
    assert entries[:5] == list(zip(constants.RESERVED_TOKENS + ("the",), counts))
    unterminated = tmp_path / "unterminated.tsv"
    unterminated.write_text(vocabulary_file.read_text().rstrip("\n"))
    assert Vocabulary.read_entries(unterminated) == entries
    lines = vocabulary_file.read_text().split("\n")
    windows = tmp_path / "windows.tsv"
    windows.write_bytes("\r\n".join(lines).encode())
    assert Vocabulary.read_entries(windows) == entries
    for bad_line in ("", "word 5", "word\tfive", "word\t"):
        broken = tmp_path / "broken.tsv"
        broken.write_text("\n".join(lines[:5] + [bad_line] + lines[5:]))
        with pytest.raises(ValueError, match="broken.tsv, line 6: not token<TAB>count"):
            Vocabulary.read_entries(broken)
