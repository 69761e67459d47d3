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

# detokenizer.perl's cases, as regular expressions over the space-joined tokens: those of every language,
# then those sacremoses' detokenizer applies to a language (`MosesRules.detokenize_rules`).
_QUOTES = (r'" ([^"]*?) "', r'"\1"')
_SLASHES = (r"([" + _ALNUM + r"]) / ([" + _ALNUM + r"])", r"\1/\2")
_ATTACHED_LEFT = r".,)\]}"  # punctuation that joins the word before it in every language
_HIGH_PUNCTUATION = "!?;:%"  # ... and these, unless the language writes a space before them (French)
_ENGLISH_CONTRACTIONS = (
    (r"([" + _ALNUM + r"]) (n't|'[" + _ALPHA + r"]+)( |$)", r"\1\2\3"),
    (r"(s) ' ", r"\1' "),
    (r"([" + _NUMBER + r"]) ('s)( |$)", r"\1\2\3"),
)
_ELISIONS = ((r"([" + _ALPHA + r"]') ", r"\1"),)


@dataclasses.dataclass(frozen=True)
class MosesRules:
    """Moses' rules for one language, as sacremoses applies them: its nonbreaking prefixes, its way with
    apostrophes, and which of the detokenizer's language cases hold for it.

    Built by `MosesRules.of(language)`, which asks the installed sacremoses (its prefix files and what its
    tokenizer and detokenizer do to a few probes: `sacremoses_answers`), so a language's rules are never written in
    this code.

    Args:
        language: the language code.
        nonbreaking: words that keep a following period.
        numeric_only: words that keep it before a number.
        apostrophe: tokenizer.perl's apostrophe rules for the language.
        english_contractions: "it 's" -> "it's" on detokenization.
        elisions: "l' homme" -> "l'homme" on detokenization.
        space_before_high_punctuation: "Quoi ?" keeps its space (French typography).
    """

    language: str
    nonbreaking: frozenset
    numeric_only: frozenset
    apostrophe: tuple
    english_contractions: bool
    elisions: bool
    space_before_high_punctuation: bool

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
                   **{name: found[name] for name in DETOKENIZER_PROBES})

    def detokenize_rules(self):
        """The detokenizer's rewrites for this language, in order."""
        attached = _ATTACHED_LEFT + ("" if self.space_before_high_punctuation else _HIGH_PUNCTUATION + "¢»")
        opening = "(\\[{$£€" + ("" if self.space_before_high_punctuation else "¿¡«")
        rules = (_QUOTES, (r" ([" + attached + r"]|\.\.+)", r"\1"), (r"([" + opening + r"]) ", r"\1"), _SLASHES)
        return (rules + (_ENGLISH_CONTRACTIONS if self.english_contractions else ())
                + (_ELISIONS if self.elisions else ()))


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
    "do n't"; elisions "l' homme", "qu' il" in French and Italian; a token of its own elsewhere); split a word-final period unless the word is a nonbreaking prefix ("Mr.",
    "M."), contains another period and a letter ("U.S."), or the next word starts in lower case.

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
        """Joins tokens back into text, undoing the spacing `tokenize` added around punctuation.

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
