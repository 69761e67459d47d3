"""The constraints `bench.constraints` draws from a reference, apart from its flags (so that tests import it
beside any command's), as Post & Vilar (2018) sample reference phrases."""


def reference_phrases(tokens, vocabulary, count, rng):
    """Up to `count` phrases (str, tokens joined by spaces) of 1 or 2 consecutive `tokens`, each token all
    letters and in `vocabulary`, not overlapping and of different text, drawn with `rng`."""
    usable = [token.isalpha() and token in vocabulary for token in tokens]
    taken, phrases = [False] * len(tokens), []
    for _ in range(count):
        options = {}
        for length in (1, 2):
            options[length] = [start for start in range(len(tokens) - length + 1)
                               if all(usable[start : start + length]) and not any(taken[start : start + length])
                               and " ".join(tokens[start : start + length]) not in phrases]
        length = int(rng.integers(1, 3))
        if not options[length]:
            length = 3 - length
        if not options[length]:
            break
        start = options[length][int(rng.integers(len(options[length])))]
        taken[start : start + length] = [True] * length
        phrases.append(" ".join(tokens[start : start + length]))
    return phrases
