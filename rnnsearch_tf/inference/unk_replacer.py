"""`<unk>` replacement from the alignment: the rare-word problem the paper's conclusion leaves open."""

import numpy as np

from data_pipeline import constants


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

    Args:
        dictionary: optional mapping source word -> target text (one or several target tokens,
            space-separated). Lookup is exact (case-sensitive).

    Example:
    >>> UnkReplacer({"chat": "cat"}).replace(
    ...     ["le", "<unk>", "</s>"], ["the", "Zyzzyva", "</s>"], np.array([[.9, .1, 0], [.2, .7, .1], [0, 0, 1]]))
    (['le', 'Zyzzyva', '</s>'], 1)
    """

    def __init__(self, dictionary=None):
        self.dictionary = dict(dictionary or {})

    @classmethod
    def from_file(cls, path):
        """Reads a dictionary file: one `source word<TAB>target text[<TAB>anything]` per line.

        Later columns (e.g. a probability) are ignored; the first line of a source word wins, so a
        lexical table sorted by descending probability gives each word its most probable translation.
        Blank lines are skipped.
        """
        dictionary = {}
        with open(path, encoding="utf-8") as stream:
            for number, line in enumerate(stream, start=1):
                line = line.rstrip("\r\n")
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
        if not words:
            return tokens, 0
        alignment = np.asarray(alignment)
        replaced = 0
        for position, token in enumerate(tokens):
            if token == constants.UNK_TOKEN:
                source_word = words[int(np.argmax(alignment[position, : len(words)]))]
                tokens[position] = self.dictionary.get(source_word, source_word)
                replaced += 1
        return tokens, replaced


def _words(tokens):
    """The tokens before the first `</s>` or padding "" (the source words the alignment covers)."""
    words = []
    for token in tokens:
        if token in (constants.EOS_TOKEN, ""):
            break
        words.append(token)
    return words
