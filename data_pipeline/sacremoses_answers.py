"""What the installed sacremoses says of a language, asked once per sacremoses version and kept in the user's cache
(`user_cache`): importing sacremoses compiles its regular expressions, about half a second of every command that
tokenizes words or splits sentences, which then reads a small JSON file instead.

A language's answers are its `languages.base_language`'s: sacremoses knows Moses' two-letter codes ("et"), so an
ISO 639-3 code of a variety ("ekk", Standard Estonian) is asked as the language it follows, the same language
sacreBLEU scores it as (`languages.bleu_tokenizer`), not as English, sacremoses' fallback.

The answers (`answers(language)`), as JSON values:
- `nonbreaking`, `numeric_only`: its nonbreaking prefixes (`nonbreaking_prefixes`), the words without their period.
- `apostrophe_probe`: its tokens of `APOSTROPHE_PROBE` (which of tokenizer.perl's apostrophe rules it applies).
- one boolean per `DETOKENIZER_PROBES` case: whether its detokenizer joins those tokens so.
- `cjk_ranges`: the [first, last] code points of the characters it counts as CJK (`sacremoses.util.CJKChars`), whose
  words its detokenizer joins, where it joins the words of `CJK_PROBE` for the language (none where it does not).
"""

import functools

from data_pipeline import languages
from data_pipeline.user_cache import answer_file, kept_answer

APOSTROPHE_PROBE = "l'a it's"
# Tokens for sacremoses' detokenizer and the text that means the case holds for the language.
DETOKENIZER_PROBES = {
    "english_contractions": (["it", "'s"], "it's"),
    "elisions": (["l'", "homme"], "l'homme"),
    "space_before_high_punctuation": (["Quoi", "?"], "Quoi ?"),
    "possessive_apostrophes": (["the", "Jones", "'", "house"], "the Jones' house"),
    "low_high_quotes": (["“", "a", "„", "b"], "“ a „b"),
}
CJK_PROBE = (["東京", "大学"], "東京大学")
FIELDS = ("nonbreaking", "numeric_only", "apostrophe_probe", *DETOKENIZER_PROBES, "cjk_ranges")


@functools.lru_cache(maxsize=None)
def answers(language):
    """The answers of the module doc for `language` (a dict of `FIELDS`), those of its base language (`asked_as`):
    read from `cache_file`, else asked of sacremoses and written there (a cache that cannot be written is asked
    again next time)."""
    asked = asked_as(language)
    return kept_answer(cache_file(asked), lambda: _asked(asked),
                       lambda found: isinstance(found, dict) and set(found) == set(FIELDS))


def asked_as(language):
    """The code sacremoses is asked about for `language` (checked): `languages.base_language` ("ekk" -> "et")."""
    return languages.base_language(language)


def cache_file(language):
    """`cache_directory("sacremoses", VERSION, QUESTIONS)/LANGUAGE.json`: VERSION sacremoses', QUESTIONS a digest of
    this module (what is asked): another sacremoses or other questions, another file."""
    return answer_file("sacremoses", __file__, language)


def _asked(language):
    """The answers, asked of sacremoses. Lines of its prefix files marked "#NUMERIC_ONLY#" hold a space, so
    sacremoses never finds them among the nonbreaking words; they count only through its numeric-only list, and
    are left out of the first set here the same way."""
    import sacremoses
    from sacremoses.util import CJKChars

    tokenizer = sacremoses.MosesTokenizer(lang=language)
    detokenizer = sacremoses.MosesDetokenizer(lang=language)
    joins_cjk = detokenizer.detokenize(CJK_PROBE[0]) == CJK_PROBE[1]
    return dict(
        nonbreaking=sorted(word for word in tokenizer.NONBREAKING_PREFIXES if " " not in word),
        numeric_only=sorted(tokenizer.NUMERIC_ONLY_PREFIXES),
        apostrophe_probe=tokenizer.tokenize(APOSTROPHE_PROBE, escape=False),
        **{name: detokenizer.detokenize(tokens) == joined for name, (tokens, joined) in DETOKENIZER_PROBES.items()},
        cjk_ranges=[list(bounds) for bounds in CJKChars().ranges] if joins_cjk else [],
    )
