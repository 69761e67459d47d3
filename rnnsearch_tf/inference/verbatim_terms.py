"""The words of a source sentence a translation should keep as they are: numbers and names.

`rnnsearch translate --verbatim` makes each a constraint of its line (`Translator.translate_constrained`), so
that a subword model copies an invented name or a number it would otherwise rewrite ("Dreyth" -> "Volo",
"193" -> "39": docs/results.md, words or subwords). A word-level model cannot output a word outside its
vocabulary: translate searches such a term as `<unk>` and writes it back, as a glossary's term of itself.

A capitalised word is a name by its form alone; with the model's source codec (`verbatim_terms_of`), only when
the model finds it rare (`rare_words`: outside a word-level vocabulary, or cut into 3 subword pieces or more) as
written and in lower case. The first word is capitalised by its place, and a language may capitalise common
words anywhere (German every noun: "Hund", "Straße"); a word the model knows in either form it translates, so no
language needs a rule of its own: "Ein Mann geht mit dem Hund nach Trondheim." keeps "Trondheim". The one test
serves every word and needs no threshold, where a switch by language (say, by the share of capitalised entries
in the vocabulary) would need one. A name the model knows well ("Paris" in English text) is not forced either:
the model translates it as it learned to.
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
# A capitalised word is a name when its lower-case and its written form are each cut into at least this many pieces:
# BPE and unigram models keep a word of the training text whole, or nearly, the more often it occurs there, so
# a word in three pieces or more is rare ("The", "Two", "Tom" are one piece; "Kenythwix" five).
RARE_WORD_PIECES = 3


def verbatim_terms(sentence, first_is_name=False, known_words=()):
    """The numbers of `sentence`, and its capitalised words, each once, in order.

    The first word is left out unless `first_is_name`: it is capitalised because it starts the sentence
    (`verbatim_terms_of` decides by the model's vocabulary). A capitalised word in `known_words` is left out
    too: a word the model knows (`verbatim_terms_of`); without them a common word capitalised in mid-sentence
    (a title, "Street", a German noun) is kept, a rule of case only.

    Example:
    >>> verbatim_terms("The Brakkenfeld family visited Tromsø in 1961.")
    ['Brakkenfeld', 'Tromsø', '1961']
    """
    terms = []
    for index, match in enumerate(_WORD.finditer(sentence)):
        word = match.group()
        is_number = word[0].isdigit()
        is_name = (index > 0 or first_is_name) and _is_capitalised(word) and word not in known_words
        if (is_number or is_name) and word not in terms:
            terms.append(word)
    return terms


def verbatim_terms_of(sentences, source_codec=None):
    """`verbatim_terms` of each sentence; with the model's source `TextCodec`, a capitalised word is a name only
    when the model finds it rare (`rare_words`), the first word by its letters (`_first_letters`): "Kenythwix
    is playing" keeps "Kenythwix", "Two dogs" nothing, "Ein Mann mit dem Hund" nothing."""
    if source_codec is None:
        return [verbatim_terms(sentence) for sentence in sentences]
    firsts = [_first_letters(sentence) for sentence in sentences]
    inner = sorted({match.group() for sentence in sentences for index, match in enumerate(_WORD.finditer(sentence))
                    if index > 0 and _is_capitalised(match.group())})
    rare = rare_words(source_codec, firsts + inner)
    known = {word for word, is_rare in zip(inner, rare[len(firsts):]) if not is_rare}
    return [verbatim_terms(sentence, first_is_name, known) for sentence, first_is_name in zip(sentences, rare)]


def rare_words(codec, words):
    """Whether each word (str; "" is never rare) is rare for a model with source `codec`: outside a word-level
    vocabulary, or cut into at least `RARE_WORD_PIECES` subword pieces, both as written and in lower case (a
    word is capitalised by its place in the sentence, or by its language: a German noun)."""
    if not words:
        return []
    forms = tf.constant([word.lower() for word in words] + list(words))  # [2 * words]: lower case, as written
    if codec.has_unknown:
        ids = codec.encode(forms)  # [2 * words, None]
        rare = tf.reduce_any(tf.equal(ids, constants.UNK_ID), axis=1)
    else:
        rare = codec.tokenize(forms).row_lengths() >= RARE_WORD_PIECES
    rare = tf.reduce_all(tf.reshape(rare, [2, len(words)]), axis=0)  # [words]: rare in both forms
    return [bool(flag) and bool(word) for flag, word in zip(rare.numpy(), words)]


def _is_capitalised(word):
    """Whether a `_WORD` match is a capitalised word of two characters or more (not a number, not "I")."""
    return word[0].isupper() and len(word) > 1


def _first_letters(sentence):
    """The letters of a sentence's first word (`verbatim_terms`' first: punctuation before it does not count)
    up to an apostrophe or hyphen ("I'm" -> "I", "Dreyth's" -> "Dreyth"), when they are capitalised and two
    or more; else ""."""
    match = _WORD.search(sentence)
    if match is None or match.group()[0].isdigit():
        return ""
    letters = _LETTERS.match(match.group()).group()
    return letters if letters[0].isupper() and len(letters) > 1 else ""
