"""The rare-word probe of `bench.subwords` and `bench.verbatim`: caption-like sentences, each with an invented
name and a number, made the same way for the same seed."""

import re

import numpy as np

PROBE_SIZE = 100
_TEMPLATES = (
    "A man named {name} is riding a bicycle in {number}.",
    "{name} is playing the guitar for {number} people.",
    "A woman called {name} holds a sign that says {number}.",
    "The dog of {name} jumps over {number} hurdles.",
    "{name} and a friend stand in front of house number {number}.",
)
_SYLLABLES = ("brak", "ken", "feld", "zol", "var", "quim", "tor", "ulv", "dre", "mosk", "yth", "pell", "gar", "wix")


def probe_sentences(count=PROBE_SIZE, seed=1961):
    """`count` (sentence, name, number): invented names of two or three syllables, capitalised, and whole
    numbers of 2 to 4 digits, in caption-like templates; the same for the same seed."""
    rng = np.random.default_rng(seed)
    probes = []
    for index in range(count):
        name = "".join(rng.choice(_SYLLABLES, size=int(rng.integers(2, 4)))).capitalize()
        number = str(int(rng.integers(10, 10_000)))
        probes.append((_TEMPLATES[index % len(_TEMPLATES)].format(name=name, number=number), name, number))
    return probes


def found_verbatim(word, text):
    """Whether `word` is in `text` as a whole word ("Dreyth" is not in "Dreythme", "193" not in "1934")."""
    return re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text) is not None
