"""Moses' sentence splitter (split-sentences.perl) for any language, in Python."""

import functools

import regex

from data_pipeline import languages, nonbreaking_prefixes

# Perl's IsUpper, IsAlnum, IsPi and IsPf; sentences start with an upper-case letter or a digit.
_UPPER = r"\p{Uppercase}"
_ALNUM = r"\p{Alphabetic}\p{Nd}"
_SENTENCE_START = _UPPER + "0-9"
_OPENING = r"'\"(\[¿¡\p{Pi}"  # quotes and brackets a sentence may open with
_CLOSING = "\u300d\u300f'\"\\)\\]\\p{Pf}"  # quotes and brackets a sentence may close with
_ENDS = "?!\u061f\u0964\u0965"  # end-of-sentence marks other than the period: ? ! ؟ and the dandas । ॥
# split-sentences.perl's `$sentence_start` beyond upper-case letters and digits: the letters of a script without
# case, for the languages it names (keyed by `languages.base_language`), as the `regex` module spells its blocks.
_HANGUL = "".join(rf"\p{{Block={block}}}" for block in (
    "Hangul", "Hangul_Compatibility_Jamo", "Hangul_Jamo", "Hangul_Jamo_Extended_A", "Hangul_Jamo_Extended_B"))
_CASELESS_STARTS = {
    **dict.fromkeys(("hi", "mr"), r"\p{Block=Devanagari}\p{Block=Devanagari_Extended}"),
    "gu": r"\p{Block=Gujarati}",
    **dict.fromkeys(("as", "bn", "mni"), r"\p{Block=Bengali}"),
    "kn": r"\p{Block=Kannada}", "ml": r"\p{Block=Malayalam}", "or": r"\p{Block=Oriya}", "pa": r"\p{Block=Gurmukhi}",
    "ta": r"\p{Block=Tamil}", "te": r"\p{Block=Telugu}", "ko": _HANGUL,
    "fa": r"\p{Script_Extensions=Arabic}",  # Perl's \p{Arabic}
}
# split-sentences.perl's rules for the languages it names after its four general ones, in order: for Chinese and
# Japanese (`$is_cjk`; yue follows zh) a full-width end mark, with the spaces and one closing quote after it, ends a
# sentence whatever follows (such text has no space between sentences), and so does ". ? ! ؟" before a Han
# character (Perl's \p{CJK}); for Urdu "." "?" "!" "۔" (and closing quotes) before an Arabic letter, as Urdu has no
# upper case. Its CJK spaces between two punctuation marks are left out: they change the text, not the split.
_CJK_RULES = (
    (r"([\u3002\uff0e\uff1f\uff01]+\s*[\"\u201d\u201e\u300d\u300f]?\s*)", "\\1\n"),
    (r"([\.?!\u061f]) *(\p{Block=CJK_Unified_Ideographs})", "\\1\n\\2"),
)
_LANGUAGE_RULES = {
    "zh": _CJK_RULES,
    "ja": _CJK_RULES,
    "ur": ((r"((?:[\.\?!\u06d4]|\.\.+)['\"\u201e\xbb\(\[¿¡\p{Pf}]*)"
            r"\s+(['\"\u201e\xbb\(\[¿¡\p{Pi}]*[\u0600-\u06ff])", "\\1\n\\2"),),
}
_PERIOD_WORD = regex.compile(rf"([{_ALNUM}\.\-]*)(['\"\)\]%\p{{Pf}}]*)(\.+)$")
_ACRONYM = regex.compile(rf"(\.)[{_UPPER}\-]+(\.+)$")
_HORIZONTAL_SPACE = regex.compile(r"[\t \xa0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000]")


@functools.lru_cache(maxsize=None)
def _rules(language):
    """(substitutions, next_starts_sentence) of split-sentences.perl for `language` (a `languages.base_language`):
    its `s///g` before the period loop, in order, as (compiled pattern, replacement), and the loop's test of the
    word after a period."""
    start = _SENTENCE_START + _CASELESS_STARTS.get(language, "")
    general = (
        # ? ! ؟ or a danda followed by a sentence start
        rf"([{_ENDS}]) +([{_OPENING}]*[{start}])",
        # multi-dots followed by a sentence start
        rf"(\.[\.]+) +([{_OPENING}]*[{start}])",
        # end punctuation inside a closing quote or bracket, then a sentence start
        rf"([{_ENDS}\.][\ ]*[{_CLOSING}]+) +([{_OPENING}]*[\ ]*[{start}])",
        # end punctuation, then an opening quote or bracket and a sentence start
        rf"([{_ENDS}\.]) +([\u300d\u300f{_OPENING}]+[\ ]*[{start}])",
    )
    substitutions = [(pattern, r"\1\n\2") for pattern in general] + list(_LANGUAGE_RULES.get(language, ()))
    return (tuple((regex.compile(pattern), replacement) for pattern, replacement in substitutions),
            regex.compile(rf"^([ ]*[{_OPENING}]*[ ]*[0-9{start}])"))


class SentenceSplitter:
    """Splits a paragraph (one line of text) into sentences by the rules of Moses' split-sentences.perl.

    The rules, in order (mosesdecoder `scripts/ems/support/split-sentences.perl`, without its list-item
    option): runs of spaces become one; a sentence ends after `?`, `!`, `؟` or a danda (`।`, `॥`), after a run of
    dots, after end punctuation inside closing quotes or brackets, and after end punctuation followed by an opening
    quote or bracket, whenever the next word starts with a sentence start: an upper-case letter, a digit, or for
    the languages whose script has no case that the script names (Hindi, Marathi, Gujarati, Bengali, Korean,
    Persian ...: `_CASELESS_STARTS`); then the rules of a few languages (`_LANGUAGE_RULES`): in Chinese and
    Japanese a full-width `。．？！` ends a sentence whatever follows, and `.` `?` `!` before a Han character does;
    in Urdu `.` `?` `!` `۔` before an Arabic letter; then each remaining word ending in a period ends a sentence
    when the next word starts (after opening quotes or brackets) with a sentence start, unless the word before the
    period is a non-breaking prefix ("Mr.", "M.", single letters), an upper-case acronym ("U.S."), or a
    numeric-only prefix before a number ("No. 5"). The prefixes are the tokenizer's
    (`data_pipeline/nonbreaking_prefixes.py`), so the splitter and `MosesTokenizer` agree on them. A language's
    rules are its `languages.base_language`'s (Cantonese, yue, as Chinese, as the Perl script has it).

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
        self._substitutions, self._next_starts_sentence = _rules(languages.base_language(language))

    def split(self, text):
        """The sentences of `text` (str), in order, each without surrounding spaces; [] for a blank line."""
        text = regex.sub(r" +", " ", text.replace("\n", " ")).strip(" ")
        for pattern, replacement in self._substitutions:
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
        if not self._next_starts_sentence.match(next_word):
            return False
        numeric_prefix = has_prefix and prefix in self._numeric_prefixes and prefix not in self._prefixes
        return not (numeric_prefix and not closing and regex.match(r"[0-9]+", next_word))
