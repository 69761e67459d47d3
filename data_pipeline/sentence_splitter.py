"""Moses' sentence splitter (split-sentences.perl) for any language, in Python."""

import regex

from data_pipeline import languages, nonbreaking_prefixes

# Perl's IsUpper, IsAlnum, IsPi and IsPf; sentences start with an upper-case letter or a digit.
_UPPER = r"\p{Uppercase}"
_ALNUM = r"\p{Alphabetic}\p{Nd}"
_SENTENCE_START = _UPPER + "0-9"
_OPENING = r"'\"(\[¿¡\p{Pi}"  # quotes and brackets a sentence may open with
_CLOSING = "\u300d\u300f'\"\\)\\]\\p{Pf}"  # quotes and brackets a sentence may close with
_ENDS = "?!\u061f\u0964\u0965"  # end-of-sentence marks other than the period

# split-sentences.perl's substitutions before its period loop, in order (Perl's `s///g`).
_RULES = tuple(
    (regex.compile(pattern), r"\1\n\2")
    for pattern in (
        # ? or ! followed by a sentence start
        rf"([{_ENDS}]) +([{_OPENING}]*[{_SENTENCE_START}])",
        # multi-dots followed by a sentence start
        rf"(\.[\.]+) +([{_OPENING}]*[{_SENTENCE_START}])",
        # end punctuation inside a closing quote or bracket, then a sentence start
        rf"([{_ENDS}\.][\ ]*[{_CLOSING}]+) +([{_OPENING}]*[\ ]*[{_SENTENCE_START}])",
        # end punctuation, then an opening quote or bracket and a sentence start
        rf"([{_ENDS}\.]) +([\u300d\u300f{_OPENING}]+[\ ]*[{_SENTENCE_START}])",
    )
)
# split-sentences.perl's CJK rule: a full-width end mark (and the closing quotes after it) ends a sentence
# whatever follows, since such text has no space between sentences. Only CJK text holds these marks.
_FULL_WIDTH_END = regex.compile("([\u3002\uff0e\uff1f\uff01]+[\u300d\u300f\u201d\u2019\uff09]*) *(?=.)")
_PERIOD_WORD = regex.compile(rf"([{_ALNUM}\.\-]*)(['\"\)\]%\p{{Pf}}]*)(\.+)$")
_ACRONYM = regex.compile(rf"(\.)[{_UPPER}\-]+(\.+)$")
_NEXT_STARTS_SENTENCE = regex.compile(rf"^([ ]*[{_OPENING}]*[ ]*[0-9{_SENTENCE_START}])")
_HORIZONTAL_SPACE = regex.compile(r"[\t \xa0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000]")


class SentenceSplitter:
    """Splits a paragraph (one line of text) into sentences by the rules of Moses' split-sentences.perl.

    The rules, in order (mosesdecoder `scripts/ems/support/split-sentences.perl`, without its list-item
    option): runs of spaces become one; a sentence ends after a full-width `。．？！` (CJK text, with no
    space between sentences) and after `?` or `!`, after a run of dots,
    after end punctuation inside closing quotes or brackets, and after end punctuation followed by an
    opening quote or bracket, whenever the next word starts with an upper-case letter (or a digit); then
    each remaining word ending in a period ends a sentence when the next word starts (after opening quotes
    or brackets) with an upper-case letter or a digit, unless the word before the period is a
    non-breaking prefix ("Mr.", "M.", single letters), an upper-case acronym ("U.S."), or a numeric-only
    prefix before a number ("No. 5"). The prefixes are the tokenizer's
    (`data_pipeline/nonbreaking_prefixes.py`), so the splitter and `MosesTokenizer` agree on them.

    Args:
        language: a language code; its Moses non-breaking prefixes are used (English ones for a language
            sacremoses has none for, as split-sentences.perl does).

    Example:
    >>> SentenceSplitter("en").split("Mr. Smith arrived. He sat down! Did he stay?")
    ['Mr. Smith arrived.', 'He sat down!', 'Did he stay?']
    """

    def __init__(self, language):
        self.language = languages.check(language)
        self._prefixes, self._numeric_prefixes = nonbreaking_prefixes.prefixes(language)

    def split(self, text):
        """The sentences of `text` (str), in order, each without surrounding spaces; [] for a blank line."""
        text = regex.sub(r" +", " ", text.replace("\n", " ")).strip(" ")
        text = _FULL_WIDTH_END.sub("\\1\n", text)
        for pattern, replacement in _RULES:
            text = pattern.sub(replacement, text)
        words = _HORIZONTAL_SPACE.split(text)
        for index in range(len(words) - 1):
            if self._ends_sentence(words[index], words[index + 1]):
                words[index] += "\n"
        text = regex.sub(r" +", " ", " ".join(words))
        return [sentence.strip(" ") for sentence in text.split("\n") if sentence.strip(" ")]

    def _ends_sentence(self, word, next_word):
        """split-sentences.perl's loop over the words ending in a period."""
        match = _PERIOD_WORD.search(word)
        if not match:
            return False
        prefix, closing = match.group(1), match.group(2)
        has_prefix = prefix not in ("", "0")  # Perl's truth of a string
        if has_prefix and prefix in self._prefixes and not closing:
            return False
        if _ACRONYM.search(word):
            return False
        if not _NEXT_STARTS_SENTENCE.match(next_word):
            return False
        numeric_prefix = has_prefix and prefix in self._numeric_prefixes and prefix not in self._prefixes
        return not (numeric_prefix and not closing and regex.match(r"[0-9]+", next_word))
