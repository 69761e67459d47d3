r"""Scores sentence pairs with log p(y | x), or rescores a Moses n-best list with it.

    python -m rnnsearch_tf.score --model_dir=models/rnnsearch50 --source=test.en --target=test.fr
    python -m rnnsearch_tf.score --model_dir=models/rnnencdec50 --source=test.en --nbest=test.nbest \
        --output=test.rescored.nbest --best_output=test.best.fr

Scoring (`--target`): one line per pair, `--output_format=sentence` gives log p(y | x) (natural log, the
`</s>` included), `json` gives `{"log_prob", "tokens", "token_log_probs", "source_truncated",
"target_truncated"}` with the target's tokens (a word outside the vocabulary is scored as `<unk>`; no shortlist:
log p(y | x) is over the whole vocabulary) and the log-probability of each (Cho et al. 2014 scored phrase pairs
exactly so). Rescoring (`--nbest`): each hypothesis of line i is scored against source line i; the feature
`log_prob= X` is appended and the total becomes `total + weight * X`; each list is sorted again by the new total.
Output is the rescored n-best list, every feature value and a Moses word alignment (a fifth field) kept;
`--best_output` also gets the new 1-best translation of every source line (an empty line where the list has no
entry). A malformed n-best line is named with its file and number before the model loads; `--output_format=json`
is refused with `--nbest` (its output is the n-best list). A source of more than `--maximum_source_length` tokens, or a
target of more than the longest translation searched (`maximum_length_a * maximum_source_length +
maximum_length_b`, less its `</s>`), is scored from its first tokens, and the lines cut are named on stderr.

Phrase-table scoring (`--phrase_table`, Cho et al. 2014, Section 4.1): a Moses phrase table (plain or gzip; its
phrases Moses tokens, escaped as tokenizer.perl writes them, read back as text: `phrase_table.moses_text`) is
written to `--output` (gzip if it ends in `.gz`) with log p(target | source) and its value per target
token (`</s>` included) appended to each pair's scores, everything else unchanged
(`inference.phrase_table.PhraseTableScorer`), `--lines_per_chunk` lines at a time. A line of fewer than
three fields is named on stderr with its number and, by default (`--on_bad_line=pass`), written unchanged,
so that the output keeps every line of the input and hours of scoring are not lost to one line;
`--on_bad_line=stop` ends the run there instead.

    rnnsearch score --model_dir=models/rnnencdec50 --phrase_table=phrase-table.gz --output=phrase-table.rnn.gz

The view of Cho et al.'s Table 2 (`--phrase_table_top=K` with `--source=PHRASES`, one source phrase per
line): for each phrase, a Markdown table of its K best targets in the phrase table by the table's own score
(`--table_score`, 0-based in the scores field: 2 is Moses' p(e|f)), the table's targets by the model's
log p(target | source), and the model's own K best translations (beam search with `--num_hypotheses=K`).

    rnnsearch score --model_dir=models/rnnencdec50 --phrase_table=phrase-table.gz --source=phrases.en \
        --phrase_table_top=5 --output=table2.md
"""

import collections
import dataclasses
import json
import sys

from absl import app, flags

from rnnsearch_tf.cli import folder_flags, search_flags
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.output_formats import nbest_line, parse_nbest_lines
from rnnsearch_tf.inference.phrase_table import (
    LINES_PER_CHUNK, ON_BAD_LINE, PhraseTableScorer, comparison_table, moses_text, table_candidates,
)
from data_pipeline.progress_line import ProgressLine
from rnnsearch_tf.utils.function_cache import run_graphs_without_grappler
from rnnsearch_tf.utils.text_files import (check_line_for_line, check_writable, input_name, line_numbers, open_output,
                                          read_lines)

_MODEL_DIR = folder_flags.define_model_dir(ensemble=True)
_SAVED_MODEL = folder_flags.define_saved_model()
_SOURCE = flags.DEFINE_string("source", None, "Source sentences, one per line (with --target or --nbest).")
_TARGET = flags.DEFINE_string("target", None, "Target sentences, line-aligned with --source.")
_NBEST = flags.DEFINE_string("nbest", None, "Instead of --target: a Moses n-best list to rescore.")
_OUTPUT = flags.DEFINE_string("output", "-", 'Scores or the rescored n-best list ("-": stdout).')
_OUTPUT_FORMAT = flags.DEFINE_enum("output_format", "sentence", ["sentence", "json"], "Format of pair scores.")
_WEIGHT = flags.DEFINE_float("weight", 1.0, "Weight of log_prob added to an n-best total.")
_BEST_OUTPUT = flags.DEFINE_string("best_output", None, "With --nbest: file of the new 1-best translations.")
_PHRASE_TABLE = flags.DEFINE_string("phrase_table", None, "Instead of --source: a Moses phrase table to score.")
_ON_BAD_LINE = flags.DEFINE_enum(
    "on_bad_line", "pass", list(ON_BAD_LINE), "A phrase-table line of fewer than 3 fields: written unscored "
    "(pass) or the run stops (stop); named on stderr either way.",
)
_LINES_PER_CHUNK = flags.DEFINE_integer(
    "lines_per_chunk", LINES_PER_CHUNK, "Phrase-table lines read, scored and written at a time.", lower_bound=1
)
_PHRASE_TABLE_PROBABILITIES = flags.DEFINE_boolean(
    "phrase_table_probabilities", False, "Append exp of the scores (Moses takes the log of phrase-table scores).",
)
_PHRASE_TABLE_TOP = flags.DEFINE_integer(
    "phrase_table_top", None, "With --phrase_table and --source (source phrases): Cho et al.'s Table 2, the K "
    "best targets of each phrase by the table, by the model, and the model's own.", lower_bound=1,
)
_TABLE_SCORE = flags.DEFINE_integer(
    "table_score", 2, "With --phrase_table_top: the table score (0-based) ranking its targets; 2: Moses' p(e|f).",
    lower_bound=0,
)
_PROGRESS = flags.DEFINE_boolean("progress", True, "Draw a progress bar on stderr.")


def _rescore(scorer, sources, entries, output_path, best_path):
    """Writes the n-best list `entries` (`{line number: parse_nbest_line entry}`) rescored (module docstring)."""
    progress = ProgressLine("rescored", len(entries)) if _PROGRESS.value and entries else None
    hypotheses = list(entries.values())
    scores = scorer.score([sources[entry[0]] for entry in hypotheses], [entry[1] for entry in hypotheses], progress)
    _report_truncation(scorer, scores, [entry[0] + 1 for entry in hypotheses], ("--nbest", list(entries)))
    lists = collections.defaultdict(list)
    for (index, translation, features, total, alignment), score in zip(hypotheses, scores):
        features = dict(features, log_prob=[score["log_prob"]])
        lists[index].append((total + _WEIGHT.value * score["log_prob"], translation, features, alignment))
    with open_output(output_path) as output:
        for index in sorted(lists):
            lists[index].sort(key=lambda hypothesis: -hypothesis[0])
            for total, translation, features, alignment in lists[index]:
                output.write(nbest_line(index, translation, features, total, alignment))
    if best_path:
        with open_output(best_path) as output:
            for index in range(len(sources)):
                output.write((lists[index][0][1] if lists[index] else "") + "\n")


def _score_phrase_table(scorer):
    if _PHRASE_TABLE.value == _OUTPUT.value:
        raise app.UsageError("--output must not be the --phrase_table it is read from")
    progress = ProgressLine("scored", unit="lines") if _PROGRESS.value else None
    counts = PhraseTableScorer(
        scorer, _LINES_PER_CHUNK.value, _ON_BAD_LINE.value, _PHRASE_TABLE_PROBABILITIES.value
    ).score_file(_PHRASE_TABLE.value, _OUTPUT.value, progress)
    if progress is not None:
        progress(counts["lines"], final=True)
    print(f"{counts['scored']} phrase pairs scored, {counts['bad_lines']} bad lines written unscored",
          file=sys.stderr)
    if counts["cut_lines"]:
        print(f"--phrase_table {line_numbers(counts['cut_lines'])} scored from their phrases' first tokens only: a "
              f"source phrase is cut to --maximum_source_length ({scorer.search_config.maximum_source_length}) "
              f"tokens, a target one to {scorer.maximum_target_length - 1}", file=sys.stderr)


def _phrase_table_top(scorer, k):
    phrases = list(dict.fromkeys(line.strip() for line in read_lines(_SOURCE.value) if line.strip()))
    candidates = table_candidates(_PHRASE_TABLE.value, phrases, _TABLE_SCORE.value)
    pairs = [(phrase, target) for phrase in phrases for target, _ in candidates[phrase]]
    sources = moses_text([phrase for phrase, _ in pairs], scorer.source_language)  # the table's Moses tokens
    targets = moses_text([target for _, target in pairs], scorer.target_language)
    scores = scorer.score(sources, targets) if pairs else []
    by_model = collections.defaultdict(list)
    for (phrase, target), score in zip(pairs, scores):
        by_model[phrase].append((target, score["log_prob"]))
    generated = scorer.translate(moses_text(phrases, scorer.source_language))
    with open_output(_OUTPUT.value) as output:
        for phrase, result in zip(phrases, generated):
            output.write(comparison_table(phrase, k, candidates[phrase], by_model[phrase], result["nbest"][:k]))


def _report_truncation(scorer, scores, source_lines, targets):
    """Names on stderr the lines scored from their first tokens only: `scores` (`BatchTranslator.score`'s) of
    pairs whose sources are the --source lines `source_lines` (from 1) and whose targets are the lines of
    `targets`, `(flag, line numbers)` of the file they come from."""
    search_config = scorer.search_config
    target_flag, target_lines = targets
    cut_sources = sorted({line for line, score in zip(source_lines, scores) if score["source_truncated"]})
    if cut_sources:
        print(f"--source lines cut to their first {search_config.maximum_source_length} tokens "
              f"(--maximum_source_length): {line_numbers(cut_sources)}", file=sys.stderr)
    cut_targets = [line for line, score in zip(target_lines, scores) if score["target_truncated"]]
    if cut_targets:
        print(f"{target_flag} lines cut to their first {scorer.maximum_target_length - 1} target tokens (the longest "
              "translation, --maximum_length_a * --maximum_source_length + --maximum_length_b, less its </s>): "
              f"{line_numbers(cut_targets)}", file=sys.stderr)


def _read_inputs():
    """The lines of --source, and those of --target (one per source line, refused otherwise, naming both files)
    or the entries of --nbest by line number (`parse_nbest_lines`, each naming a --source line, refused
    otherwise, naming the n-best line)."""
    sources = read_lines(_SOURCE.value)
    if _NBEST.value:
        name = input_name(_NBEST.value)
        entries = parse_nbest_lines(read_lines(_NBEST.value), name)
        for number, (index, *_) in entries.items():
            if index >= len(sources):
                raise ValueError(f"{name}:{number}: the n-best list names line {index} (0-based) but --source has "
                                 f"{len(sources)} line{'' if len(sources) == 1 else 's'}")
        return sources, entries
    targets = read_lines(_TARGET.value)
    check_line_for_line(("--target", _TARGET.value, targets), ("--source", _SOURCE.value, sources), "target line")
    return sources, targets


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    if (_MODEL_DIR.value is None) == (_SAVED_MODEL.value is None):
        raise app.UsageError("give exactly one of --model_dir and --saved_model")
    search_flags.refuse_given([search_flags.UNK_DICTIONARY], "by score: it scores the pairs as written")
    if _SAVED_MODEL.value:
        search_flags.refuse_with_saved_model()
    if _PHRASE_TABLE_TOP.value and _PHRASE_TABLE.value is None:
        raise app.UsageError("--phrase_table_top needs --phrase_table")
    if _PHRASE_TABLE.value is not None:
        if _TARGET.value or _NBEST.value or (_SOURCE.value is None) != (_PHRASE_TABLE_TOP.value is None):
            raise app.UsageError("--phrase_table takes --source (the phrases) with --phrase_table_top only")
    elif _SOURCE.value is None:
        raise app.UsageError("give --source (with --target or --nbest) or --phrase_table")
    elif (_TARGET.value is None) == (_NBEST.value is None):
        raise app.UsageError("give exactly one of --target (scoring) and --nbest (rescoring)")
    if _OUTPUT_FORMAT.value == "json" and _TARGET.value is None:
        raise app.UsageError("--output_format=json is the format of --target's scores: --nbest writes an n-best list "
                             "and --phrase_table a phrase table")
    check_writable(_OUTPUT.value, "--output")
    check_writable(_BEST_OUTPUT.value, "--best_output")
    inputs = None if _PHRASE_TABLE.value else _read_inputs()  # before the model: a bad file is found at once
    search_config = search_flags.search_config()
    if _PHRASE_TABLE_TOP.value and not search_config.sampling:
        search_config = dataclasses.replace(search_config, num_hypotheses=_PHRASE_TABLE_TOP.value,
                                            beam_size=max(search_config.beam_size, _PHRASE_TABLE_TOP.value))
    workers = search_flags.decode_workers()
    if _SAVED_MODEL.value:
        run_graphs_without_grappler()
        scorer = BatchTranslator.from_saved_model(_SAVED_MODEL.value, search_flags.BATCH_SIZE.value, workers=workers)
    else:
        scorer = BatchTranslator.from_model_dir(
            _MODEL_DIR.value, search_flags.CHECKPOINT.value, search_flags.BATCH_SIZE.value, workers=workers,
            function_cache=search_flags.function_cache(), precision=search_flags.PRECISION.value,
            quantize=search_flags.QUANTIZE.value, search_config=search_config,
        )
    if _PHRASE_TABLE_TOP.value:
        _phrase_table_top(scorer, _PHRASE_TABLE_TOP.value)
        return
    if _PHRASE_TABLE.value:
        _score_phrase_table(scorer)
        return
    sources, targets = inputs
    if _NBEST.value:
        _rescore(scorer, sources, targets, _OUTPUT.value, _BEST_OUTPUT.value)
        return
    progress = ProgressLine("scored", len(sources)) if _PROGRESS.value and sources else None
    scores = scorer.score(sources, targets, progress)
    with open_output(_OUTPUT.value) as output:
        for score in scores:
            if _OUTPUT_FORMAT.value == "json":
                output.write(json.dumps(score, ensure_ascii=False) + "\n")
            else:
                output.write(f"{score['log_prob']:.6f}\n")
    lines = range(1, len(sources) + 1)
    _report_truncation(scorer, scores, lines, ("--target", lines))

