"""The paper's data selection: general-domain pairs ranked by cross-entropy difference (Axelrod et al. 2011).

Bahdanau et al. 2014, Section 4.1, reduced the WMT'14 corpora "to the size of 348M words using the data
selection method by Axelrod et al. (2011)". Axelrod et al.'s score of a sentence s is Moore & Lewis's
cross-entropy difference H_in(s) - H_general(s), per word, of two language models of the same size: one
learned from in-domain text, one from a random sample of the general corpus; the lowest scores look most
like the in-domain text and least like the general one. Their bilingual variant sums the difference over
both sides of a pair, as the paper's selection of a combined (parallel) corpus does; `side="source"` scores
the source side only.

The language models are NLTK's (`nltk.lm.WittenBellInterpolated`: Witten-Bell smoothing interpolated down
to unigrams, with each context's weight computed once, `_FittedWittenBell`) over the project's Moses tokens
(characters for a language written without spaces: `counting_tokens`), lowercased. Both models of a language share one vocabulary: the words seen at least
`unk_cutoff` times in the in-domain text and at least once in the general sample, every other word being
`<UNK>`, so that the two entropies of a sentence count the same events. (NLTK's Kneser-Ney scores about 300
times slower here, 0.1 s per sentence and model: 22 hours for the measured 190,636 pairs.)
"""

import dataclasses

import numpy as np
import tensorflow as tf
from nltk.lm import Vocabulary
from nltk.lm.models import InterpolatedLanguageModel
from nltk.lm.preprocessing import pad_both_ends
from nltk.lm.smoothing import WittenBell
from nltk.util import everygrams, ngrams

from data_pipeline.text_codec import counting_tokens

SIDES = ("both", "source")
_BATCH_LINES = 2000  # sentences tokenized together
_SENTENCE_MARKS = ("<s>", "</s>")  # NLTK's padding symbols: words of every vocabulary


def tokenize(sentences, language):
    """Lowercased words of each sentence (`counting_tokens`: Moses tokens, or characters for a language written
    without spaces): list of lists of str."""
    tokens = []
    for start in range(0, len(sentences), _BATCH_LINES):
        batch = counting_tokens(tf.constant(sentences[start : start + _BATCH_LINES]), language).to_list()
        tokens += [[token.decode("utf-8").lower() for token in sentence] for sentence in batch]
    return tokens


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
        model = InterpolatedLanguageModel(_FittedWittenBell, self.order, vocabulary=self.vocabulary)
        model.fit(list(everygrams(list(pad_both_ends(sentence, n=self.order)), max_len=self.order))
                  for sentence in sentences)
        return model

    def ngrams(self, sentence):
        """The n-grams a model scores for a sentence (padded at both ends): one per token and one for `</s>`."""
        return list(ngrams(pad_both_ends(sentence, n=self.order), self.order))

    def cross_entropies(self, sentence):
        """(H_in, H_general): each model's cross-entropy of the sentence, in bits per word (`</s>` included)."""
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

    Args:
        in_domain_pairs: in-domain (source, target) sentence pairs (only the scored sides are used).
        general_pairs: the general corpus, (source, target) pairs.
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
        if not in_domain_pairs or not general_pairs:
            raise ValueError("data selection needs in-domain and general sentence pairs; one of them is empty")
        self.side = side
        self.languages = {"source": source_language, "target": target_language}
        in_domain = self._tokenized(in_domain_pairs)
        self.general_tokens = self._tokenized(general_pairs)
        # Words of a pair: the tokens of both sides, the unit of `keep_best`'s budget.
        self.words = [len(source) + len(target) for source, target in zip(*self.general_tokens.values())]
        in_domain_words = sum(len(sentence) for sentences in in_domain.values() for sentence in sentences)
        self.sample = keep_best(random_ranking(len(general_pairs), seed), self.words, in_domain_words)
        self.models = {
            name: DomainLanguageModels(in_domain[name], [self.general_tokens[name][i] for i in self.sample],
                                       order, unk_cutoff)
            for name in self.scored_sides
        }

    @property
    def scored_sides(self):
        return ("source", "target") if self.side == "both" else ("source",)

    def _tokenized(self, pairs):
        """{"source": token lists, "target": token lists} of (source, target) pairs."""
        sources, targets = zip(*pairs)
        return {"source": tokenize(list(sources), self.languages["source"]),
                "target": tokenize(list(targets), self.languages["target"])}

    def scores(self):
        """`Scores` of every general pair, in the general corpus's order."""
        in_domain, general = {}, {}
        for name in self.scored_sides:
            entropies = np.array([self.models[name].cross_entropies(sentence)
                                  for sentence in self.general_tokens[name]]).reshape(-1, 2)  # [pairs, 2]
            in_domain[name], general[name] = entropies[:, 0], entropies[:, 1]
        difference = sum(in_domain[name] - general[name] for name in self.scored_sides)
        return Scores(difference, in_domain, general)

    def ranking(self, scores=None):
        """Indices of the general pairs, lowest cross-entropy difference first (ties in corpus order)."""
        scores = scores or self.scores()
        return np.argsort(scores.difference, kind="stable")
