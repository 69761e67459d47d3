"""Terminology for lexically constrained decoding: a glossary's terms found in each input line, and the
explicit constraints of a constraints file (`rnnsearch translate --terminology`, `--constraints_file`)."""

import dataclasses

import tensorflow as tf

from data_pipeline import constants, languages, text_codec
from rnnsearch_tf.inference.unk_replacer import Placement, UnkReplacer
from rnnsearch_tf.utils.text_files import numbered_lines, read_lines

COMMENT = "#"  # a glossary line starting with it is a comment
_CHUNK_LINES = 10_000  # input lines tokenized in one codec call


class TerminologyFileError(ValueError):
    """A malformed line of a glossary or constraints file, named by its file and line number (from 1)."""

    def __init__(self, path, number, problem):
        super().__init__(f"{path} line {number}: {problem}")
        self.path = path
        self.number = number


@dataclasses.dataclass(frozen=True)
class TermMatch:
    """A glossary term found in a line (`Glossary.matches`).

    Attributes:
        target: the target term.
        source: `(start, end)` of the source term among the tokens matched on (`end` excluded).
        capitalised: the term starts the line, whose first letter is a capital: its translation, where it
            starts the translation, starts with a capital too.
    """

    target: str
    source: tuple
    capitalised: bool


class Glossary:
    """Source terms and the target terms they must be translated as: each line's constraints.

    A term whose source appears in an input line makes its target term a constraint of that line, which
    the constrained search (Post & Vilar 2018, `Translator.translate_constrained`) puts in the translation.
    Terms and lines are matched on the tokens of the model's source codec, so a term is found where the
    model sees it: a word-level codec's Moses tokens ("dog" is found in "the dog, barking", not in
    "dogs"), a SentencePiece codec's pieces, where a match must also end a word (the piece after it may not
    continue a word: `TextCodec.continues_word`; "dog" is found in "dog," but not in "dogs"). A language
    written without spaces between words (`languages.writes_words_apart`: Chinese, Japanese, Thai ...) has no
    word to end, and its pieces depend on their neighbours ("北京" alone is "▁" "北京", in "去北京看" the piece
    "北京"): its terms are matched on the characters of the text, spaces left out ("北京" is found in
    "我们去北京看长城。"). Matching is case-sensitive, but for the first letter of a line's first word, which a
    sentence capitalises: a term starting at its first token with a letter or digit, or at a token before it
    (an opening quote, SentencePiece's lone "▁"), matches in either case ("man" in "Man sitting at a table",
    "Paris" in "paris ..."), the term as written first. With `ignore_case` case never counts (both sides
    case-folded before they are tokenized, Unicode's caseless matching: "STRASSE" finds "Straße"). Each line
    is read left to right, the longest term starting at a token winning, matches never overlapping ("New York"
    before "York"). A line's constraints are the target terms of its matches, each once (a term found twice,
    or two source terms with the same target, give one constraint), in the order found.

    What the search does not hold is done on the translations: a term matched at the start of a line that
    starts with a capital, whose target term starts the translation, gets a capital there
    (`capitalise_sentence_starts`: "monsieur assis ..." -> "Monsieur assis ..."); with a word-level target
    codec, a target term with a word outside the vocabulary is searched with `<unk>` there (`searched_as`: a
    term of unknown words only, which the search would skip, is given as `<unk>`s) and written over it
    (`unk_replacer`).

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
    >>> glossary.constraints(["The black dog sees a dog.", "Dog and cat."])
    [['chien noir', 'chien'], ['chien']]
    """

    def __init__(self, entries, source_codec, ignore_case=False, origins=None):
        self.source_codec = source_codec
        self.ignore_case = ignore_case
        self.by_characters = not languages.writes_words_apart(source_codec.language)
        origins = origins or [f"source term {source!r}" for source, _ in entries]
        sources = [source for source, _ in entries]
        variants = [None if ignore_case else _other_first_case(source) for source in sources]
        tokenized, _ = self._tokenize(sources + [variant for variant in variants if variant])
        terms = {}  # source tokens -> target term, first entry wins
        for tokens, (_, target), origin in zip(tokenized, entries, origins):
            if not tokens:
                raise ValueError(f"{origin}: the source term has no tokens (only spaces or control characters)")
            terms.setdefault(tuple(tokens), target)
        at_start = {}  # the terms' tokens with their first letter's case changed -> target term
        variant_tokens = iter(tokenized[len(entries) :])
        for variant, (_, target) in zip(variants, entries):
            tokens = tuple(next(variant_tokens)) if variant else ()
            if tokens and tokens not in terms:
                at_start.setdefault(tokens, target)
        self.entries = [(source, target) for source, target in entries]
        self._by_first_token, self._at_start = _by_first_token(terms), _by_first_token(at_start)

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
        return [list(dict.fromkeys(match.target for match in line)) for line in self.matches(sentences)]

    def matches(self, sentences):
        """The terms found in each sentence (list of str, raw text): lists of `TermMatch`, in the order found."""
        found = []
        for start in range(0, len(sentences), _CHUNK_LINES):
            chunk = sentences[start : start + _CHUNK_LINES]
            tokens, continues = self._tokenize(chunk)
            found += [self._line_matches(*line, _starts_with_capital(sentence))
                      for line, sentence in zip(zip(tokens, continues), chunk)]
        return found

    def capitalise_sentence_starts(self, sentences, results):
        """Gives a capital to the target term of a term matched at the start of a sentence that starts with a
        capital (`TermMatch.capitalised`), where it starts the translation: the search is asked for the term as
        written ("monsieur"), which it may put anywhere ("Un monsieur est assis").

        Args:
            sentences: list of str, the raw source sentences.
            results: `BatchTranslator.translate`'s results of them, changed in place: each `translation`, and
                those of `nbest` and `hypotheses` (their `tokens` stay as searched).
        """
        for matches, result in zip(self.matches(sentences), results):
            target = next((match.target for match in matches if match.capitalised), None)
            if target is None:
                continue
            for item in [result, *result.get("hypotheses", [])]:
                item["translation"] = _capitalised(item["translation"], target)
            result["nbest"] = [(_capitalised(text, target), score) for text, score in result["nbest"]]

    def searched_as(self, constraints, target_codec):
        """Each line's phrases as the search is given them: a target term of this glossary made only of words
        outside a word-level target vocabulary as `<unk>`s, one per word, which `Translator.translate_constrained`
        forces (it skips a phrase of unknown words written otherwise) and `unk_replacer` writes the term over.

        Args:
            constraints: list of lists of str, each line's phrases (`constraints`, merged with others').
            target_codec: the model's target `TextCodec`, or None (a subword model); a word-level export's has the
                vocabulary of its assets (`BatchTranslator`); one without a vocabulary cannot tell unknown words:
                the phrases are returned as given.
        """
        targets = list(dict.fromkeys(target for _, target in self.entries))
        if not targets or target_codec is None or not target_codec.has_unknown or target_codec.vocabulary is None:
            return constraints
        ids = target_codec.lookup(target_codec.tokenize_prefix(tf.constant(targets, tf.string))).to_list()
        unknown = {target: " ".join([constants.UNK_TOKEN] * len(row)) for target, row in zip(targets, ids)
                   if row and all(token == constants.UNK_ID for token in row)}
        return [[unknown.get(phrase, phrase) for phrase in phrases] for phrases in constraints]

    def unk_replacer(self, target_codec, replacer=None):
        """The `UnkReplacer` that writes each target term found in a sentence over the `<unk>`s the search put
        in its place (a word outside a word-level target vocabulary is searched as `<unk>`: `searched_as`),
        choosing by the attention on the term's source tokens, and replaces the other `<unk>`s as `replacer`
        does (None: leaves them).

        Args:
            target_codec: the model's word-level target `TextCodec` (its tokenization only: a word-level
                export's Moses rules do).
            replacer: the `UnkReplacer` of `--replace_unk`, or None (or one this method made, whose own choice
                is kept: a line typed at a terminal gets the glossary replacer of its own terms).
        """
        targets = list(dict.fromkeys(target for _, target in self.entries))
        tokens = target_codec.tokenize_prefix(tf.constant(targets, tf.string)).to_list() if targets else []
        target_tokens = {target: tuple(token.decode("utf-8") for token in row) for target, row in zip(targets, tokens)}

        def placements(source_words):
            return [Placement(target_tokens[match.target], None if self.by_characters else match.source)
                    for match in self._source_matches(source_words)]

        dictionary = None if replacer is None else replacer.dictionary
        copy_source_words = replacer is not None and replacer.copy_source_words
        return UnkReplacer(dictionary, placements, copy_source_words=copy_source_words)

    def _source_matches(self, source_words):
        """The `TermMatch`es of a translation's source tokens (list of str, the source codec's), matched as a
        line's tokens are (case-folded with `ignore_case`; by characters, whose positions are not tokens')."""
        if self.by_characters:
            text = "".join(source_words).replace(text_codec.WORD_START, " ")
            (characters,), (continues,) = self._tokenize([text])
            return self._line_matches(characters, continues, _starts_with_capital(text))
        tokens = [word.casefold() for word in source_words] if self.ignore_case else list(source_words)
        continues = [False] * len(tokens)
        if self.source_codec.is_subword and tokens:
            continues = self.source_codec.continues_word(tf.constant(tokens, tf.string)).numpy().tolist()
        text = text_codec.WORD_START.join(source_words)
        return self._line_matches(tokens, continues, _starts_with_capital(text))

    def _tokenize(self, texts):
        """`(tokens, continues)`: the tokens (lists of str) terms are matched on, of each text case-folded first
        with `ignore_case` (the source codec's, or the characters but spaces and control characters
        `by_characters`), and whether each continues the word before it (lists of bool)."""
        if self.ignore_case:
            texts = [text.casefold() for text in texts]
        if self.by_characters:
            characters = [[character for character in text if character.isprintable() and not character.isspace()]
                          for text in texts]
            return characters, [[False] * len(row) for row in characters]
        tokens = self.source_codec.tokenize(tf.constant(texts, tf.string))  # [texts, None]
        continues = tf.ragged.map_flat_values(self.source_codec.continues_word, tokens)  # [texts, None]
        return [[token.decode("utf-8") for token in row] for row in tokens.to_list()], continues.to_list()

    def _line_matches(self, tokens, continues, capital):
        """The terms matched in one line's tokens, in the order found; up to the line's first word (its first
        token with a letter or digit) also a term with its first letter's case changed. `continues`: whether
        each token continues the word before it (no match may end before one); `capital`: whether the line
        starts with a capital."""
        first_word = next((index for index, token in enumerate(tokens) if any(map(str.isalnum, token))), -1)
        matches, position = [], 0
        while position < len(tokens):
            terms = self._by_first_token.get(tokens[position], [])
            if position <= first_word:  # the terms as written first, on a tie
                terms = sorted(terms + self._at_start.get(tokens[position], []), key=lambda item: -len(item[0]))
            for term, target in terms:
                end = position + len(term)
                if tuple(tokens[position:end]) == term and (end == len(tokens) or not continues[end]):
                    matches.append(TermMatch(target, (position, end), capital and position <= first_word))
                    position = end
                    break
            else:
                position += 1
        return matches


def _by_first_token(terms):
    """{first token: [(tokens, target term)], longest first} of a {tokens: target term} dict."""
    index = {}
    for tokens, target in sorted(terms.items(), key=lambda item: -len(item[0])):
        index.setdefault(tokens[0], []).append((tokens, target))
    return index


def _other_first_case(text):
    """`text` with its first character in the other case ("man" -> "Man", "Paris" -> "paris"); None when it has
    no case (a digit, a Chinese character) or the other case is more than a letter ("ß" -> "SS")."""
    first = text[:1]
    other = first.lower() if first.isupper() else first.upper()
    if other == first or len(other) != 1:
        return None
    return other + text[1:]


def _starts_with_capital(text):
    """Whether the first letter or digit of `text` is a capital letter."""
    first = next((character for character in text if character.isalnum()), "")
    return first.isupper()


def _capitalised(translation, target):
    """`translation` with its first letter a capital where it starts with the word or words `target`."""
    after = translation[len(target) : len(target) + 1]
    capital = translation[:1].upper()
    if not translation.startswith(target) or after.isalnum() or not translation[:1].islower() or len(capital) != 1:
        return translation
    return capital + translation[1:]


def read_glossary(path):
    """The entries of a glossary file and their line numbers.

    The file is UTF-8 (a byte-order mark at its start is skipped), one `source term<TAB>target term` per
    line; spaces around each term are dropped; blank lines and lines starting with `#` are skipped. A line
    without exactly one TAB, with an empty term or not UTF-8 raises `TerminologyFileError` naming it.

    Returns:
        (list of (source term, target term), list of int: the line number of each, from 1).
    """
    entries, numbers = [], []
    for number, line in numbered_lines(path, lambda number, problem: TerminologyFileError(path, number, problem),
                                       bom=True):
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


def searched_phrases(constraints, target_codec, terms=None):
    """Each line's phrases (`merge_constraints`) as the search is given them: the target terms of the `Glossary`
    `terms` made of words outside a word-level target vocabulary as `<unk>`s (`Glossary.searched_as`, which
    `unk_replacer` writes over), and every other phrase made only of such words, the text `<unk>` among them, as
    "": skipped (`Translator.translate_constrained` forces the text `<unk>`, which only a glossary's term means).
    Unchanged with a subword `target_codec` (None) or one without a vocabulary (an export older than its assets).
    """
    searched = constraints if terms is None else terms.searched_as(constraints, target_codec)
    if target_codec is None or not target_codec.has_unknown or target_codec.vocabulary is None:
        return searched
    own = list(dict.fromkeys(phrase for line, searched_line in zip(constraints, searched)
                             for phrase, given in zip(line, searched_line) if phrase == given))
    ids = target_codec.lookup(target_codec.tokenize_prefix(tf.constant(own, tf.string))).to_list() if own else []
    unknown = {phrase for phrase, row in zip(own, ids) if all(token == constants.UNK_ID for token in row)}
    return [["" if phrase == given and phrase in unknown else given for phrase, given in zip(line, searched_line)]
            for line, searched_line in zip(constraints, searched)]


def constraint_report(constraints, results, before=0, most=20):
    """What `rnnsearch translate` says about the constraints after translating: each one skipped, not met or
    written as `<unk>` (the first `most`), then a summary line.

    A phrase is skipped when it has no tokens, or only words outside a word-level target vocabulary; not met
    when the search ended without it; written as `<unk>` when the search met it with `<unk>` for such a word
    and nothing wrote the word there (`Glossary.unk_replacer` writes a glossary's terms; a constraints file's
    phrase with a known word stays `<unk>` there, or becomes the source word `--replace_unk` copies): the
    translation does not hold its text (spaces and case aside).

    Args:
        constraints: list of lists of str, each line's target phrases.
        results: `BatchTranslator.translate` results of those lines (`constraints_met`, `constraints_skipped`,
            `source_tokens`, `translation`).
        before: the input lines before these (a line typed at a terminal is translated alone): a line is
            named by its number in the input, from 1.
        most: problems listed one per line; the others are counted.

    Returns:
        list of str, the lines to print.
    """
    problems, counts = [], dict.fromkeys(("met", "not met", "skipped", "written as <unk>"), 0)
    for number, (phrases, result) in enumerate(zip(constraints, results), start=before + 1):
        for phrase, was_met, was_skipped in zip(phrases, result["constraints_met"], result["constraints_skipped"]):
            if was_skipped:
                outcome, why = "skipped", "none of its words is in the target vocabulary"
            elif not was_met:
                outcome, why = "not met", "the line is empty" if not result["source_tokens"] else (
                    "the translation ended without it (a line's constraints must fit its length bound, "
                    "--maximum_length_a and --maximum_length_b)")
            elif not _written(phrase, result["translation"]):
                outcome, why = "written as <unk>", "a word of it is outside the target vocabulary"
            else:
                outcome, why = "met", None
            counts[outcome] += 1
            if why:
                problems.append(f"line {number}: constraint {phrase!r} {outcome}: {why}")
    report = problems[:most]
    if len(problems) > most:
        report.append(f"... and {len(problems) - most} more constraints skipped, not met or written as <unk>")
    lines_with = sum(1 for phrases in constraints if phrases)
    summary = ", ".join(f"{count:,} {outcome}" for outcome, count in counts.items()
                        if count or outcome != "written as <unk>")
    report.append(f"constraints: {sum(counts.values()):,} on {lines_with:,} of {len(constraints):,} lines: {summary}")
    return report


def _written(phrase, translation):
    """Whether the text of `phrase` is in `translation`, spaces and case aside (a detokenizer may join what a
    person typed apart, and a sentence's first letter may have become a capital)."""
    return "".join(phrase.split()).casefold() in "".join(translation.split()).casefold()
