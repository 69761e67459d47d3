"""Terminology for lexically constrained decoding: a glossary's terms found in each input line, and the
explicit constraints of a constraints file (`rnnsearch translate --terminology`, `--constraints_file`)."""

import tensorflow as tf

from data_pipeline import languages, text_codec
from rnnsearch_tf.utils.text_files import read_lines

COMMENT = "#"  # a glossary line starting with it is a comment
_CHUNK_LINES = 10_000  # input lines tokenized in one codec call


class TerminologyFileError(ValueError):
    """A malformed line of a glossary or constraints file, named by its file and line number (from 1)."""

    def __init__(self, path, number, problem):
        super().__init__(f"{path} line {number}: {problem}")
        self.path = path
        self.number = number


class Glossary:
    """Source terms and the target terms they must be translated as: each line's constraints.

    A term whose source appears in an input line makes its target term a constraint of that line, which
    the constrained search (Post & Vilar 2018, `Translator.translate_constrained`) puts in the translation.
    Terms and lines are matched on the tokens of the model's source codec, so a term is found where the
    model sees it: a word-level codec's Moses tokens ("dog" is found in "the dog, barking", not in
    "dogs"), a SentencePiece codec's pieces, where a match must also end a word (the next piece starts a
    word or is not a letter or digit: "dog" is found in "dog," but not in "dogs"). A language written
    without spaces between words (`languages.writes_words_apart`: Chinese, Japanese, Thai ...) has no word
    to end, and its pieces depend on their neighbours ("北京" alone is "▁" "北京", in "去北京看" the piece
    "北京"): its terms are matched on the characters of the text, spaces left out ("北京" is found in
    "我们去北京看长城。"). Matching is case-sensitive unless `ignore_case` (both sides case-folded before they
    are tokenized, Unicode's caseless matching: "STRASSE" finds "Straße"). Each line is read left to right,
    the longest term starting at a token winning, matches never overlapping ("New York" before "York"). A
    line's constraints are the target terms of its matches, each once (a term found twice, or two source
    terms with the same target, give one constraint), in the order found.

    The glossary is tokenized once, in one codec call; input lines `_CHUNK_LINES` at a time.

    Args:
        entries: list of (source term, target term), raw text; the first entry of a source term wins
            (after case folding with `ignore_case`).
        source_codec: the model's source `TextCodec` (only its tokenization and its language are used).
        ignore_case: match terms whatever their case.
        origins: optional list of str, as many as `entries`, naming where each comes from
            ("glossary.tsv line 3") in the error raised for a source term with no tokens.

    Example:
    >>> glossary = Glossary([("black dog", "chien noir"), ("dog", "chien")], TextCodec("en"))
    >>> glossary.constraints(["The black dog sees a dog.", "A cat."])
    [['chien noir', 'chien'], []]
    """

    def __init__(self, entries, source_codec, ignore_case=False, origins=None):
        self.source_codec = source_codec
        self.ignore_case = ignore_case
        self.by_characters = not languages.writes_words_apart(source_codec.language)
        origins = origins or [f"source term {source!r}" for source, _ in entries]
        terms = {}  # source tokens -> target term, first entry wins
        for tokens, (_, target), origin in zip(self._tokenize([source for source, _ in entries]), entries, origins):
            if not tokens:
                raise ValueError(f"{origin}: the source term has no tokens (only spaces or control characters)")
            terms.setdefault(tuple(tokens), target)
        self.entries = [(source, target) for source, target in entries]
        self._by_first_token = {}  # first token -> [(tokens, target)], longest first
        for tokens, target in sorted(terms.items(), key=lambda item: -len(item[0])):
            self._by_first_token.setdefault(tokens[0], []).append((tokens, target))

    @classmethod
    def from_file(cls, path, source_codec, ignore_case=False):
        """Reads a glossary file (`read_glossary`)."""
        entries, numbers = read_glossary(path)
        return cls(entries, source_codec, ignore_case, [f"{path} line {number}" for number in numbers])

    def __len__(self):
        return len(self.entries)

    def constraints(self, sentences):
        """The target terms each sentence must be translated with.

        Args:
            sentences: list of str, raw source sentences.

        Returns:
            list of lists of str, one per sentence: the target terms of the glossary entries found in it.
        """
        found = []
        for start in range(0, len(sentences), _CHUNK_LINES):
            chunk = self._tokenize(sentences[start : start + _CHUNK_LINES])
            found += [self._line_constraints(tokens) for tokens in chunk]
        return found

    def _tokenize(self, texts):
        """The tokens (lists of str) terms are matched on, of each text case-folded first with `ignore_case`:
        the source codec's, or the characters but spaces and control characters `by_characters`."""
        if self.ignore_case:
            texts = [text.casefold() for text in texts]
        if self.by_characters:
            return [[character for character in text if character.isprintable() and not character.isspace()]
                    for text in texts]
        tokens = self.source_codec.tokenize(tf.constant(texts, tf.string)).to_list()
        return [[token.decode("utf-8") for token in row] for row in tokens]

    def _line_constraints(self, tokens):
        """The target terms matched in one line's tokens, each once, in the order found."""
        targets, position = {}, 0
        while position < len(tokens):
            for term, target in self._by_first_token.get(tokens[position], ()):
                end = position + len(term)
                if tuple(tokens[position:end]) == term and self._ends_word(tokens, end):
                    targets.setdefault(target)
                    position = end
                    break
            else:
                position += 1
        return list(targets)

    def _ends_word(self, tokens, end):
        """Whether a match ending before `tokens[end]` ends a word (always with a word-level codec, and for a
        language without spaces, matched `by_characters`)."""
        if not self.source_codec.is_subword or self.by_characters or end == len(tokens):
            return True
        following = tokens[end]
        return following.startswith(text_codec.WORD_START) or not following[:1].isalnum()


def read_glossary(path):
    """The entries of a glossary file and their line numbers.

    The file is UTF-8 (a byte-order mark at its start is skipped), one `source term<TAB>target term` per
    line; spaces around each term are dropped; blank lines and lines starting with `#` are skipped. A line
    without exactly one TAB, with an empty term or not UTF-8 raises `TerminologyFileError` naming it.

    Returns:
        (list of (source term, target term), list of int: the line number of each, from 1).
    """
    entries, numbers = [], []
    with open(path, "rb") as stream:
        for number, raw in enumerate(stream, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                raise TerminologyFileError(path, number, f"not UTF-8 ({error.reason} at byte {error.start})") from None
            if not line.strip() or line.startswith(COMMENT):
                continue
            fields = [field.strip() for field in line.split("\t")]
            if len(fields) != 2:
                problem = "no TAB" if len(fields) == 1 else f"{len(fields) - 1} TABs"
                raise TerminologyFileError(
                    path, number, f"expected 'source term<TAB>target term', got {line!r} ({problem})")
            if not all(fields):
                side = "source" if not fields[0] else "target"
                raise TerminologyFileError(path, number, f"the {side} term is empty in {line!r}")
            entries.append(tuple(fields))
            numbers.append(number)
    return entries, numbers


def read_constraints(path):
    """The target phrases of each line of a constraints file (or stdin for "-"): one line per input line,
    phrases separated by TAB, spaces around each dropped; an empty line (or field) gives none.

    Returns:
        list of lists of str, one per line.
    """
    return [[phrase.strip() for phrase in line.split("\t") if phrase.strip()] for line in read_lines(path)]


def merge_constraints(*per_line):
    """Each line's constraints from several sources (lists of lists of str, as long, or None), each phrase
    once, in the order given."""
    given = [lines for lines in per_line if lines is not None]
    if not given:
        return None
    return [list(dict.fromkeys(phrase for lines in line for phrase in lines)) for line in zip(*given)]


def constraint_report(constraints, results, most=20):
    """What `rnnsearch translate` says about the constraints after translating: each one skipped or not met
    (the first `most`), then a summary line.

    Args:
        constraints: list of lists of str, each line's target phrases.
        results: `BatchTranslator.translate` results of those lines (`constraints_met`, `constraints_skipped`,
            `source_tokens`).
        most: problems listed one per line; the others are counted.

    Returns:
        list of str, the lines to print.
    """
    problems, met, not_met, skipped = [], 0, 0, 0
    for number, (phrases, result) in enumerate(zip(constraints, results), start=1):
        for phrase, was_met, was_skipped in zip(phrases, result["constraints_met"], result["constraints_skipped"]):
            if was_skipped:
                skipped += 1
                problems.append(f"line {number}: constraint {phrase!r} skipped: none of its words is in the target "
                                "vocabulary")
            elif was_met:
                met += 1
            else:
                not_met += 1
                why = "the line is empty" if not result["source_tokens"] else (
                    "the translation ended without it (a line's constraints must fit its length bound, "
                    "--maximum_length_a and --maximum_length_b)")
                problems.append(f"line {number}: constraint {phrase!r} not met: {why}")
    report = problems[:most]
    if len(problems) > most:
        report.append(f"... and {len(problems) - most} more constraints skipped or not met")
    lines_with = sum(1 for phrases in constraints if phrases)
    report.append(f"constraints: {met + not_met + skipped:,} on {lines_with:,} of {len(constraints):,} lines: "
                  f"{met:,} met, {not_met:,} not met, {skipped:,} skipped")
    return report
