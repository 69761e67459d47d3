"""The paper's data selection: general-domain pairs ranked by cross-entropy difference (Axelrod et al. 2011).

Bahdanau et al. 2014, Section 4.1, reduced the WMT'14 corpora "to the size of 348M words using the data
selection method by Axelrod et al. (2011)". Axelrod et al.'s score of a sentence s is Moore & Lewis's
cross-entropy difference H_in(s) - H_general(s), per word, of two language models of the same size: one
learned from in-domain text, one from a random sample of the general corpus; the lowest scores look most
like the in-domain text and least like the general one. Their bilingual variant sums the difference over
both sides of a pair, as the paper's selection of a combined (parallel) corpus does; `side="source"` scores
the source side only.

The language models are NLTK's (`nltk.lm.WittenBellInterpolated`: Witten-Bell smoothing interpolated down
to unigrams, with each context's weight computed once, `_FittedWittenBell`, over counts that scoring does not
grow, `_NgramCounts`) over the project's Moses tokens (characters for a language written without spaces:
`counting_tokens`), lowercased. Both models of a language share one vocabulary: the words seen at least
`unk_cutoff` times in the in-domain text and at least once in the general sample, every other word being
`<UNK>`, so that the two entropies of a sentence count the same events. Every word of that vocabulary is
seen by both models but `<UNK>`, which a model's text may lack (every in-domain word clears `unk_cutoff` and is in
the general sample): NLTK's Witten-Bell then gives an unknown word probability 0 at the unigram level, whose
interpolation ends there, and a sentence holding one an infinite cross-entropy. Such a model counts `<UNK>` once
(add-one for the one event it never saw: an unknown word costs what a word seen once does); a model whose text has
`<UNK>` is NLTK's as it is. (NLTK's Kneser-Ney scores about 300 times slower here, 0.1 s per sentence and model:
22 hours for the measured 190,636 pairs.)

The general corpus is never held: it is read again for each pass (its words, the general sample, the scores,
and `ranked_pairs` to write it best first), a batch of pairs at a time; what grows with it is a few numbers per
pair (words, scores, the ranking). The paper selected 348M words out of 850M.
"""

import dataclasses
import pickle
import tempfile

import numpy as np
import tensorflow as tf
from nltk.lm import NgramCounter, Vocabulary
from nltk.lm.models import InterpolatedLanguageModel
from nltk.lm.preprocessing import pad_both_ends
from nltk.lm.smoothing import WittenBell
from nltk.probability import FreqDist
from nltk.util import everygrams, ngrams

from data_pipeline.line_batches import batched
from data_pipeline.text_codec import counting_tokens

SIDES = ("both", "source")
_BATCH_LINES = 2000  # sentences tokenized together
_BUCKET_PAIRS = 50_000  # pairs put in rank order in memory at a time by `ranked_pairs`, at least
_MOST_BUCKETS = 500  # temporary files `ranked_pairs` writes at once, at most
_SENTENCE_MARKS = ("<s>", "</s>")  # NLTK's padding symbols: words of every vocabulary


def tokenize(sentences, language):
    """Lowercased words of each sentence (`counting_tokens`: Moses tokens, or characters for a language written
    without spaces): list of lists of str."""
    tokens = []
    for start in range(0, len(sentences), _BATCH_LINES):
        batch = counting_tokens(tf.constant(sentences[start : start + _BATCH_LINES]), language).to_list()
        tokens += [[token.decode("utf-8").lower() for token in sentence] for sentence in batch]
    return tokens


def _read_again(pairs, count):
    """The pairs of an iterable read once more, refused (ValueError) unless they are `count` again, as on the first
    pass: a file changed between two passes would misalign the pairs and their scores."""
    read = 0
    for read, pair in enumerate(pairs, start=1):
        if read > count:
            break
        yield pair
    if read != count:
        raise ValueError(f"the general corpus changed while it was read: {count} pairs, then "
                         f"{'more' if read > count else read}")


def pair_words(pairs, source_language, target_language):
    """The words of each (source, target) pair of an iterable, read in one pass (a batch at a time): the tokens of
    both sides (`counting_tokens`), the unit of `keep_best`'s budget. A list of int."""
    words = []
    for batch in batched(pairs, _BATCH_LINES):
        sources, targets = ([pair[column] for pair in batch] for column in (0, 1))
        words += (counting_tokens(tf.constant(sources), source_language).row_lengths()
                  + counting_tokens(tf.constant(targets), target_language).row_lengths()).numpy().tolist()
    return words


def ranked_pairs(pairs, ranking, folder=None, bucket_pairs=_BUCKET_PAIRS):
    """Yields (index, pair) for every pair of `pairs` (an iterable) in the order of `ranking` (their indices, best
    first), in one pass over `pairs` holding a bucket of at least `bucket_pairs` pairs at a time: each pair is
    appended to the temporary file of its rank's bucket (ranks 0..b-1, b..2b-1, ...; at most `_MOST_BUCKETS`
    files, in `folder` or the system's temporary folder, deleted when closed), then each bucket is read back and
    yielded in rank order. The files hold about the bytes of the pairs.
    """
    ranks = np.empty(len(ranking), dtype=np.int64)
    ranks[ranking] = np.arange(len(ranking))  # [pairs]: the rank of each pair
    bucket_pairs = max(bucket_pairs, -(-len(ranking) // _MOST_BUCKETS))
    buckets = [tempfile.TemporaryFile(dir=folder) for _ in range(0, len(ranking), bucket_pairs)]  # gone when closed
    try:
        for index, pair in enumerate(_read_again(pairs, len(ranking))):
            pickle.dump((int(ranks[index]), index, tuple(pair)), buckets[ranks[index] // bucket_pairs])
        for start, bucket in zip(range(0, len(ranking), bucket_pairs), buckets):
            yield from _bucket_in_rank_order(bucket, start, min(bucket_pairs, len(ranking) - start))
    finally:
        for bucket in buckets:
            bucket.close()


def _bucket_in_rank_order(bucket, start, size):
    """The (index, pair) rows of a bucket file of `ranked_pairs` holding the ranks start..start+size-1."""
    rows = [None] * size
    bucket.seek(0)
    for _ in range(size):
        rank, index, pair = pickle.load(bucket)
        rows[rank - start] = index, pair
    return rows


def random_ranking(count, seed):
    """The indices 0..count-1 in a random order, the same for the same seed."""
    return np.random.default_rng(seed).permutation(count)


def keep_best(ranking, words, max_words):
    """The longest prefix of `ranking` (indices of pairs, best first) whose pairs hold at most `max_words`
    words in all (`words[i]`: the words of pair i), as an array of indices in ranking order."""
    total = np.cumsum(np.asarray(words)[ranking])
    return np.asarray(ranking)[: int(np.searchsorted(total, max_words, side="right"))]


class _FittedWittenBell(WittenBell):
    """NLTK's Witten-Bell smoothing, each context's gamma computed once: NLTK counts the distinct words that
    follow a context on every call, thousands for a frequent context ("<s>", "a"), which made scoring 5 times
    slower (2.8 ms against 0.5 ms per sentence and model here). The counts do not change once fitted."""

    def __init__(self, vocabulary, counter, **kwargs):
        super().__init__(vocabulary, counter, **kwargs)
        self._gammas = {}

    def _gamma(self, context):
        if context not in self._gammas:
            self._gammas[context] = super()._gamma(context)
        return self._gammas[context]


class _NgramCounts(NgramCounter):
    """NLTK's n-gram counts, read without adding to them: NLTK's `counts[context]` adds an empty entry for every
    context it has not seen (its tables are defaultdicts), so that scoring a corpus grew each model by each new
    context it met (+51,000 trigram contexts a model in 60,000 general sentences here), without bound in the
    corpus's size. An unseen context reads as empty here, as it did, and a fitted model no longer changes."""

    _UNSEEN = FreqDist()  # the counts of every context never seen; only read

    def __getitem__(self, item):
        if isinstance(item, (int, str)):
            return super().__getitem__(item)
        return super().__getitem__(len(item) + 1).get(tuple(item), self._UNSEEN)


class DomainLanguageModels:
    """An in-domain and a general language model of one language, over one shared vocabulary.

    Args:
        in_domain: in-domain sentences, each a list of tokens.
        general_sample: sentences of the general corpus (a random sample of the size of `in_domain`).
        order: n-gram order.
        unk_cutoff: fewest in-domain occurrences of a word in the vocabulary.
    """

    def __init__(self, in_domain, general_sample, order=3, unk_cutoff=2):
        self.order = order
        in_domain_counts = Vocabulary([token for sentence in in_domain for token in sentence], unk_cutoff=unk_cutoff)
        general_words = {token for sentence in general_sample for token in sentence}
        shared = [word for word in general_words if word in in_domain_counts and word != in_domain_counts.unk_label]
        self.vocabulary = Vocabulary(shared + list(_SENTENCE_MARKS), unk_cutoff=1)
        self.in_domain = self._fit(in_domain)
        self.general = self._fit(general_sample)

    def _fit(self, sentences):
        """The Witten-Bell model of `sentences` over the shared vocabulary; `<UNK>` counted once if they hold no
        word outside it (the module docstring: so that no sentence scores an infinite cross-entropy)."""
        model = InterpolatedLanguageModel(_FittedWittenBell, self.order, vocabulary=self.vocabulary,
                                          counter=_NgramCounts())
        model.fit(list(everygrams(list(pad_both_ends(sentence, n=self.order)), max_len=self.order))
                  for sentence in sentences)
        unknown = self.vocabulary.unk_label
        if not model.counts.unigrams[unknown]:
            model.counts.unigrams[unknown] = 1
        return model

    def ngrams(self, sentence):
        """The n-grams a model scores for a sentence of n tokens, padded at both ends with order - 1 `<s>` and
        order - 1 `</s>` (NLTK's `pad_both_ends`): n + order - 1 of them, one per token and order - 1 ending
        in `</s>` (a bigram model: n + 1; a trigram model: n + 2, the last one `</s>` after `</s>`)."""
        return list(ngrams(pad_both_ends(sentence, n=self.order), self.order))

    def cross_entropies(self, sentence):
        """(H_in, H_general): each model's cross-entropy of the sentence, in bits per n-gram of `ngrams`: the mean
        negative log2 probability of its n + order - 1 events, the `</s>` ones included."""
        sentence_ngrams = self.ngrams(sentence)
        return self.in_domain.entropy(sentence_ngrams), self.general.entropy(sentence_ngrams)


@dataclasses.dataclass
class Scores:
    """Per general pair: `difference` (the ranking score, lowest best) and its terms, `in_domain[side]` and
    `general[side]` (bits per word; `side` "source" or "target", the latter only when both are scored)."""

    difference: np.ndarray
    in_domain: dict
    general: dict


class DataSelection:
    """Ranks the pairs of a general corpus by cross-entropy difference to an in-domain corpus.

    The general corpus is read in passes, never held: its words (`words`), then the pairs of the general sample
    (`sample`, drawn from `words` and `seed`), then each call of `scores()`; the in-domain pairs and the sample
    are held while the models learn.

    Args:
        in_domain_pairs: in-domain (source, target) sentence pairs, a list (only the scored sides are used).
        general_pairs: the general corpus, (source, target) pairs: an iterable that gives the same pairs on
            every iteration (a list, or `pair_reader.SplitPairs`, which reads its files again).
        source_language: a language code.
        target_language: a language code.
        side: "both" (bilingual: the sum of the source's and the target's differences) or "source".
        order: n-gram order of the language models.
        unk_cutoff: fewest in-domain occurrences of a vocabulary word.
        seed: seed of the general sample the general models learn from.

    Example:
    >>> selection = DataSelection(captions, mixed, "en", "fr")
    >>> kept = keep_best(selection.ranking(), selection.words, max_words=400_000)
    """

    def __init__(self, in_domain_pairs, general_pairs, source_language, target_language, side="both", order=3,
                 unk_cutoff=2, seed=1234):
        if side not in SIDES:
            raise ValueError(f"side must be one of {SIDES}, got {side!r}")
        self.side = side
        self.languages = {"source": source_language, "target": target_language}
        self.general_pairs = general_pairs
        # Words of a pair: the tokens of both sides, the unit of `keep_best`'s budget.
        self.words = pair_words(general_pairs, source_language, target_language) if in_domain_pairs else []
        if not self.words:
            raise ValueError("data selection needs in-domain and general sentence pairs; one of them is empty")
        in_domain = self._tokenized(in_domain_pairs)
        in_domain_words = sum(len(sentence) for sentences in in_domain.values() for sentence in sentences)
        self.sample = keep_best(random_ranking(len(self.words), seed), self.words, in_domain_words)
        general_sample = self._tokenized(self._sample_pairs())
        self.models = {name: DomainLanguageModels(in_domain[name], general_sample[name], order, unk_cutoff)
                       for name in self.scored_sides}

    @property
    def scored_sides(self):
        return ("source", "target") if self.side == "both" else ("source",)

    def _sample_pairs(self):
        """The pairs of the general sample, in corpus order (the models count n-grams: their order does not matter)."""
        chosen = np.zeros(len(self.words), dtype=bool)  # [pairs]
        chosen[self.sample] = True
        return [pair for pair, taken in zip(_read_again(self.general_pairs, len(self.words)), chosen) if taken]

    def _tokenized(self, pairs):
        """{"source": token lists, "target": token lists} of a list of (source, target) pairs."""
        return {name: tokenize([pair[column] for pair in pairs], self.languages[name])
                for column, name in enumerate(("source", "target"))}

    def scores(self):
        """`Scores` of every general pair, in the general corpus's order (one pass over it)."""
        entropies = {name: np.empty((len(self.words), 2)) for name in self.scored_sides}  # [pairs, 2]
        start = 0
        for batch in batched(_read_again(self.general_pairs, len(self.words)), _BATCH_LINES):
            for column, name in enumerate(self.scored_sides):
                sentences = tokenize([pair[column] for pair in batch], self.languages[name])
                entropies[name][start : start + len(batch)] = [
                    self.models[name].cross_entropies(sentence) for sentence in sentences]
            start += len(batch)
        in_domain = {name: values[:, 0] for name, values in entropies.items()}
        general = {name: values[:, 1] for name, values in entropies.items()}
        difference = sum(in_domain[name] - general[name] for name in self.scored_sides)
        return Scores(difference, in_domain, general)

    def ranking(self, scores=None):
        """Indices of the general pairs, lowest cross-entropy difference first (ties in corpus order)."""
        scores = scores or self.scores()
        return np.argsort(scores.difference, kind="stable")
