r"""Writes a long test set made of real sentences: consecutive pairs of a test set joined into one pair.

    rnnsearch join-sentences --corpus=multi30k_enfr --split=test --output_dir=work_dirs/long/test_2016_joined
    rnnsearch join-sentences --corpus=wmt14_enfr --split=test --sizes=1 --output_dir=work_dirs/long/newstest2014
    rnnsearch join-sentences --source=a.de --target=a.en --source_language=de --target_language=en --sizes=4 \
        --output_dir=work_dirs/long/mine_4

For each size k of `--sizes` (default 2,3,4,5) the pairs are cut into consecutive groups of k (lines
1..k, k+1..2k, ...) and each group is joined into one pair, each side as its language writes sentences one
after another (`SentenceJoiner`: a space, nothing after a Chinese or Japanese full stop). A pair with an empty
side is dropped before the pairs are grouped, and counted. Writes `source.txt` and `target.txt` (for `rnnsearch
evaluate --source --reference`), `lines.txt` (per joined pair, the input lines of its sentences, 1-based, as
`FIRST-LAST` runs joined by commas where a dropped line breaks one: `1-2,4-4`) and `summary.json` (inputs with
sha256, lines read, pairs dropped by reason with their first lines, pairs per size and per 10-token bin of source
Moses tokens, or characters for a language written without spaces), and prints the bins and the pairs dropped.
The same input and sizes give the same files.
The split is never held: it is read once to count its pairs, then once per size, joined and written a group at
a time.
"""

import collections
import json
import pathlib

import tensorflow as tf
from absl import app
from absl import flags

from data_pipeline import corpus_registry
from data_pipeline import data_files
from data_pipeline import pair_reader
from data_pipeline.sentence_joiner import JOINED_SIZES, LENGTH_BINS, SentenceJoiner, line_runs
from data_pipeline import languages
from data_pipeline.line_batches import batched
from data_pipeline.text_codec import counting_tokens
from rnnsearch_tf.cli import folder_flags, language_flags
from rnnsearch_tf.utils.text_files import check_not_inputs, check_writable_folder

_CORPUS = flags.DEFINE_string("corpus", None, f"Registered corpus ({', '.join(corpus_registry.CORPORA)}).")
_SPLIT = flags.DEFINE_string("split", "test", "Split of --corpus to join.")
_SOURCE = flags.DEFINE_string("source", None, "Instead of --corpus: source sentences, one per line (plain or gzip).")
_TARGET = flags.DEFINE_string("target", None, "With --source: their translations, line-aligned.")
_LANGUAGES = language_flags.define_language_flags("--source and --target")
_SIZES = flags.DEFINE_list("sizes", [str(size) for size in JOINED_SIZES], "Sentences per joined pair; 1 keeps them.")
_OUTPUT_DIR = folder_flags.define_output_dir("source.txt, target.txt, lines.txt, summary.json")
_DATA_DIR = folder_flags.define_corpus_folder()
_NO_LINE_LIMIT = 10**9  # test sentences are kept whatever their length (PairReader's max_line_chars)
_BATCH_PAIRS = 1000  # joined pairs counted and written at a time
_SOURCE_FILE, _TARGET_FILE, _LINES_FILE, _SUMMARY_FILE = "source.txt", "target.txt", "lines.txt", "summary.json"


def split_pairs(corpus, split, data_root):
    """The (line, (source, target)) sentences of a corpus split, all its parts in order, as `pair_reader.SplitPairs`
    `with_lines`: read from the files on each pass (once to count them, once per size), never held."""
    if split not in corpus.splits:
        raise ValueError(f"corpus {corpus.name} has no split {split!r}; it has {sorted(corpus.splits)}")
    return pair_reader.SplitPairs((pair_reader.PairReader.of_part(part, data_root, _NO_LINE_LIMIT)
                                   for part in corpus.splits[split]), with_lines=True)


def length_bins(lengths):
    """{"0-10": n, ..., "60+": n}: how many of `lengths` fall in each bin of `LENGTH_BINS`."""
    bins = {}
    for minimum, maximum in zip((0,) + LENGTH_BINS, LENGTH_BINS + (None,)):
        label = f"{minimum}-{maximum}" if maximum is not None else f"{minimum}+"
        bins[label] = sum(1 for length in lengths if length >= minimum and (maximum is None or length < maximum))
    return bins


def write_joined(joined, source_language, output_dir):
    """Writes `JoinedPair`s to source.txt, target.txt and lines.txt as they come, `_BATCH_PAIRS` at a time; returns
    (joined pairs per size, per `length_bins` bin of their source's `counting_tokens`) as Counters."""
    per_size, per_length = collections.Counter(), collections.Counter()
    output_dir.mkdir(parents=True, exist_ok=True)
    with (open(output_dir / _SOURCE_FILE, "w", encoding="utf-8") as sources,
          open(output_dir / _TARGET_FILE, "w", encoding="utf-8") as targets,
          open(output_dir / _LINES_FILE, "w", encoding="utf-8") as lines):
        for batch in batched(joined, _BATCH_PAIRS):
            tokens = counting_tokens(tf.constant([pair.source for pair in batch]), source_language)
            per_length.update(length_bins(tokens.row_lengths().numpy().tolist()))
            per_size.update(pair.sentences for pair in batch)
            sources.writelines(pair.source + "\n" for pair in batch)
            targets.writelines(pair.target + "\n" for pair in batch)
            lines.writelines(line_runs(pair.lines) + "\n" for pair in batch)
    return per_size, per_length


def corpus_pairs():
    """(ParallelCorpus, `split_pairs`) of the flags: --corpus's --split, or the text files --source and --target."""
    if _CORPUS.value:
        corpus = corpus_registry.get_corpus(_CORPUS.value)
        language_flags.check_agree(_LANGUAGES, corpus)
        return corpus, split_pairs(corpus, _SPLIT.value, data_files.data_root_from_environment(_DATA_DIR.value))
    if _TARGET.value is None:
        raise app.UsageError("--source needs --target")
    corpus = corpus_registry.text_file_corpus(*language_flags.required_languages(_LANGUAGES, "--source"),
                                              {"test": (_SOURCE.value, _TARGET.value)})
    return corpus, split_pairs(corpus, "test", None)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    if (_CORPUS.value is None) == (_SOURCE.value is None):
        raise app.UsageError("give either --corpus (and --split) or --source and --target")
    try:
        sizes = [int(size) for size in _SIZES.value]
    except ValueError:
        raise app.UsageError(f"--sizes must be whole numbers, got {','.join(_SIZES.value)}") from None
    try:
        SentenceJoiner.check_sizes(sizes)
    except ValueError as error:
        raise app.UsageError(f"--sizes={','.join(_SIZES.value)}: {error}") from None
    check_writable_folder(_OUTPUT_DIR.value, "--output_dir")
    corpus, pairs = corpus_pairs()
    check_not_inputs(_OUTPUT_DIR.value, (_SOURCE_FILE, _TARGET_FILE, _LINES_FILE, _SUMMARY_FILE), pairs.paths,
                     "--output_dir")
    joiner = SentenceJoiner(sizes, corpus.source_language, corpus.target_language)
    sentence_pairs = sum(1 for _ in pairs)
    read = pairs.summary()
    if sentence_pairs < min(sizes):
        raise ValueError(f"{sentence_pairs} sentence pairs read from {pairs.paths[0]}: too few for sizes {sizes}")
    output_dir = pathlib.Path(_OUTPUT_DIR.value)
    per_size, per_length = write_joined(joiner.joined(pairs), corpus.source_language, output_dir)
    summary = dict(
        inputs=[{"path": str(path), "sha256": pair_reader.sha256(path)} for path in pairs.paths],
        pairs_read=read["read"],
        dropped=read["dropped"],
        dropped_lines=read["dropped_lines"],
        sentence_pairs=sentence_pairs,
        sizes=sizes,
        pairs=sum(per_size.values()),
        pairs_per_size={str(size): per_size[size] for size in sizes},
        pairs_per_source_length=dict(per_length),
        source_length=f"{languages.counting_unit(corpus.source_language)} of the joined source",
    )
    (output_dir / _SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    bins = ", ".join(f"{label}: {count}" for label, count in summary["pairs_per_source_length"].items())
    dropped = ", ".join(f"{reason} {count:,} (first: {', '.join(read['dropped_lines'][reason])})"
                        for reason, count in sorted(read["dropped"].items()))
    dropped = dropped and f"; dropped {sum(read['dropped'].values()):,} of {read['read']:,} pairs read: {dropped}"
    print(f"wrote {summary['pairs']:,} pairs from {sentence_pairs:,} to {output_dir} (source tokens {bins}){dropped}")
