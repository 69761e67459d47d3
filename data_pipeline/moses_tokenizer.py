"""Moses tokenizer and detokenizer written with TensorFlow string ops."""

import dataclasses
import functools
import re

import tensorflow as tf

from data_pipeline import languages, nonbreaking_prefixes, sacremoses_answers
from data_pipeline.sacremoses_answers import APOSTROPHE_PROBE, DETOKENIZER_PROBES

# Python's `str.isspace()` characters (what Moses' `\s` means on Unicode text); RE2's `\s` is ASCII only.
_WHITESPACE = (
    r"[\t-\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]"
)
# Perl's IsAlpha / IsAlnum / IsN / IsLower, as Unicode general categories (docs/data.md names the gaps).
_ALPHA = r"\p{L}\p{Nl}\p{Mn}\p{Mc}"
_ALNUM = _ALPHA + r"\p{Nd}"
_NUMBER = r"\p{N}"
_LOWER = r"\p{Ll}"

# tokenizer.perl, in order, up to the apostrophe rules. Multi-dot runs ("...") are padded with spaces
# instead of being rewritten to Moses' DOTMULTI placeholder: the placeholder only protects the dots from
# the nonbreaking-prefix rule, which `_split_final_periods` does directly.
_COMMON_RULES = (
    (_WHITESPACE + "+", " "),
    (r"[\x{00}-\x{1f}]", ""),
    (r"^ +| +$", ""),
    (r"([^" + _ALNUM + r" .'`,\-])", r" \1 "),
    (r"(\.\.+)", r" \1 "),
    (r"([^" + _NUMBER + r"]),", r"\1 , "),
    (r",([^" + _NUMBER + r"])", r" , \1"),
    (r"([" + _NUMBER + r"]),$", r"\1 , "),
)
# tokenizer.perl's three ways with an apostrophe, keyed by what sacremoses makes of `APOSTROPHE_PROBE`.
_APOSTROPHE_RULES = {
    # English: the apostrophe starts the clitic ("it 's", "do n't").
    ("l", "'a", "it", "'s"): (
        (r"([^" + _ALPHA + r"])'([^" + _ALPHA + r"])", r"\1 ' \2"),
        (r"([^" + _ALPHA + _NUMBER + r"])'([" + _ALPHA + r"])", r"\1 ' \2"),
        (r"([" + _ALPHA + r"])'([^" + _ALPHA + r"])", r"\1 ' \2"),
        (r"([" + _ALPHA + r"])'([" + _ALPHA + r"])", r"\1 '\2"),
        (r"([" + _NUMBER + r"])'(s)", r"\1 '\2"),
    ),
    # Elision (French, Italian): the apostrophe ends the elided word ("l' homme", "qu' il").
    ("l'", "a", "it'", "s"): (
        (r"([^" + _ALPHA + r"])'([^" + _ALPHA + r"])", r"\1 ' \2"),
        (r"([^" + _ALPHA + r"])'([" + _ALPHA + r"])", r"\1 ' \2"),
        (r"([" + _ALPHA + r"])'([^" + _ALPHA + r"])", r"\1 ' \2"),
        (r"([" + _ALPHA + r"])'([" + _ALPHA + r"])", r"\1' \2"),
    ),
    # Every other language: the apostrophe is a token of its own.
    ("l", "'", "a", "it", "'", "s"): ((r"'", r" ' "),),
}
_FINAL_RULES = (
    (r" +", " "),
    (r"^ | $", ""),
    (r"\.' ?$", " . ' "),
)

# detokenizer.perl as sacremoses' `MosesDetokenizer` runs it: token by token, left to right, each token joins the one
# before it, or makes the next one join it, or neither, by the first of sacremoses' cases it falls in (the cases of a
# language come from sacremoses' answers: `MosesRules`) and, for a quote, by how many of its kind came before.
# A regular expression without look-around cannot see a neighbour without consuming it, so the rules first wrap every
# token in two marks, one at its start and one at its end; each case rewrites the marks of the tokens it decides,
# and the last rules write each gap from the marks either side of it. The marks are control characters, which no
# token holds (the tokenizer drops them).
_START = "\x01"  # a token's start, undecided: a space before it unless the token before makes it join
_END = "\x02"  # a token's end, undecided
_JOINS_BEFORE = "\x03"  # start of a token that joins the one before (".", English "'s", a closing quote)
_JOINS_AFTER = "\x04"  # end of a token the next one joins ("(", "$", an opening quote, French "l'")
_SPACED_BEFORE = "\x05"  # start of a token spaced from the one before whatever that is (French " ?")
_AFTER_S = "\x06"  # start of an apostrophe token after a word ending in "s" (an English possessive: "Jones' ")
_KEPT = "\x07"  # start of a token decided to keep its space (a CJK word after another word)
_AFTER_CJK = "\x08"  # start of a token after one ending in a CJK character, while the CJK case decides
_COUNT_SET = "\x0e"  # inside a quote token that sets the count of double quotes (`low_high_quotes`)
_MARKS = "\x01-\x08\x0e"
_CHARACTER = "[^" + _MARKS + "]"
_STARTS = "[" + _START + _JOINS_BEFORE + _SPACED_BEFORE + _KEPT + "]"  # any start mark but an apostrophe's
_ENDS = "[" + _END + _JOINS_AFTER + "]"

# sacremoses first undoes tokenizer.perl's aggressive hyphen splitting ("a @-@ b" -> "a-b", one token).
_MARK_TOKENS = ((r"(?:^| )@-@(?: |$)", "-"), (r"^ +| +$", ""), (" +", _END + _START),
                (r"(?s)^(.*)$", _START + r"\1" + _END))
# IS_CURRENCY_SYMBOL tokens make the next one join, IS_PUNCT tokens join the one before, in every language; single
# high punctuation marks keep their space before where the language has `space_before_high_punctuation`.
_OPENING = (_START + r"([\p{Sc}(\[{¿¡]+)" + _END, _START + r"\1" + _JOINS_AFTER)
_HIGH_PUNCTUATION = (_START + r"([?!:;\\%])" + _END, _SPACED_BEFORE + r"\1" + _END)
_CLOSING = (_START + r"([,.?!:;\\%}\])]+)" + _END, _JOINS_BEFORE + r"\1" + _END)
_ENGLISH_CONTRACTION = (_START + "('[" + _ALPHA + "])", _JOINS_BEFORE + r"\1")  # "'s", "'re", "'t", before "." too
# An elided word ("l'", "qu'") makes the next word join it if that starts with a letter. The rule consumes the next
# token's start, so of elided words in a row it decides every other one: it is applied twice.
_ELISION = (
    _START + "(" + _CHARACTER + "*[" + _ALPHA + "]')" + _END + "(" + _STARTS + ")([" + _ALPHA + "])",
    _START + r"\1" + _JOINS_AFTER + r"\2\3",
)


def _pairs(kind, between=r"(?s:.*?)"):
    """The rule pairing the undecided quote tokens of `kind` (a regex of whole tokens) left to right: the leftmost
    opens, the nearest one after it closes, and so on. `between`: what may lie between the two."""
    return (_START + "(" + kind + ")" + _END + "(" + between + ")[" + _START + _AFTER_S + "](" + kind + ")" + _END,
            _START + r"\1" + _JOINS_AFTER + r"\2" + _JOINS_BEFORE + r"\3" + _END)


# Quotes, sacremoses' IS_OPEN_QUOTE tokens: each kind is counted apart ("„" and "“" count as '"'), the first of a
# kind opens (the next token joins it), the next one closes (it joins the token before), and so on; one left open
# opens. These kinds are those tokens hold; a rarer kind (three backticks) would need a count of its own, which a
# regular expression cannot keep, and keeps its spaces.
_DOUBLE_QUOTES = '"|[„“]+'
_QUOTE_KINDS = ("'", "`", "``", "''")
_LEFT_OPEN = (_START + "(" + "|".join((_DOUBLE_QUOTES,) + _QUOTE_KINDS) + ")" + _END, _START + r"\1" + _JOINS_AFTER)
# Where "„" always opens and "“" always closes, each sets the count of double quotes (after "„" the next '"' closes),
# and double quotes pair only between two of them.
_LOW_HIGH_QUOTES = (
    (_START + "„" + _END, _START + _COUNT_SET + "„" + _JOINS_AFTER),
    (_START + "“" + _END, _JOINS_BEFORE + _COUNT_SET + "“" + _END),
    ("(" + _COUNT_SET + "„" + _JOINS_AFTER + "[^" + _COUNT_SET + "]*?)" + _START + '("|[„“]{2,})' + _END,
     r"\1" + _JOINS_BEFORE + r"\2" + _END),
    _pairs('"|[„“]{2,}', between="[^" + _COUNT_SET + "]*?"),
)
# An apostrophe after a word ending in "s" while no single quote is open is a possessive ("the Jones' house"): it
# joins that word and is not counted. It may still close a quote.
_MARK_POSSESSIVES = ("s(" + _ENDS + ")" + _START + "'" + _END, r"s\1" + _AFTER_S + "'" + _END)
_POSSESSIVES = (_AFTER_S + "'", _JOINS_BEFORE + "'")
_WRITE_GAPS = (
    (_ENDS + _SPACED_BEFORE + "|" + _END + "[" + _START + _KEPT + "]", " "),
    ("[" + _MARKS + "]", ""),
)


def _cjk_rules(ranges):
    """sacremoses' first case: a word starting with a CJK character joins a word ending in one; any other word
    starting with one keeps its space, whatever else it is. `ranges`: the code points sacremoses counts as CJK."""
    if not ranges:
        return ()
    cjk = "[" + "".join(f"\\x{{{first:x}}}-\\x{{{last:x}}}" for first, last in ranges) + "]"
    return (
        ("(" + cjk + ")" + _END + _START, r"\1" + _END + _AFTER_CJK),
        (_AFTER_CJK + "(" + cjk + ")", _JOINS_BEFORE + r"\1"),
        (_AFTER_CJK, _START),
        (_START + "(" + cjk + ")", _KEPT + r"\1"),
    )


@dataclasses.dataclass(frozen=True)
class MosesRules:
    """Moses' rules for one language, as sacremoses applies them: its nonbreaking prefixes, its way with
    apostrophes, and which of the detokenizer's language cases hold for it.

    Built by `MosesRules.of(language)`, which asks the installed sacremoses (its prefix files and what its
    tokenizer and detokenizer do to a few probes: `sacremoses_answers`), so a language's rules are never written
    in this code.

    Args:
        language: the language code.
        nonbreaking: words that keep a following period.
        numeric_only: words that keep it before a number.
        apostrophe: tokenizer.perl's apostrophe rules for the language.
        english_contractions: "it 's" -> "it's" on detokenization.
        elisions: "l' homme" -> "l'homme" on detokenization.
        space_before_high_punctuation: "Quoi ?" keeps its space (French typography).
        possessive_apostrophes: "the Jones ' house" -> "the Jones' house" (English), not "the Jones 'house".
        low_high_quotes: "„" always opens a quote and "“" always closes one (Czech), whatever the count says.
        cjk_ranges: (first, last) code points of the characters whose words are joined ("東京 大学" -> "東京大学").
    """

    language: str
    nonbreaking: frozenset
    numeric_only: frozenset
    apostrophe: tuple
    english_contractions: bool
    elisions: bool
    space_before_high_punctuation: bool
    possessive_apostrophes: bool
    low_high_quotes: bool
    cjk_ranges: tuple

    @classmethod
    @functools.lru_cache(maxsize=None)
    def of(cls, language):
        """The rules of `language` (checked: a language code written with spaces between words), from what sacremoses
        says of it (`sacremoses_answers`)."""
        languages.check_words_apart(language)
        found = sacremoses_answers.answers(language)
        probe = tuple(found["apostrophe_probe"])
        if probe not in _APOSTROPHE_RULES:
            raise ValueError(f"sacremoses tokenizes {APOSTROPHE_PROBE!r} as {probe} for {language!r}: a way with "
                             "apostrophes this tokenizer does not know (sacremoses changed?)")
        nonbreaking, numeric_only = nonbreaking_prefixes.prefixes(language)
        return cls(language, nonbreaking, numeric_only, _APOSTROPHE_RULES[probe],
                   cjk_ranges=tuple(tuple(bounds) for bounds in found["cjk_ranges"]),
                   **{name: found[name] for name in DETOKENIZER_PROBES})

    def detokenize_rules(self):
        """The detokenizer's rewrites for this language, in order: sacremoses' cases in its order, each deciding the
        tokens no earlier case decided (the marks of the comment above `_START`)."""
        return (
            _MARK_TOKENS + _cjk_rules(self.cjk_ranges) + (_OPENING,)
            + ((_HIGH_PUNCTUATION,) if self.space_before_high_punctuation else ()) + (_CLOSING,)
            + ((_ENGLISH_CONTRACTION,) if self.english_contractions else ())
            + ((_ELISION, _ELISION) if self.elisions else ())
            + (_LOW_HIGH_QUOTES if self.low_high_quotes else (_pairs(_DOUBLE_QUOTES),))
            + ((_MARK_POSSESSIVES,) if self.possessive_apostrophes else ())
            + tuple(_pairs(kind) for kind in _QUOTE_KINDS)
            + ((_POSSESSIVES,) if self.possessive_apostrophes else ())
            + (_LEFT_OPEN,) + _WRITE_GAPS
        )


def _apply(rules, text):
    for pattern, rewrite in rules:
        text = tf.strings.regex_replace(text, pattern, rewrite)
    return text


def _alternation(words):
    """A regex matching exactly one of `words` (never matching when `words` is empty)."""
    if not words:
        return r"[^\x{0}-\x{10ffff}]"
    return "(?:" + "|".join(re.escape(word) for word in sorted(words)) + ")"


class MosesTokenizer:
    """Moses `tokenizer.perl` (no escaping, no aggressive hyphen splitting) as pure TensorFlow ops.

    The same object tokenizes the corpora at build time and raw requests inside an exported SavedModel:
    it uses only `tf.strings` regex/split/join ops, which TF Serving links, and no Python in the graph.

    Rules (Koehn et al.'s tokenizer.perl, as used by Bahdanau et al. 2014, Section 4.1): collapse
    whitespace and drop control characters; pad every character that is not a letter, digit, `.`, `'`,
    `` ` ``, `,` or `-` with spaces; keep runs of dots together; split commas except between digits
    ("1,000" stays whole); split apostrophes as sacremoses does for the language (English "it 's",
    "do n't"; elisions "l' homme", "qu' il" in French and Italian; a token of its own elsewhere); split a
    word-final period unless the word is a nonbreaking prefix ("Mr.", "M."), contains another period and a letter
    ("U.S."), or the next word starts in lower case.

    Args:
        language: a language code written with spaces between words (`languages.check_words_apart`);
            its rules are `MosesRules.of(language)`, from sacremoses' data and behaviour.

    Example (every command reaches it through the word-level `TextCodec`):
    >>> TextCodec("fr").tokenize(tf.constant(["L'homme a 3,5 kg."]))
    <tf.RaggedTensor [[b"L'", b'homme', b'a', b'3,5', b'kg', b'.']]>
    """

    def __init__(self, language):
        self.language = language
        self.rules = MosesRules.of(language)
        self._nonbreaking = _alternation(self.rules.nonbreaking)
        self._numeric_only = _alternation(self.rules.numeric_only)

    def tokenize(self, strings):
        """Splits sentences into Moses tokens.

        Args:
            strings: tf.string `[batch]`, UTF-8 sentences.

        Returns:
            tf.RaggedTensor of tf.string `[batch, None]`: the tokens of each sentence.
        """
        text = _apply(_COMMON_RULES, tf.convert_to_tensor(strings, tf.string))
        text = _apply(self.rules.apostrophe, text)
        text = self._split_final_periods(tf.strings.split(text, sep=" "))
        text = _apply(_FINAL_RULES, text)
        tokens = tf.strings.split(text, sep=" ")  # [batch, None], may hold "" where text was empty
        return tf.ragged.boolean_mask(tokens, tf.strings.length(tokens) > 0)

    def detokenize(self, tokens):
        """Joins tokens back into text as sacremoses' `MosesDetokenizer` (detokenizer.perl) does for the language,
        without unescaping (`tokenize` escapes nothing): punctuation, clitics and elisions joined, quotes paired left
        to right. docs/data.md names where the two differ.

        Args:
            tokens: tf.RaggedTensor of tf.string `[batch, None]`.

        Returns:
            tf.string `[batch]`: sentences. Only whitespace differs from the text that was tokenized.
        """
        text = tf.strings.reduce_join(tokens, axis=-1, separator=" ")  # [batch]
        return _apply(self.rules.detokenize_rules(), text)

    def _split_final_periods(self, words):
        """tokenizer.perl's nonbreaking-prefix loop: "word." -> "word ." unless the period belongs to it.

        Args:
            words: tf.RaggedTensor of tf.string `[batch, None]`, split on single spaces (may hold "").

        Returns:
            tf.string `[batch]`: the words joined by spaces, final periods split off.
        """
        word = words.flat_values  # [total_words]
        prefix = tf.strings.regex_replace(word, r"\.$", "")
        next_word_starts = tf.concat([word[1:], [""]], axis=0)  # [total_words], word i+1
        last_in_row = tf.scatter_nd(
            tf.expand_dims(tf.boolean_mask(words.row_limits() - 1, words.row_lengths() > 0), 1),
            tf.ones_like(tf.boolean_mask(words.row_lengths(), words.row_lengths() > 0), tf.bool),
            tf.shape(word, out_type=tf.int64),
        )  # [total_words], true for the last word of each sentence
        next_is_lower = tf.logical_and(
            tf.strings.regex_full_match(next_word_starts, "[" + _LOWER + "].*"),
            tf.logical_not(last_in_row),
        )
        next_is_number = tf.logical_and(
            tf.strings.regex_full_match(next_word_starts, "[0-9].*"), tf.logical_not(last_in_row)
        )
        keeps_period = tf.reduce_any(
            tf.stack(
                [
                    tf.logical_not(tf.strings.regex_full_match(word, r".+\.")),
                    tf.strings.regex_full_match(word, r"\.+"),
                    tf.logical_and(
                        tf.strings.regex_full_match(prefix, r".*\..*"),
                        tf.strings.regex_full_match(prefix, ".*[" + _ALPHA + "].*"),
                    ),
                    tf.strings.regex_full_match(prefix, self._nonbreaking),
                    next_is_lower,
                    tf.logical_and(tf.strings.regex_full_match(prefix, self._numeric_only), next_is_number),
                ]
            ),
            axis=0,
        )  # [total_words]
        split_word = tf.where(keeps_period, word, tf.strings.join([prefix, " ."]))
        return tf.strings.reduce_join(words.with_flat_values(split_word), axis=-1, separator=" ")
