"""The words of a source sentence a translation should keep as they are: numbers and names.

`rnnsearch translate --verbatim` makes each a constraint of its line (`Translator.translate_constrained`), so
that a subword model copies an invented name or a number it would otherwise rewrite ("Dreyth" -> "Volo",
"193" -> "39": docs/results.md, words or subwords). A word-level model cannot output a word outside its
vocabulary: such a constraint is made of `<unk>` only and skipped; `--replace_unk` copies it instead.
"""

import re

import tensorflow as tf

from data_pipeline import constants

# A number: digits, possibly grouped or with a decimal part ("1961", "3,500", "2.5", "10:30").
_NUMBER = r"\d+(?:[.,:]\d+)*"
# A name: a capitalised word (letters of any script, inner apostrophes and hyphens), not a lone letter ("I").
_NAME = r"[^\W\d_][^\W_]*(?:['’-][^\W\d_]+)*"
_WORD = re.compile(rf"(?<![\w.,:]){_NUMBER}(?![\w])|(?<![\w'’-]){_NAME}")
_LETTERS = re.compile(r"[^\W\d_]+")
# A capitalised first word is a name when its lower-case form is cut into at least this many subword pieces:
# BPE and unigram models keep a word of the training text whole, or nearly, the more often it occurs there, so
# a word in three pieces or more is rare ("The", "Two", "Tom" are one piece; "Kenythwix" five).
RARE_WORD_PIECES = 3


def verbatim_terms(sentence, first_is_name=False):
    """The numbers of `sentence`, and its capitalised words, each once, in order.

    The first word is left out unless `first_is_name`: it is capitalised because it starts the sentence
    (`verbatim_terms_of` decides by the model's vocabulary). A capitalised word that is a common word in
    mid-sentence (a title, "Street") is kept too: a rule of case only; pass a glossary instead where that
    matters.

    Example:
    >>> verbatim_terms("The Brakkenfeld family visited Tromsø in 1961.")
    ['Brakkenfeld', 'Tromsø', '1961']
    """
    terms = []
    for index, match in enumerate(_WORD.finditer(sentence)):
        word = match.group()
        is_number = word[0].isdigit()
        is_name = not is_number and (index > 0 or first_is_name) and word[0].isupper() and len(word) > 1
        if (is_number or is_name) and word not in terms:
            terms.append(word)
    return terms


def verbatim_terms_of(sentences, source_codec=None):
    """`verbatim_terms` of each sentence; with the model's source `TextCodec`, a capitalised first word is a
    name too when the model finds it rare (`rare_words`): "Kenythwix is playing" keeps "Kenythwix", "Two
    dogs" keeps nothing."""
    firsts = [_first_letters(sentence) for sentence in sentences]
    rare = rare_words(source_codec, firsts) if source_codec is not None else [False] * len(sentences)
    return [verbatim_terms(sentence, first_is_name) for sentence, first_is_name in zip(sentences, rare)]


def rare_words(codec, words):
    """Whether each word (str; "" is never rare) is rare for a model with source `codec`, by its lower-case
    form: outside a word-level vocabulary, or cut into at least `RARE_WORD_PIECES` subword pieces."""
    if not words:
        return []
    lowered = tf.constant([word.lower() for word in words])  # [words]
    if codec.has_unknown:
        ids = codec.encode(lowered)  # [words, None]
        rare = tf.reduce_any(tf.equal(ids, constants.UNK_ID), axis=1)
    else:
        rare = codec.tokenize(lowered).row_lengths() >= RARE_WORD_PIECES
    return [bool(flag) and bool(word) for flag, word in zip(rare.numpy(), words)]


def _first_letters(sentence):
    """The letters of a sentence's first word (`verbatim_terms`' first: punctuation before it does not count)
    up to an apostrophe or hyphen ("I'm" -> "I", "Dreyth's" -> "Dreyth"), when they are capitalised and two
    or more; else ""."""
    match = _WORD.search(sentence)
    if match is None or match.group()[0].isdigit():
        return ""
    letters = _LETTERS.match(match.group()).group()
    return letters if letters[0].isupper() and len(letters) > 1 else ""
