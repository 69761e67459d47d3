"""Moses' nonbreaking prefixes of a language, read from the installed sacremoses package.

sacremoses bundles mosesdecoder's `scripts/share/nonbreaking_prefixes/nonbreaking_prefix.XX` files (LGPL-2.1)
for about 40 languages and, like tokenizer.perl, takes the English list for a language without one. A word in
the first set keeps a following period attached ("Mr." stays one token); a word in the second keeps it only
before a number ("No. 5"). The tokenizer (`MosesTokenizer`) and the sentence splitter (`SentenceSplitter`)
both ask here, so they agree. A language's prefixes are its `languages.base_language`'s ("ekk", Standard Estonian,
has Estonian's: `sacremoses_answers.asked_as`).
"""

import functools

from data_pipeline import sacremoses_answers


@functools.lru_cache(maxsize=None)
def prefixes(language):
    """(nonbreaking, numeric_only): two frozensets of words (without their period) for `language`
    (`sacremoses_answers`: a word of a "#NUMERIC_ONLY#" line is in the second only)."""
    found = sacremoses_answers.answers(language)
    return frozenset(found["nonbreaking"]), frozenset(found["numeric_only"])


def has_own_list(language):
    """Whether sacremoses has a prefix file for `language`'s base language (else `prefixes` are the English ones)."""
    from sacremoses.corpus import NonbreakingPrefixes

    return sacremoses_answers.asked_as(language) in NonbreakingPrefixes().available_langs.values()
