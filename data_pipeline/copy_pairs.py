"""Training pairs that teach a subword model to copy what it has never seen: names and numbers made up.

A model trained on Multi30k or Tatoeba copies the names and numbers it saw often ("Tom", "30") and rewrites
the others piece by piece into words it knows ("Dreyth" -> "Volo", "193" -> "39": docs/results.md). The
corpus has few pairs that copy a word (2.7% of Multi30k's, 10% of Tatoeba's, most of them "Tom"), always
the same words. A copy pair is such a pair with each copied word replaced, on both sides alike, by a word
made up of random letters (or digits, for a number), so that the only way to translate it is to copy it
piece by piece, as placeholders and copy-noise do in production NMT (Koehn & Knowles 2017 on rare words;
Currey et al. 2017 on copied data). The made-up words follow no fixed syllables, so a probe of invented
names (`bench.rare_words`) is not learned by heart.
"""

import re

import numpy as np

# A whole word: digits, or letters of any script (inner apostrophes and hyphens end it).
_WORD = re.compile(r"(?<!\w)(?:\d+|[^\W\d_][^\W_]*)(?!\w)")
_VOWELS = "aeiouy"
_CONSONANTS = "bcdfghjklmnpqrstvwxz"


def copied_words(source, target):
    """The words `source` and `target` share that a translation copies: numbers, and capitalised words of
    two letters or more ("Tom", "YMCA", "1961"; not "A"), each once, in the source's order."""
    target_words = set(_WORD.findall(target))
    words = []
    for word in _WORD.findall(source):
        copied = word[0].isdigit() or (word[0].isupper() and len(word) > 1)
        if copied and word in target_words and word not in words:
            words.append(word)
    return words


def made_up_word(word, rng):
    """A random word of the same kind as `word`: as many random digits for a number (no leading zero unless
    it had one), else 3 to 10 letters alternating consonants and vowels from a random start, in `word`'s case
    (capitalised, or all capitals for an acronym)."""
    if word[0].isdigit():
        digits = rng.integers(0, 10, size=len(word))
        if word[0] != "0" and len(word) > 1:
            digits[0] = rng.integers(1, 10)
        return "".join(str(digit) for digit in digits)
    length = int(rng.integers(3, 11)) if len(word) > 2 else len(word)
    vowel = bool(rng.integers(0, 2))
    letters = []
    for _ in range(length):
        alphabet = _VOWELS if vowel else _CONSONANTS
        letters.append(alphabet[int(rng.integers(0, len(alphabet)))])
        vowel = not vowel if rng.random() < 0.8 else vowel  # mostly alternating, sometimes a cluster
    made_up = "".join(letters)
    return made_up.upper() if word.isupper() else made_up.capitalize()


def copy_pair(source, target, rng):
    """`(source, target)` with each of its `copied_words` replaced by a `made_up_word`, the same on both
    sides; None when it copies no word."""
    words = copied_words(source, target)
    if not words:
        return None
    replacements = {word: made_up_word(word, rng) for word in words}
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(word) for word in words) + r")(?!\w)")
    return tuple(pattern.sub(lambda match: replacements[match.group()], side) for side in (source, target))


def copy_pairs(pairs, candidates, count, seed):
    """About `count` copy pairs (`copy_pair`) from the (source, target) `pairs`, of which `candidates` copy a
    word: each candidate gives `count // candidates` pairs, and one more with probability `(count %
    candidates) / candidates`, so that a corpus of millions is read once, in order, and nothing is held.
    Seeded by `seed`: the same pairs give the same copy pairs.
    """
    if count <= 0 or candidates <= 0:
        return
    rng = np.random.default_rng(seed)
    each, extra = divmod(count, candidates)
    for source, target in pairs:
        if not copied_words(source, target):
            continue
        for _ in range(each + int(rng.random() < extra / candidates)):
            yield copy_pair(source, target, rng)
