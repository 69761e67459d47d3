"""WordPieceTokenizer and the WordPiece build option: no unknown words, same ids in-graph and at build."""

import tensorflow as tf

from data_pipeline import DatasetBuilder
from data_pipeline import Vocabulary
from data_pipeline import WordPieceTokenizer
from data_pipeline import corpus_registry
from data_pipeline.constants import EOS_ID
from data_pipeline.constants import UNK_ID

SOURCE = ["the cats sat .", "the cat sits .", "a dog sat on the mat .", "dogs sit ."] * 5
TARGET = ["les chats .", "le chat .", "un chien .", "des chiens ."] * 5


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_wordpiece_build_has_no_unknown_words_and_matches_in_graph_ids(tmp_path):
    corpus = corpus_registry.text_file_corpus(
        "en", "fr", {"train": (_write(tmp_path / "t.en", SOURCE), _write(tmp_path / "t.fr", TARGET))}
    )
    metadata = DatasetBuilder(
        corpus, tmp_path / "out", num_shards=1, wordpiece_vocabulary_size=40, show_progress=False
    ).build()
    assert metadata["vocabularies"]["source"]["subword"] == "wordpiece"
    assert metadata["vocabularies"]["source"]["coverage"] == 1.0
    source_file = tmp_path / "out" / "source_vocab.tsv"
    tokenizer, vocabulary = WordPieceTokenizer("en", source_file), Vocabulary(source_file)
    # A word never seen in training still splits into known pieces (characters at worst).
    expected = vocabulary.lookup(tokenizer.tokenize(tf.constant(["the dogs sat ."]))).to_list()[0]
    assert UNK_ID not in expected
    records = [
        tf.io.parse_single_example(record, {"source_ids": tf.io.VarLenFeature(tf.int64)})["source_ids"].values
        for record in tf.data.TFRecordDataset(str(tmp_path / "out" / "train-00000-of-00001.tfrecord.gz"), "GZIP")
    ]
    ids = {tuple(record.numpy()) for record in records}
    assert all(UNK_ID not in record for record in ids)
    in_graph = vocabulary.lookup(tokenizer.tokenize(tf.constant(SOURCE[:4]))).to_list()
    assert {tuple(row + [EOS_ID]) for row in in_graph} == ids


def test_wordpiece_detokenize_restores_words(tmp_path):
    counts = {"the": 10, "cat": 5, "cats": 3, "sat": 4, ".": 9}
    path = tmp_path / "wp.tsv"
    WordPieceTokenizer.learn(counts, 30, path, num_sentences=9)
    tokenizer = WordPieceTokenizer("en", path)
    pieces = tokenizer.tokenize(tf.constant(["the cats sat."]))
    assert tokenizer.detokenize(pieces).numpy()[0].decode() == "the cats sat."
