"""Benchmarks the data pipeline on a real corpus and prints JSON.

    RNNSEARCH_DATA=../shared/data python -m bench.data_pipeline --corpus=multi30k_enfr --vocabulary_size=10000

(Run it with -m from the repository root: as a script, this file would shadow the package.)

Reports build throughput (sentence pairs read per second, end to end: read, tokenize, count, write
shards), tokenizer throughput, and tf.data throughput (batches/s of the paper's 20 x 80 sorted batches
and of token-count batches) over the built train shards.
"""

import os
import pathlib
import tempfile
import time

import tensorflow as tf
from absl import app
from absl import flags

from bench.provenance import provenance, run_report
from data_pipeline import DatasetBuilder
from data_pipeline.text_codec import TextCodec
from data_pipeline import TrainingInput
from data_pipeline import corpus_registry
from data_pipeline import data_files

_CORPUS = flags.DEFINE_enum("corpus", "multi30k_enfr", sorted(corpus_registry.CORPORA),
                            "Registered corpus to build and read.")
_VOCABULARY_SIZE = flags.DEFINE_integer("vocabulary_size", 10000, "Most frequent words kept per language.")
_MAX_LENGTH = flags.DEFINE_integer("max_length", 50, "Length filter.")
_BATCHES = flags.DEFINE_integer("batches", 2000, "Batches read per tf.data measurement.")
_MAX_TOKENS = flags.DEFINE_integer("max_tokens", 4000, "Token budget of the token-count measurement.")


def _batches_per_second(dataset, count):
    iterator = iter(dataset)
    next(iterator)  # builds the pipeline and fills the first buffers
    start, tokens = time.perf_counter(), 0
    for _ in range(count):
        batch = next(iterator)
        tokens += int(tf.math.count_nonzero(batch["target_ids"]))
    seconds = time.perf_counter() - start
    return {"batches_per_s": round(count / seconds, 1), "target_tokens_per_s": round(tokens / seconds)}


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    corpus = corpus_registry.get_corpus(_CORPUS.value)
    with tempfile.TemporaryDirectory() as output_dir:
        start = time.perf_counter()
        metadata = DatasetBuilder(
            corpus,
            output_dir,
            data_root=data_files.data_root_from_environment(),
            vocabulary_size=_VOCABULARY_SIZE.value,
            max_length=_MAX_LENGTH.value,
            show_progress=False,
        ).build()
        build_seconds = time.perf_counter() - start
        pairs_read = sum(split["read"] for split in metadata["splits"].values())
        pattern = str(pathlib.Path(output_dir) / "train-*.tfrecord.gz")
        sentences = tf.constant(["Le sportif Jhonathan Florez a sauté jeudi d'un hélicoptère, à 160 km/h."] * 1000)
        tokenizer = TextCodec("fr")
        tokenizer.tokenize(sentences)
        start = time.perf_counter()
        for _ in range(5):
            tokenizer.tokenize(sentences)
        tokenize_seconds = (time.perf_counter() - start) / 5
        report = {
            "provenance": provenance(),
            "corpus": corpus.name,
            "cpu_cores": os.cpu_count(),
            "build": {
                "pairs_read": pairs_read,
                "seconds": round(build_seconds, 1),
                "pairs_per_s": round(pairs_read / build_seconds),
            },
            "tokenizer_sentences_per_s": round(1000 / tokenize_seconds),
            "sorted_window_batches_80x20": _batches_per_second(TrainingInput(pattern)(), _BATCHES.value),
            f"token_count_batches_{_MAX_TOKENS.value}": _batches_per_second(
                TrainingInput(pattern, max_tokens=_MAX_TOKENS.value)(), _BATCHES.value
            ),
        }
    return report


if __name__ == "__main__":
    run_report(main)
