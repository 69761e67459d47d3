"""Long sentence pairs made of real ones: consecutive pairs joined, both sides the same way."""

import collections

import numpy as np

from data_pipeline import languages

# Sentences joined into one pair: test sets hold a group of each size (`join-sentences --sizes`).
JOINED_SIZES = (2, 3, 4, 5)
# Most training pairs joined into one (`build-data --max_joined_sentences`).
MAX_JOINED_SENTENCES = max(JOINED_SIZES)
# Upper bounds of the source-length bins summarised (Moses tokens), as Figure 2 of Bahdanau et al. 2014.
LENGTH_BINS = (10, 20, 30, 40, 50, 60)

JoinedPair = collections.namedtuple("JoinedPair", ["source", "target", "lines", "sentences"])


def line_runs(lines):
    """How `rnnsearch join-sentences`' lines.txt names the input lines of a joined pair (`JoinedPair.lines`): runs
    of consecutive lines as FIRST-LAST, joined by commas ("1-2", "1-2,4-4" where line 3 was dropped)."""
    runs = []
    for line in lines:
        if runs and line == runs[-1][1] + 1:
            runs[-1][1] = line
        else:
            runs.append([line, line])
    return ",".join(f"{first}-{last}" for first, last in runs)


def run_lines(text):
    """The input lines a line of lines.txt names (`line_runs`' text -> tuple of int)."""
    lines = []
    for run in text.split(","):
        first, last = (int(number) for number in run.split("-"))
        lines.extend(range(first, last + 1))
    return tuple(lines)


class SentenceJoiner:
    """Joins consecutive sentence pairs into one pair, each side as its language writes sentences one after another
    (`languages.join_sentences`: a space, nothing after a Chinese or Japanese sentence's full stop).

    Test sets (`join`): for each size k of `sizes`, the pairs are cut into consecutive groups of k from the
    first one (lines 1..k, k+1..2k, ...; a last group of fewer than k is left out) and each group becomes
    one pair, so every sentence appears once per size, and the joined pairs of one size are as
    independent as the sentences are. Size 1 gives the pairs as they are.

    Training pairs (`sample_joined_pairs`): pairs of tokens are joined at random places (seeded), each of
    2 to `max_sentences` consecutive pairs, as long as both sides stay within a maximum length.

    A joined pair is longer than its parts but not harder in every way: its sentences need no context from
    each other (Multi30k captions describe different images), so a model must only keep its place in a long
    input, cover every part, and end once; long-range agreement and reordering across clauses, what
    makes real long sentences hard, are not in it (docs/data.md, "Long sentences").

    Args:
        sizes: the group sizes of `join`, each at least 1, each once (`check_sizes`).
        source_language, target_language: the language codes of the sides (`languages.check`); None joins that
            side's sentences with a space.
    """

    def __init__(self, sizes=JOINED_SIZES, source_language=None, target_language=None):
        self.sizes = self.check_sizes(sizes)
        self.source_language = source_language
        self.target_language = target_language

    @staticmethod
    def check_sizes(sizes):
        """`sizes` as a tuple, or ValueError where one is below 1 or given twice (its groups would be written
        twice)."""
        sizes = tuple(sizes)
        if not sizes or min(sizes) < 1:
            raise ValueError(f"sizes must be sentence counts of at least 1, got {sizes}")
        repeated = sorted({size for size in sizes if sizes.count(size) > 1})
        if repeated:
            raise ValueError(f"size {repeated[0]} is given twice: each size's groups are written once")
        return sizes

    def join(self, sources, targets):
        """The joined pairs of line-aligned `sources` and `targets` (lists of str): `JoinedPair`s with
        `source`, `target`, `lines` (the 1-based lines of its sentences) and `sentences`, size by size."""
        if len(sources) != len(targets):
            raise ValueError(f"got {len(sources)} source sentences but {len(targets)} target sentences")
        return list(self.joined(list(enumerate(zip(sources, targets), start=1))))

    def joined(self, numbered_pairs):
        """Yields the `JoinedPair`s of `join`, in its order, from (line, (source, target)) `numbered_pairs`: an
        iterable that gives the same pairs on every iteration (a list, or `pair_reader.SplitPairs` `with_lines`,
        which reads its files again), read once per size holding one group at a time, so a split of any size is joined
        as it is read. A group is consecutive pairs, its `lines` theirs (a line dropped before it, a gap)."""
        for size in self.sizes:
            groups = zip(*[iter(numbered_pairs)] * size)  # consecutive groups of `size`; a shorter last one left out
            for group in groups:
                lines, pairs = zip(*group)
                sources, targets = zip(*pairs)
                yield JoinedPair(languages.join_sentences([part.strip() for part in sources], self.source_language),
                                 languages.join_sentences([part.strip() for part in targets], self.target_language),
                                 lines, size)

    @staticmethod
    def sample_joined_pairs(pairs, count, max_length, max_sentences, seed):
        """`count` pairs of tokens made of consecutive `pairs`, each side at most `max_length` tokens.

        Each joined pair starts at a random pair (seeded) and takes 2 to `max_sentences` (drawn at random)
        consecutive pairs, fewer where the next one would make a side longer than `max_length`; a start
        whose next pair does not fit is drawn again (at most `count * 10` draws in all).

        Args:
            pairs: list of (source tokens, target tokens), each a list, in corpus order.
            count: joined pairs wanted.
            max_length: most tokens per side of a joined pair.
            max_sentences: most pairs joined into one, at least 2.
            seed: seed of the draws.

        Returns:
            an iterator of (source tokens, target tokens), at most `count` (fewer when few pairs fit), made
            one at a time: a build appends each to its token file as it comes, holding none of them.
        """
        if max_sentences < 2:
            raise ValueError(f"max_sentences must be at least 2, got {max_sentences}")
        return _joined_pairs(pairs, count, max_length, max_sentences, np.random.default_rng(seed))


def _joined_pairs(pairs, count, max_length, max_sentences, rng):
    """The draws of `SentenceJoiner.sample_joined_pairs`."""
    joined = 0
    for _ in range(count * 10):
        if joined == count or len(pairs) < 2:
            break
        start = int(rng.integers(len(pairs) - 1))
        wanted = int(rng.integers(2, max_sentences + 1))
        source, target = list(pairs[start][0]), list(pairs[start][1])
        taken = 1
        for next_source, next_target in pairs[start + 1 : start + wanted]:
            if len(source) + len(next_source) > max_length or len(target) + len(next_target) > max_length:
                break
            source += next_source
            target += next_target
            taken += 1
        if taken >= 2:
            joined += 1
            yield source, target
