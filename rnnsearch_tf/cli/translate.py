"""Translates a file (or stdin) with a trained model directory or an exported SavedModel.

    python -m rnnsearch_tf.translate --model_dir=models/rnnsearch50 --input=test.en --output=test.fr
    python -m rnnsearch_tf.translate --saved_model=exports/rnnsearch --output_format=nbest < test.en
    python -m rnnsearch_tf.translate --model_dir=models/rnnsearch50 --input=test.en --prefix_file=starts.fr

Sentences are translated in batches of similar length and written in input order; lines typed at a terminal
(stdin, no --input) are translated one at a time as they are entered. An empty input line
gives an empty output line; a line of more than `--maximum_source_length` Moses tokens is translated
from its first tokens only, and its line number is reported on stderr, as are the lines that hold several
sentences by Moses' rules when they are translated whole. With `--prefix_file` each
translation starts with the words of its line there (`Translator.translate_prefix`). With `--terminology`
(a glossary) and `--constraints_file` each translation must contain given target phrases
(`Translator.translate_constrained`, `inference.glossary`); the phrases skipped or not met are listed on
stderr with a summary. Output formats: see
`rnnsearch_tf.inference.output_formats`. With `--split_sentences` each line is split into sentences by
Moses' sentence splitter's rules (`ParagraphTranslator`), every sentence of the input is translated in
one batch, and each line's translations are joined with a space, in order (the `alignment` format keeps
one matrix per sentence).
"""

import sys

from absl import app, flags

from rnnsearch_tf.cli import folder_flags, search_flags
from rnnsearch_tf.inference import output_formats
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference import glossary
from rnnsearch_tf.inference.paragraph_translator import ParagraphTranslator
from rnnsearch_tf.inference.source_coverage import oov_warning
from rnnsearch_tf.inference.unk_replacer import UnkReplacer
from rnnsearch_tf.inference.verbatim_terms import verbatim_terms_of
from data_pipeline.export_dir import ExportSettings
from data_pipeline.progress_line import ProgressLine
from rnnsearch_tf.utils.function_cache import run_graphs_without_grappler
from rnnsearch_tf.utils.text_files import (check_line_for_line, check_writable, each_line, line_numbers, open_output,
                                          read_lines)

_MODEL_DIR = folder_flags.define_model_dir(ensemble=True)
_SAVED_MODEL = folder_flags.define_saved_model()
_INPUT = flags.DEFINE_string("input", "-", 'Source sentences, one per line ("-": stdin).')
_PREFIX_FILE = flags.DEFINE_string(
    "prefix_file", None, "Target-language text each translation must start with, one line per input line (an "
    "empty line: no prefix); words outside the target vocabulary are forced, and output, as <unk> (written back as "
    "given with --replace_unk, lower-cased by a --lowercase model)."
)
_TERMINOLOGY = flags.DEFINE_string(
    "terminology", None, "A glossary of UTF-8 'source term<TAB>target term' lines (# comments): a term whose source "
    "is in an input line (on the model's source tokens) must be translated as its target term there."
)
_TERMINOLOGY_IGNORE_CASE = flags.DEFINE_boolean(
    "terminology_ignore_case", False, "Match --terminology's source terms whatever their case."
)
_CONSTRAINTS_FILE = flags.DEFINE_string(
    "constraints_file", None, "Target-language phrases each translation must contain, one line per input line, "
    "phrases separated by TAB (an empty line: none); with --terminology, the phrases of both."
)
_VERBATIM = flags.DEFINE_boolean(
    "verbatim", False, "Keep each line's numbers and capitalised words as they are: each a constraint of its line "
    "(rnnsearch_tf/inference/verbatim_terms.py). With --model_dir, a capitalised word counts only when the model "
    "finds it rare (outside a word vocabulary, or in 3 subword pieces or more), so a German noun it knows is not "
    "forced. With --terminology or "
    "--constraints_file, after their phrases."
)
_OUTPUT = flags.DEFINE_string("output", "-", 'Where translations go ("-": stdout).')
_OUTPUT_FORMAT = flags.DEFINE_enum(
    "output_format", "text", output_formats.FORMATS, "See rnnsearch_tf.inference.output_formats."
)
_REPLACE_UNK = flags.DEFINE_boolean(
    "replace_unk", False, "Replace each <unk> with its most-attended source word (or its --unk_dictionary entry); "
    "refused for a model without attention (RNNencdec), which aligns nothing."
)
_SPLIT_SENTENCES = flags.DEFINE_boolean(
    "split_sentences", False, "Split each line into sentences (Moses' rules), translate them, join the translations."
)
_PROGRESS = flags.DEFINE_boolean("progress", True, "Draw a progress bar on stderr.")


def read_input():
    """The lines of --input, those of --prefix_file and the phrases of each line of --constraints_file (None
    without the file), as many."""
    sentences = read_lines(_INPUT.value)
    prefixes = _per_line(_PREFIX_FILE, "prefix", read_lines, sentences)
    return sentences, prefixes, _per_line(_CONSTRAINTS_FILE, "constraints", glossary.read_constraints, sentences)


def _per_line(flag, what, read, sentences):
    """`read(flag.value)` (None without the flag), refused unless it has one line per input line (`sentences`)."""
    if flag.value is None:
        return None
    lines = read(flag.value)
    check_line_for_line((f"--{flag.name}", flag.value, lines), ("--input", _INPUT.value, sentences),
                        f"{what} line (possibly empty)")
    return lines


def _check_constraint_flags():
    """Refuses --terminology and --constraints_file with --prefix_file or --split_sentences, and a malformed
    glossary before the model loads; returns the glossary's entries and their line names (None without it)."""
    if _TERMINOLOGY.value is None and _CONSTRAINTS_FILE.value is None and not _VERBATIM.value:
        return None
    if _PREFIX_FILE.value is not None or _SPLIT_SENTENCES.value:
        raise app.UsageError("--terminology, --constraints_file and --verbatim take neither --prefix_file nor "
                             "--split_sentences")
    if _TERMINOLOGY.value is None:
        return [], []
    entries, numbers = glossary.read_glossary(_TERMINOLOGY.value)
    return entries, [f"{_TERMINOLOGY.value} line {number}" for number in numbers]


def _constraints(translator, sentences, explicit, terminology):
    """Each line's target phrases (None without constraint flags): --constraints_file's, then the terms of
    --terminology (its `(entries, origins)`) found in the line by the model's source codec, then --verbatim's;
    and the `Glossary` (None without --terminology, or --verbatim with a word-level target), whose terms outside
    a word vocabulary the search is given as `<unk>`s and the translator's `<unk>` replacement writes: with a
    word-level target --verbatim's names are its terms too, each its own translation, so that a name outside
    the vocabulary is forced as `<unk>` and written back, as a glossary entry `Name<TAB>Name` is."""
    if terminology is None:
        return None, None
    if translator.search_config.sampling:
        raise app.UsageError("--terminology, --constraints_file and --verbatim constrain beam search, not --sampling")
    entries, origins = terminology
    found = verbatim = terms = None
    if _TERMINOLOGY.value is not None:
        found = _glossary(translator, entries, origins).constraints(sentences)
    if _VERBATIM.value:  # a first word is judged by the model's vocabulary: from --model_dir, not an export
        verbatim = verbatim_terms_of(sentences, translator.source_codec)
        if translator.target_codec is not None:  # a word-level target: its names as the glossary's terms of themselves
            names = list(dict.fromkeys(term for line in verbatim for term in line))
            entries = entries + [(name, name) for name in names]
            origins = origins + [f"--verbatim term {name!r}" for name in names]
    if entries:
        terms = _glossary(translator, entries, origins)
        if translator.target_codec is not None:  # a word-level target: a term outside it is searched as <unk>
            translator.unk_replacer = terms.unk_replacer(translator.target_codec, translator.unk_replacer)
    return glossary.merge_constraints(explicit, found, verbatim), terms


def _glossary(translator, entries, origins):
    """The `Glossary` of `(source term, target term)` entries named by `origins`, matched as --terminology says."""
    return glossary.Glossary(entries, _source_codec(translator), _TERMINOLOGY_IGNORE_CASE.value, origins)


def _source_codec(translator):
    """The source `TextCodec` --terminology is matched with: a model's own; a word-level export's Moses rules."""
    if translator.source_codec is not None:
        return translator.source_codec
    settings = ExportSettings.read(translator.module)
    if not settings.codec_is_moses("source"):
        raise app.UsageError("--terminology needs the model's subword codec: give --model_dir (or --constraints_file)")
    return settings.moses_codec("source")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    if (_MODEL_DIR.value is None) == (_SAVED_MODEL.value is None):
        raise app.UsageError("give exactly one of --model_dir and --saved_model")
    if _SAVED_MODEL.value:
        search_flags.refuse_with_saved_model()
    if _SPLIT_SENTENCES.value and (_PREFIX_FILE.value is not None or _OUTPUT_FORMAT.value == "nbest"):
        raise app.UsageError("--split_sentences takes neither --prefix_file nor --output_format=nbest")
    if search_flags.UNK_DICTIONARY.value and not _REPLACE_UNK.value:
        raise app.UsageError("--unk_dictionary is used by <unk> replacement only: give --replace_unk with it")
    terminology = _check_constraint_flags()
    check_writable(_OUTPUT.value, "--output")
    typed = _INPUT.value == "-" and sys.stdin.isatty()
    if typed and (_PREFIX_FILE.value is not None or _CONSTRAINTS_FILE.value is not None):
        raise app.UsageError("--prefix_file and --constraints_file pair their lines with the input's: give --input "
                             "a file (lines typed at a terminal are translated one at a time)")
    sentences, prefixes, explicit_constraints = ([], None, None) if typed else read_input()
    translator = _load_translator()
    if _REPLACE_UNK.value and not translator.uses_attention:  # an export records it (`ExportSettings`)
        given = f"--saved_model={_SAVED_MODEL.value}" if _SAVED_MODEL.value else f"--model_dir={_MODEL_DIR.value}"
        raise app.UsageError("--replace_unk copies the source word each <unk> attends to most (or its "
                             f"--unk_dictionary entry), and {given} has no attention (RNNencdec): no "
                             "alignment names that word; translate without --replace_unk")
    shortlist = ""
    if translator.search_config.shortlist:
        shortlist = " over its vocabulary shortlist (--noshortlist: the whole vocabulary)"
    print(f"translating with {translator.loaded_from}{shortlist}", file=sys.stderr)
    if not typed:
        results, messages = _translate_lines(translator, sentences, prefixes, explicit_constraints, terminology,
                                             show_progress=_PROGRESS.value)
        with open_output(_OUTPUT.value) as output:  # opened once everything is translated: a failure keeps the old
            _write(output, results)
        _report(messages)
        return
    print("type a sentence and press Enter to translate it; Ctrl-D ends", file=sys.stderr)
    with open_output(_OUTPUT.value) as output:
        for number, line in enumerate(each_line("-")):  # each line translated as it comes, as fairseq-interactive does
            results, messages = _translate_lines(translator, [line], None, None, terminology, number, typed=True)
            _write(output, results, number)
            output.flush()
            _report(messages)


def _report(messages):
    for message in messages:
        print(message, file=sys.stderr)


def _write(output, results, before=0):
    """The translations of the input lines after the first `before` in `--output_format`."""
    for index, result in enumerate(results, before):
        output.write(output_formats.format_translation(index, result, _OUTPUT_FORMAT.value))


def _load_translator():
    """The `BatchTranslator` of --model_dir or --saved_model with the search flags."""
    workers = search_flags.decode_workers()
    unk_replacer = None
    if _REPLACE_UNK.value:
        dictionary = search_flags.UNK_DICTIONARY.value
        unk_replacer = UnkReplacer.from_file(dictionary) if dictionary else UnkReplacer()
    if _SAVED_MODEL.value:
        run_graphs_without_grappler()  # test_2016 1-1.6 s faster
        return BatchTranslator.from_saved_model(_SAVED_MODEL.value, search_flags.BATCH_SIZE.value, unk_replacer,
                                                workers)
    return BatchTranslator.from_model_dir(
        _MODEL_DIR.value,
        search_flags.CHECKPOINT.value,
        search_flags.BATCH_SIZE.value,
        unk_replacer,
        workers,
        function_cache=search_flags.function_cache(),
        precision=search_flags.PRECISION.value,
        quantize=search_flags.QUANTIZE.value,
        search_config=search_flags.search_config(),
    )


def _translate_lines(translator, sentences, prefixes, explicit_constraints, terminology, before=0,
                     show_progress=False, typed=False):
    """`(results, messages)`: the translations of `sentences`, the input lines after the first `before`, and what
    stderr says of them (lines numbered from the input's first), with a progress bar if `show_progress`. A line
    `typed` at a terminal gets the constraints summary only where it has constraints, as its other warnings are
    said only where they apply."""
    constraints = None
    if _SPLIT_SENTENCES.value:
        paragraphs = ParagraphTranslator(translator)
        split_lines = paragraphs.split(sentences)
        count = sum(len(line) for line in split_lines)
        progress = ProgressLine("translated", count, unit="sentences") if show_progress and count else None
        results = paragraphs.translate(split_lines, progress)
    else:
        constraints, terms = _constraints(translator, sentences, explicit_constraints, terminology)
        progress = ProgressLine("translated", len(sentences)) if show_progress and sentences else None
        searched = None if constraints is None else glossary.searched_phrases(constraints, translator.target_codec,
                                                                             terms)
        results = translator.translate(sentences, progress, prefixes, searched)
        if terms is not None:
            terms.capitalise_sentence_starts(sentences, results)
    messages = list(_warnings(translator, sentences, results, before))
    if prefixes is not None:
        messages += _prefix_warnings(translator, prefixes, results, before)
    if terminology is not None and (not typed or any(constraints)):
        messages += glossary.constraint_report(constraints, results, before)
    return results, messages


def _prefix_warnings(translator, prefixes, results, before=0):
    """What stderr says of --prefix_file's lines that were not forced whole: cut to the longest translation, or
    given for an empty input line (which has no translation to start)."""
    cut = [before + index + 1 for index, result in enumerate(results) if result.get("prefix_truncated")]
    if cut:
        yield (f"--prefix_file lines cut to their first {translator.maximum_target_length - 1} target tokens (the "
               "longest translation, --maximum_length_a * --maximum_source_length + --maximum_length_b, less its "
               f"</s>): {line_numbers(cut)}")
    unused = [before + index + 1 for index, (prefix, result) in enumerate(zip(prefixes, results))
              if prefix.strip() and not result["source_tokens"]]
    if unused:
        yield f"--prefix_file lines not used, their input line being empty: {line_numbers(unused)}"


def _warnings(translator, sentences, results, before=0):
    """What stderr says after the translations: input outside the model's vocabulary (a model directory
    only), lines of several sentences (unless they were split or cannot be), lines cut to the length bound;
    `sentences` are the input's lines after the first `before`."""
    if translator.source_codec is not None:
        warning = oov_warning(results, translator.source_codec, translator.target_language)
        if warning:
            yield warning
    if _REPLACE_UNK.value and translator.unk_replacer is None:
        yield "note: --replace_unk does nothing here: the model's subword vocabulary has no <unk>"
    splittable = _PREFIX_FILE.value is None and _OUTPUT_FORMAT.value != "nbest" and translator.source_language
    if not _SPLIT_SENTENCES.value and splittable:
        several = [before + number for number in ParagraphTranslator(translator).lines_of_several_sentences(sentences)]
        if several:
            yield (
                f"warning: several sentences in {line_numbers(several)}: a model trained on single sentences often "
                "translates about one sentence's worth of such a line and stops; --split_sentences translates "
                "each sentence and joins their translations"
            )
    truncated = [before + index + 1 for index, result in enumerate(results) if result["truncated"]]
    if truncated:
        cut = "with a sentence cut to its" if _SPLIT_SENTENCES.value else "cut to their"
        length = translator.search_config.maximum_source_length
        yield f"lines {cut} first {length} tokens (--maximum_source_length): {line_numbers(truncated)}"
