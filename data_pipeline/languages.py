"""What the commands know of a language: its code, checked once, and what follows from it.

A language is data, not code: an ISO 639-1 code ("de"), or the ISO 639-3 code of a language that has no
two-letter one ("yue"), checked against pycountry's copy of the ISO 639-3 table. What a language changes is
asked of the library that keeps it: Moses' word rules of sacremoses (`moses_tokenizer.MosesRules`), the BLEU
tokenizer of sacreBLEU (`bleu_tokenizer`). The one fact no library holds is `WITHOUT_SPACES`.
"""

import functools

import pycountry

# Languages written without spaces between words, whose Moses "words" would be whole clauses; Korean puts
# spaces between eojeol (a word with its particles), too many distinct forms for a word vocabulary. Their
# text is cut by SentencePiece (`build-data --subwords=sentencepiece`) and scored with sacreBLEU's own
# tokenizer for them.
WITHOUT_SPACES = frozenset({"zh", "ja", "ko", "th", "lo", "km", "my", "bo", "dz", "yue", "cmn", "wuu", "nan", "hak"})
EXAMPLES = "en, de, fr, cs, zh, ja"


@functools.lru_cache(maxsize=None)
def _table_entry(code):
    """pycountry's language of `code` when it is the code people write for it, else None."""
    if not isinstance(code, str) or not code.isascii() or not code.islower():
        return None
    if len(code) == 2:
        return pycountry.languages.get(alpha_2=code)
    entry = pycountry.languages.get(alpha_3=code) if len(code) == 3 else None
    return entry if entry is not None and not hasattr(entry, "alpha_2") else None  # "deu" is written "de"


def why_not(code):
    """None when `code` names a language, else the reason in words (for a flag's validator)."""
    if _table_entry(code) is not None:
        return None
    two_letter = pycountry.languages.get(alpha_3=code) if isinstance(code, str) and len(code) == 3 else None
    hint = f" (write {two_letter.alpha_2!r})" if two_letter is not None and hasattr(two_letter, "alpha_2") else ""
    return (f"not a language code{hint}: give an ISO 639-1 code, or ISO 639-3 for a language without one, "
            f"e.g. {EXAMPLES}")


def check(code, field="language"):
    """`code` when it names a language, else ValueError in one line naming `field` and the value.

    Args:
        code: an ISO 639-1 code, or ISO 639-3 for a language without one (lower case).
        field: what carried the value, named in the error (a flag, a metadata field).
    """
    reason = why_not(code)
    if reason is not None:
        raise ValueError(f"{field}={code!r} is {reason}")
    return code


def name(code):
    """The English name of the language `code` ("de" -> "German"), for messages and the page."""
    return _table_entry(check(code)).name.removesuffix(" (macrolanguage)")


def name_or_code(code):
    """`name(code)` where `code` names a language, else the value as written (an older folder's field, None):
    for messages and the page, which show what a folder holds without refusing it."""
    return name(code) if why_not(code) is None else str(code)


def writes_words_apart(code):
    """Whether Moses words suit `code`: its words are written with spaces between them."""
    return check(code) not in WITHOUT_SPACES


def check_words_apart(code, field="language"):
    """`code` when word-level (Moses) text suits it, else ValueError in one line saying to use SentencePiece."""
    if not writes_words_apart(check(code, field)):
        raise ValueError(f"{field}={code!r}: {name(code)} is written without spaces between words, so it has no "
                         "Moses words: build its data with --subwords=sentencepiece")
    return code


def bleu_tokenizer(code):
    """The tokenizer sacreBLEU's BLEU uses for target language `code`: its own choice ("zh", "ja-mecab",
    "ko-mecab"), 13a for the rest."""
    import sacrebleu

    return sacrebleu.BLEU._TOKENIZER_MAP.get(check(code), sacrebleu.BLEU.TOKENIZER_DEFAULT)
