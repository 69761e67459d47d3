"""What the commands know of a language: its code, checked once, and what follows from it.

A language is data, not code: an ISO 639-1 code ("de"), or the ISO 639-3 code of a language that has no
two-letter one ("yue"), checked against pycountry's copy of the ISO 639-3 table. What a language changes is
asked of the library that keeps it: Moses' word rules of sacremoses (`moses_tokenizer.MosesRules`), the BLEU
tokenizer of sacreBLEU (`bleu_tokenizer`; its character tokenizer for a script without spaces it has none for).
The one fact no library holds is `WITHOUT_SPACES`. A variety that ISO 639-3 names after a language with a
two-letter code ("Chinese, Mandarin": cmn) follows that language's rules (`base_language`), and agrees with it
where two codes must (`same_language`).

What pycountry says of a code is asked once per pycountry version and kept in the user's cache (`user_cache`):
reading its table builds an object for each of its 7,923 languages, about 0.14 s of every command that reads a
model's codecs.
"""

import functools
import re
import unicodedata

from data_pipeline.user_cache import answer_file, kept_answer

# Languages written without spaces between words, whose Moses "words" would be whole clauses; Korean puts
# spaces between eojeol (a word with its particles), too many distinct forms for a word vocabulary. Their
# text is cut by SentencePiece (`build-data --subwords=sentencepiece`) and scored with sacreBLEU's own
# tokenizer for them, or its character tokenizer where it has none (`bleu_tokenizer`). Their varieties follow
# them (`base_language`: yue, cmn, wuu, nan, hak ... as zh).
WITHOUT_SPACES = frozenset({"zh", "ja", "ko", "th", "lo", "km", "my", "bo", "dz"})
EXAMPLES = "en, de, fr, cs, zh, ja"
FACTS = {"name", "written_as", "variety_of"}  # what is kept of a code (`_asked`)


@functools.lru_cache(maxsize=None)
def _facts(code):
    """What pycountry's table says of `code` (`_asked`), kept in the user's cache where `code` is two or three
    lower-case letters (a file name of its own); other values name no language and are asked without a file."""
    if not isinstance(code, str) or not re.fullmatch("[a-z]{2,3}", code):
        return _asked(code)
    return kept_answer(answer_file("pycountry", __file__, code), lambda: _asked(code),
                       lambda found: isinstance(found, dict) and set(found) == FACTS)


def _asked(code):
    """{"name": the English name of the language `code` is the code people write for, else None; "written_as": the
    code people write for the language a three-letter `code` names otherwise, its ISO 639-1 code ("deu" -> "de",
    and for an ISO 639-2/B code that of its language: "ger" -> "de"), else None; "variety_of": the ISO 639-1
    code of the language whose variety ISO 639-3's inverted name makes a three-letter `code` ("Chinese, Mandarin"
    for cmn -> "zh", "Arabic, Egyptian" for arz -> "ar"), else None}, asked of pycountry."""
    if not isinstance(code, str) or len(code) not in (2, 3):
        return dict(name=None, written_as=None, variety_of=None)
    import pycountry

    three_letter = pycountry.languages.get(alpha_3=code) if len(code) == 3 else None
    bibliographic = pycountry.languages.get(bibliographic=code) if len(code) == 3 and not three_letter else None
    two_letter = getattr(three_letter, "alpha_2", None)
    written_as = two_letter or getattr(bibliographic, "alpha_2", getattr(bibliographic, "alpha_3", None))
    entry = None
    if code.isascii() and code.islower() and two_letter is None:  # "deu" is written "de": it names no language
        entry = three_letter if len(code) == 3 else pycountry.languages.get(alpha_2=code)
    head, comma, _ = getattr(entry, "inverted_name", "").partition(", ")
    variety_of = None
    if comma:
        named = pycountry.languages.get(name=head) or pycountry.languages.get(name=f"{head} (macrolanguage)")
        variety_of = getattr(named, "alpha_2", None)
    return dict(name=entry.name.removesuffix(" (macrolanguage)") if entry is not None else None, written_as=written_as,
                variety_of=variety_of)


def why_not(code):
    """None when `code` names a language, else the reason in words (for a flag's validator), with the code to write
    where one is plain (`suggested_code`)."""
    if _facts(code)["name"] is not None:
        return None
    suggestion = suggested_code(code)
    hint = f" (write {suggestion!r})" if suggestion is not None else ""
    return (f"not a language code{hint}: give an ISO 639-1 code, or ISO 639-3 for a language without one, "
            f"e.g. {EXAMPLES}")


def suggested_code(value):
    """The code to write for `value`, a value that names no language, where one is plain, else None: a tag's first
    subtag, lower-cased ("zh-CN", "zh_Hans", "pt-BR", "sr-Latn", "DE" -> "zh", "pt", "sr", "de"), or the code
    written for a three-letter one ("deu" -> "de", and ISO 639-2/B "ger", "fre", "cze", "chi" -> "de", "fr", "cs",
    "zh"). A hint for the one error line, never taken in its place: a region or script is not recorded anywhere.
    A subtag is asked of pycountry without the user's cache: a file is kept for the values commands are given."""
    if not isinstance(value, str):
        return None
    subtag = re.split("[-_]", value.strip(), maxsplit=1)[0].lower()
    facts = _facts(value) if subtag == value else _asked(subtag)
    return subtag if facts["name"] is not None else facts["written_as"]


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
    return _facts(check(code))["name"]


def name_or_code(code):
    """`name(code)` where `code` names a language, else the value as written (an older folder's field, None):
    for messages and the page, which show what a folder holds without refusing it."""
    return name(code) if why_not(code) is None else str(code)


def base_language(code):
    """The ISO 639-1 code whose rules (`WITHOUT_SPACES`, sacreBLEU's tokenizer) `code` follows: `code` itself, or
    for a variety that ISO 639-3 names after a language with a two-letter code that language's ("cmn", "yue",
    "wuu", "nan", "hak" and every other "Chinese, ..." -> "zh"), so that no variety needs a list of its own."""
    return _facts(check(code))["variety_of"] or code


def same_language(first, second):
    """Whether codes `first` and `second` name one language where two codes must agree (a corpus and a flag, a
    copied vocabulary and a corpus, two models): equal, or of one `base_language` ("cmn" and "zh"), as a variety
    follows its language's rules everywhere else. A value that names no language (None, an older folder's field)
    agrees only with itself."""
    if first == second:
        return True
    return why_not(first) is None and why_not(second) is None and base_language(first) == base_language(second)


def same_pair(first, second):
    """Whether the (source, target) codes `first` and `second` are one language pair (`same_language` per side)."""
    return len(first) == len(second) and all(map(same_language, first, second))


def writes_words_apart(code):
    """Whether Moses words suit `code`: its words are written with spaces between them."""
    return base_language(code) not in WITHOUT_SPACES


def counting_unit(code):
    """The unit `text_codec.counting_tokens` counts text of `code` in, as reports name it: "Moses tokens", or
    "characters" for a language written without spaces."""
    return "Moses tokens" if writes_words_apart(code) else "characters"


def join_sentences(sentences, code=None):
    """Consecutive `sentences` (str; empty ones left out) of language `code` as one text: each after the one before
    with a space, but with nothing after a sentence that ends in a wide character (Unicode East Asian Width W or F:
    a Han character, kana, a full-width `。？！」`) where `code` is written without spaces (`writes_words_apart`):
    Chinese and Japanese run their sentences on as their words, while Korean and Thai, which leave a space
    between sentences, end theirs in a narrow "." or a Thai letter. `code` None: a space between every two."""
    text = ""
    for sentence in sentences:
        if not sentence:
            continue
        glued = not text or (code is not None and not writes_words_apart(code)
                             and unicodedata.east_asian_width(text[-1]) in ("W", "F"))
        text += ("" if glued else " ") + sentence
    return text


def check_words_apart(code, field="language"):
    """`code` when word-level (Moses) text suits it, else ValueError in one line saying to use SentencePiece."""
    if not writes_words_apart(check(code, field)):
        raise ValueError(f"{field}={code!r}: {name(code)} is written without spaces between words, so it has no "
                         "Moses words: build its data with --subwords=sentencepiece")
    return code


def bleu_tokenizer(code):
    """The tokenizer sacreBLEU's BLEU uses for target language `code`: its own choice for `base_language(code)`
    ("zh" for every Chinese variety, "ja-mecab", "ko-mecab"); else "char" (sacreBLEU's built-in character
    tokenizer) for a language written without spaces (`WITHOUT_SPACES`: Thai, Lao, Khmer, Burmese, Tibetan,
    Dzongkha), whose sentence 13a would take for one word, so that BLEU were an exact sentence match; 13a for the
    rest. (sacreBLEU's flores101/flores200 would segment them too, but download a SentencePiece model.)"""
    import sacrebleu

    own = sacrebleu.BLEU._TOKENIZER_MAP.get(base_language(code))
    return own or (sacrebleu.BLEU.TOKENIZER_DEFAULT if writes_words_apart(code) else "char")
