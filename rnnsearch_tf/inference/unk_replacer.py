"""`<unk>` replacement from the alignment: the rare-word problem the paper's conclusion leaves open."""

import dataclasses

import numpy as np

from data_pipeline import constants
from rnnsearch_tf.utils.text_files import numbered_lines


@dataclasses.dataclass(frozen=True)
class Placement:
    """A target term to write over the `<unk>`s it was searched as (`UnkReplacer`'s `placements`).

    Attributes:
        tokens: tuple of str, the term's target tokens. A word-level search spells a word outside its
            vocabulary `<unk>`: a run of the translation equal to `tokens` where some are `<unk>` is the term.
        source: `(start, end)` of the source words it translates (`end` excluded), or None where not known.
    """

    tokens: tuple
    source: tuple = None


class UnkReplacer:
    """Replaces every `<unk>` of a translation with the source word it attends to most.

    Bahdanau et al. 2014 (Section 6) name the handling of unknown or rare words as the open problem of
    RNNsearch. Its soft alignment already says which source word produced each target word: for target
    position i, the source word j* = argmax_j α_ij (the annotation with the largest weight in the
    context c_i, Eq. 6) is the word the `<unk>` stands for (the "copy the aligned word" rule of
    Jean et al. 2015 and Luong et al. 2015). The `<unk>` becomes `dictionary[source word]` when the word
    is in the user's dictionary, else the source word itself (names, numbers and many rare words are
    spelled the same in English and French). The argmax runs over the source words only: the `</s>`
    appended to the source and the padding are never copied. A translation of an empty source keeps
    its `<unk>`s.

    Before that, each of the sentence's `placements` (a glossary's terms outside a word-level target
    vocabulary, which the constrained search forced as `<unk>`: `Glossary.unk_replacer`) that the translation
    does not hold is written over its `<unk>`s: of the runs of the translation that are its tokens with some
    of them `<unk>`, the one whose `<unk>`s attend most to the term's source words (the sum of their α_ij
    there; the first run where the source is not known, or on a tie). Each `<unk>` is one term's at most.

    Args:
        dictionary: optional mapping source word -> target text (one or several target tokens,
            space-separated). Lookup is exact (case-sensitive).
        placements: optional function from a sentence's source words (list of str) to the `Placement`s of its
            translation.
        copy_source_words: whether the `<unk>`s no placement takes are replaced (by the rule above): False
            writes the placements only.

    Example:
    >>> UnkReplacer({"chat": "cat"}).replace(
    ...     ["le", "<unk>", "</s>"], ["the", "Zyzzyva", "</s>"], np.array([[.9, .1, 0], [.2, .7, .1], [0, 0, 1]]))
    (['le', 'Zyzzyva', '</s>'], 1)
    """

    def __init__(self, dictionary=None, placements=None, copy_source_words=True):
        self.dictionary = dict(dictionary or {})
        self.placements = placements
        self.copy_source_words = copy_source_words

    @classmethod
    def from_file(cls, path):
        """Reads a dictionary file: one `source word<TAB>target text[<TAB>anything]` per line.

        Later columns (e.g. a probability) are ignored; the first line of a source word wins, so a
        lexical table sorted by descending probability gives each word its most probable translation.
        Blank lines are skipped, and a byte-order mark at the start (as every input file of translate and score).
        A line that is not UTF-8, or has no target text, raises `ValueError` naming the file and the line.
        """
        dictionary = {}
        error = lambda number, problem: ValueError(f"{path}:{number}: {problem}")  # noqa: E731
        for number, line in numbered_lines(path, error, bom=True):
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) < 2 or not fields[0] or not fields[1].strip():
                raise ValueError(f"{path}:{number}: expected 'source word<TAB>target text', got {line!r}")
            dictionary.setdefault(fields[0], fields[1].strip())
        return cls(dictionary)

    def replace(self, target_tokens, source_tokens, alignment):
        """Replaces the `<unk>`s of one translation.

        Args:
            target_tokens: list of str, the translation's tokens (`</s>` and padding may follow).
            source_tokens: list of str, the source tokens searched (`</s>` and padding may follow).
            alignment: float array `[>= len(target_tokens), >= number of source words]`: α_ij of
                target token i on source token j, as `Translator.translate` returns it.

        Returns:
            `(tokens, replaced)`: a new list of str with each `<unk>` replaced (a dictionary entry of
            several words stays one list item holding spaces), and the number of `<unk>`s replaced.
        """
        words = _words(source_tokens)
        tokens = list(target_tokens)
        alignment = np.asarray(alignment)
        replaced = self._place(tokens, words, alignment) if self.placements is not None else 0
        if not words or not self.copy_source_words:
            return tokens, replaced
        for position, token in enumerate(tokens):
            if token == constants.UNK_TOKEN:
                source_word = words[int(np.argmax(alignment[position, : len(words)]))]
                tokens[position] = self.dictionary.get(source_word, source_word)
                replaced += 1
        return tokens, replaced

    def _place(self, tokens, words, alignment):
        """Writes the placements of the source `words` over their `<unk>`s in `tokens` (in place); returns the
        number of `<unk>`s written."""
        replaced = 0
        for placement in self.placements(words):
            term = list(placement.tokens)
            starts = range(len(tokens) - len(term) + 1)
            if any(tokens[start : start + len(term)] == term for start in starts):
                continue  # held as it is
            runs = [start for start in starts if _searched_as(tokens[start : start + len(term)], term)]
            if not runs:
                continue
            start = max(runs, key=lambda run: (_attention(alignment, run, tokens, term, placement.source), -run))
            for offset, word in enumerate(term):
                if tokens[start + offset] == constants.UNK_TOKEN:
                    tokens[start + offset] = word
                    replaced += 1
        return replaced


def _searched_as(run, term):
    """Whether the tokens `run` are the tokens `term` with some (at least one) of them `<unk>`."""
    unknown = [token == constants.UNK_TOKEN for token in run]
    return any(unknown) and all(is_unknown or token == word for token, word, is_unknown in zip(run, term, unknown))


def _attention(alignment, start, tokens, term, source):
    """The attention of the `<unk>`s of the run of `tokens` at `start` (as long as `term`) on the source words
    `source` (`(start, end)`; 0 where None)."""
    if source is None:
        return 0.0
    rows = [start + offset for offset in range(len(term)) if tokens[start + offset] == constants.UNK_TOKEN]
    return float(alignment[rows, source[0] : source[1]].sum())


def _words(tokens):
    """The tokens before the first `</s>` or padding "" (the source words the alignment covers)."""
    words = []
    for token in tokens:
        if token in (constants.EOS_TOKEN, ""):
            break
        words.append(token)
    return words
