"""The constraints bench's rule for drawing constraints from a reference (`bench.reference_phrases`):
seeded, 1 or 2 consecutive all-letter tokens of the vocabulary, not overlapping, of different text, nested."""

import numpy as np

from bench.reference_phrases import reference_phrases

REFERENCE = "Un homme avec un chapeau orange regardant quelque chose , l' air ravi .".split()
VOCABULARY = set(REFERENCE) - {"orange"}


def test_phrases_are_short_runs_of_known_words_drawn_by_the_seed():
    for seed in range(50):
        phrases = reference_phrases(REFERENCE, VOCABULARY, 3, np.random.default_rng([2018, seed]))
        assert phrases == reference_phrases(REFERENCE, VOCABULARY, 3, np.random.default_rng([2018, seed]))
        assert len(phrases) == 3 and len(set(phrases)) == 3
        spans = []
        for phrase in phrases:
            words = phrase.split()
            assert 1 <= len(words) <= 2 and all(word.isalpha() and word in VOCABULARY for word in words)
            start = next(i for i in range(len(REFERENCE)) if REFERENCE[i : i + len(words)] == words)
            spans.append(set(range(start, start + len(words))))
        assert all(not (first & second) for i, first in enumerate(spans) for second in spans[i + 1 :])
        fewer = reference_phrases(REFERENCE, VOCABULARY, 2, np.random.default_rng([2018, seed]))
        assert fewer == phrases[:2]  # the settings of 1, 2, 3 constraints are nested


def test_a_short_reference_gives_what_it_has():
    assert reference_phrases(["Chien", "."], {"Chien", "."}, 3, np.random.default_rng(0)) == ["Chien"]
    assert reference_phrases([".", "42"], {".", "42"}, 3, np.random.default_rng(0)) == []
