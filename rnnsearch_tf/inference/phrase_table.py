"""Scores the phrase pairs of a Moses phrase table with log p(target | source): Cho et al. 2014, Section 4.1.

Cho et al. (2014) trained the RNN Encoder-Decoder on the phrase pairs of a phrase-based system and added
its score of every pair of the phrase table as a feature of the log-linear model. `PhraseTableScorer`
does the scoring: it reads a Moses phrase table, `source ||| target ||| scores ||| alignment ||| counts`
(three fields or more; plain or gzip, told by its first bytes), and writes it back with two scores
appended to the third field: log p(target | source) and that divided by the number of target tokens
scored (`</s>` included), a per-word score that does not favour short phrases. Every other byte of a
line stays as it was (the other fields, the `|||` separators and their spacing, the line end).

A phrase table's phrases are Moses tokens, escaped as `tokenizer.perl` writes them (`l&apos; homme`);
`moses_text` makes them the raw text every target the model scores is (`BatchTranslator.score`, as `score
--target` and `--nbest` give it), so that the model's codec reads them as it reads a translation.
"""

import contextlib
import gzip
import math
import sys

import tensorflow as tf

from data_pipeline import languages
from data_pipeline.text_codec import word_codec
from data_pipeline.pair_reader import open_binary

FIELD_SEPARATOR = b"|||"
# tokenizer.perl's escapes, undone in this order (`&amp;` last: "&amp;apos;" is the text "&apos;").
MOSES_ESCAPES = (("&#124;", "|"), ("&lt;", "<"), ("&gt;", ">"), ("&apos;", "'"), ("&quot;", '"'), ("&#91;", "["),
                 ("&#93;", "]"), ("&amp;", "&"))
ON_BAD_LINE = ("pass", "stop")
LINES_PER_CHUNK = 10_000


def moses_text(phrases, language):
    """The raw text of phrases of Moses tokens (list of str, `tokenizer.perl`'s output, escaped): unescaped
    (`MOSES_ESCAPES`) and joined as the Moses detokenizer of `language` joins them ("l&apos; homme" -> "l'homme"),
    or without spaces in a language written without them; only unescaped when `language` is None (an export
    older than its `source_language`). The model's codec then tokenizes the text as it does any target: a
    word-level model gets the same tokens back, a subword model the pieces of the words."""
    tokens = []
    for phrase in phrases:
        for escaped, character in MOSES_ESCAPES:
            phrase = phrase.replace(escaped, character)
        tokens.append(phrase.split())
    if language is None or not tokens:
        return [" ".join(phrase) for phrase in tokens]
    if not languages.writes_words_apart(language):
        return ["".join(phrase) for phrase in tokens]
    text = word_codec(language).detokenize(tf.ragged.constant(tokens, dtype=tf.string, row_splits_dtype=tf.int64))
    return [line.decode("utf-8") for line in text.numpy()]


class BadPhraseTableLine(ValueError):
    """A line of a phrase table with fewer than three `|||`-separated fields, under `on_bad_line="stop"`."""


class PhraseTableScorer:
    """Appends the model's scores of each phrase pair to a Moses phrase table, streaming.

    The table is read `lines_per_chunk` lines at a time; the pairs of a chunk are scored with
    `scorer.score(sources, targets)` (`BatchTranslator.score`, which cuts them into its own batches of
    similar length) and the chunk is written before the next is read, so a table of any size passes in
    the memory of one chunk.

    A pair's phrases are the first two fields, stripped of surrounding spaces, decoded as UTF-8 (invalid bytes
    as U+FFFD, for scoring only) and read as Moses tokens (`moses_text`, in the scorer's `source_language` and
    `target_language`). The two new scores are written with 6 significant
    digits (`%g`, as Moses writes its scores) after the last score of the third field, one space
    before each; the spaces around the field stay. With `probabilities`, exp of each is written instead:
    Moses' decoder takes the log of every phrase-table score, so it then sees log p(target | source).

    Args:
        scorer: an object with `source_language`, `target_language` and `score(sources, targets)` -> list of
            dicts with `log_prob` (float), `tokens` (the target tokens scored, `</s>` included),
            `source_truncated` and `target_truncated`: a `BatchTranslator`.
        lines_per_chunk: lines read, scored and written at a time.
        on_bad_line: what to do with a line of fewer than three fields: `"pass"` writes it unchanged
            (unscored) and reports it, `"stop"` raises `BadPhraseTableLine` naming it.
        probabilities: write exp of the scores (see above).
        report: callable given one message per bad line (default: print to stderr).

    Example:
    >>> scorer = PhraseTableScorer(BatchTranslator.from_model_dir("models/rnnencdec50"))
    >>> scorer.score_file("phrase-table.gz", "phrase-table.rnn.gz")
    {'lines': 1203, 'scored': 1202, 'bad_lines': 1, 'cut_lines': []}
    """

    def __init__(self, scorer, lines_per_chunk=LINES_PER_CHUNK, on_bad_line="pass", probabilities=False,
                 report=None):
        if lines_per_chunk < 1:
            raise ValueError(f"lines_per_chunk must be at least 1, got {lines_per_chunk}")
        if on_bad_line not in ON_BAD_LINE:
            raise ValueError(f"on_bad_line must be one of {ON_BAD_LINE}, got {on_bad_line!r}")
        self.scorer = scorer
        self.lines_per_chunk = lines_per_chunk
        self.on_bad_line = on_bad_line
        self.probabilities = probabilities
        self.report = report or (lambda message: print(message, file=sys.stderr))

    def score_file(self, input_path, output_path, progress=None):
        """Scores the table at `input_path` into `output_path` (gzip when it ends in `.gz`, "-": stdout).

        Returns: dict of counts, `lines`, `scored` and `bad_lines`, and `cut_lines`: the numbers (from 1) of
        the lines scored from their phrases' first tokens only (`source_truncated` or `target_truncated`).
        """
        with open_binary(input_path) as lines, _open_output(output_path) as output:
            return self.score_lines(lines, output, name=input_path, progress=progress)

    def score_lines(self, lines, output, name="<phrase table>", progress=None):
        """Scores an iterable of phrase-table lines (bytes, each with its line end) into a binary stream.

        `name` names the table in the messages about bad lines; `progress`, if given, is called with the
        number of lines written after each chunk. Returns the counts of `score_file`.
        """
        counts = dict(lines=0, scored=0, bad_lines=0, cut_lines=[])
        chunk = []
        for line in lines:
            counts["lines"] += 1
            chunk.append((counts["lines"], line))
            if len(chunk) == self.lines_per_chunk:
                self._write_chunk(chunk, output, name, counts)
                chunk = []
                if progress is not None:
                    progress(counts["lines"])
        if chunk:
            self._write_chunk(chunk, output, name, counts)
            if progress is not None:
                progress(counts["lines"])
        return counts

    def _write_chunk(self, chunk, output, name, counts):
        pairs = {}  # line number -> (fields, line end)
        for number, line in chunk:
            body, line_end = _split_line_end(line)
            fields = body.split(FIELD_SEPARATOR)
            if len(fields) < 3:
                message = (f"{name}:{number}: not a phrase-table line (fewer than 3 fields separated by "
                           f"'|||'): {body.decode('utf-8', 'replace')[:80]!r}")
                if self.on_bad_line == "stop":
                    raise BadPhraseTableLine(message)
                self.report(message + " (written unscored)")
                counts["bad_lines"] += 1
                continue
            pairs[number] = (fields, line_end)
        numbers = list(pairs)
        sources, targets = (moses_text([_phrase(pairs[number][0][side]) for number in numbers], language)
                            for side, language in enumerate((self.scorer.source_language, self.scorer.target_language)))
        scores = self.scorer.score(sources, targets)
        scores = dict(zip(numbers, scores))
        for number, line in chunk:
            if number not in scores:
                output.write(line)
                continue
            fields, line_end = pairs[number]
            log_prob = scores[number]["log_prob"]
            new_scores = [log_prob, log_prob / len(scores[number]["tokens"])]
            if self.probabilities:
                new_scores = [math.exp(score) for score in new_scores]
            new_scores = " ".join(f"{score:g}" for score in new_scores).encode()
            fields[2] = _append_scores(fields[2], new_scores, last=len(fields) == 3)
            output.write(FIELD_SEPARATOR.join(fields) + line_end)
            counts["scored"] += 1
            if scores[number]["source_truncated"] or scores[number]["target_truncated"]:
                counts["cut_lines"].append(number)


def table_candidates(path, source_phrases, table_score=2):
    """The target phrases a Moses phrase table holds for each of `source_phrases`, with one of its scores.

    The table is read once, line by line; only the lines of the given phrases are kept (compared with
    their surrounding spaces stripped). Lines of fewer than three fields, or without score number
    `table_score`, are skipped.

    Args:
        path: a Moses phrase table, plain or gzip.
        source_phrases: iterable of str.
        table_score: which score of the third field ranks the table's targets, 0-based: 2, the default, is
            the direct phrase translation probability p(e|f) of Moses' order `p(f|e) lex(f|e) p(e|f)
            lex(e|f)`, the "translation model" column of Cho et al. 2014, Table 2.

    Returns:
        dict source phrase -> list of `(target phrase, table score)`, best first (a phrase without a line
        in the table maps to an empty list).
    """
    candidates = {phrase.strip(): [] for phrase in source_phrases}
    with open_binary(path) as lines:
        for line in lines:
            fields = _split_line_end(line)[0].split(FIELD_SEPARATOR)
            if len(fields) < 3:
                continue
            source = _phrase(fields[0])
            scores = fields[2].split()
            if source in candidates and table_score < len(scores):
                candidates[source].append((_phrase(fields[1]), float(scores[table_score])))
    for targets in candidates.values():
        targets.sort(key=lambda target: -target[1])
    return candidates


def comparison_table(source_phrase, k, by_table, by_model, generated):
    """Cho et al. 2014, Table 2 for one source phrase, as Markdown: rank 1 to k of three lists of
    `(target phrase, score)`, best first: the table's targets by the table's score, the same targets by the
    model's log p(target | source), and the model's own n-best translations with their search scores."""
    lines = [
        f"### {source_phrase}",
        "",
        "| Rank | Table, by its score | Table, by the model's log p | The model's n-best |",
        "|---|---|---|---|",
    ]
    columns = [sorted(by_table, key=lambda item: -item[1]), sorted(by_model, key=lambda item: -item[1]), generated]
    for rank in range(k):
        cells = [
            f"{column[rank][0].replace('|', chr(92) + '|')} ({column[rank][1]:.4g})" if rank < len(column) else ""
            for column in columns
        ]
        lines.append(f"| {rank + 1} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n"


def _split_line_end(line):
    """`(body, line end)` of a line of bytes: the end is b"\\r\\n", b"\\n" or b"" (a last line without one)."""
    for line_end in (b"\r\n", b"\n"):
        if line.endswith(line_end):
            return line[: -len(line_end)], line_end
    return line, b""


def _phrase(field):
    return field.strip().decode("utf-8", "replace")


def _append_scores(field, new_scores, last):
    """The scores field with `new_scores` after its last score, its spaces around kept (a field of no
    scores becomes " NEW ", or " NEW" when it ends the line)."""
    if not field.strip():
        return b" " + new_scores + (b"" if last else b" ")
    end = len(field.rstrip())
    return field[:end] + b" " + new_scores + field[end:]


@contextlib.contextmanager
def _open_output(path):
    """A binary stream writing `path`: gzip when it ends in `.gz`, stdout for "-"."""
    if path == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
    elif str(path).endswith(".gz"):
        with gzip.open(path, "wb") as stream:
            yield stream
    else:
        with open(path, "wb") as stream:
            yield stream
