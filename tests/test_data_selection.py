"""Cross-entropy difference data selection (Axelrod et al. 2011): ranking, its terms and the word budget."""

import collections
import itertools

import numpy as np
import pytest
from nltk.lm import WittenBellInterpolated
from nltk.lm.preprocessing import pad_both_ends
from nltk.util import everygrams, ngrams

from data_pipeline.data_selection import DataSelection, DomainLanguageModels, keep_best, random_ranking, tokenize

_ANIMALS = ("dog", "cat", "horse", "bird")
_PLACES = ("park", "beach", "street", "field")
_BANK = ("bank", "market", "government", "minister")


def _captions():
    """In-domain: caption-like sentences about animals and places (every combination, some words rare)."""
    english = [f"A {animal} runs in the {place}." for animal, place in itertools.product(_ANIMALS, _PLACES)]
    french = [f"Un {animal}fr court dans le {place}fr." for animal, place in itertools.product(_ANIMALS, _PLACES)]
    return list(zip(english + ["A zebra sleeps."], french + ["Un zèbre dort."]))


def _news():
    """Out-of-domain: news-like sentences of another vocabulary."""
    english = [f"The {noun} said the {other} would raise taxes." for noun, other in itertools.permutations(_BANK, 2)]
    french = [f"Le {noun}fr a dit que le {other}fr augmenterait les impôts."
              for noun, other in itertools.permutations(_BANK, 2)]
    return list(zip(english, french))


def _general():
    """The general corpus: news with a few held-out captions mixed in, in a fixed interleaving."""
    in_domain_like = [("A dog runs in the street.", "Un dogfr court dans le streetfr."),
                      ("A bird runs in the beach.", "Un birdfr court dans le beachfr.")]
    news = _news()
    return news[:5] + in_domain_like[:1] + news[5:9] + in_domain_like[1:] + news[9:]


@pytest.mark.parametrize("side", ["both", "source"])
def test_in_domain_like_pairs_are_ranked_first(side):
    general = _general()
    selection = DataSelection(_captions(), general, "en", "fr", side=side, order=2, unk_cutoff=1)
    ranking = selection.ranking()
    assert {general[index][0] for index in ranking[:2]} == {"A dog runs in the street.", "A bird runs in the beach."}
    scores = selection.scores()
    assert np.all(scores.difference[ranking[:2]] < 0) and np.all(scores.difference[ranking[2:]] > 0)
    assert set(scores.in_domain) == ({"source", "target"} if side == "both" else {"source"})


def _witten_bell_cross_entropy(training, vocabulary, sentence):
    """Bits per token (`</s>` included) of `sentence` under a bigram model of the `training` sentences (lists
    of tokens), every word outside `vocabulary` read as `<UNK>`, computed by hand from the counts: Witten-Bell
    interpolated with the unigram distribution, P(w | h) = (c(h w) + T(h) P(w)) / (c(h) + T(h)) with T(h) the
    distinct words seen after h and P(w) = c(w) / N over the padded tokens; a context never seen gives P(w).
    Training text without a word outside `vocabulary` counts `<UNK>` once (c(<UNK>) = 1, N one more)."""
    def padded(tokens):
        return ["<s>"] + [token if token in vocabulary else "<UNK>" for token in tokens] + ["</s>"]

    sentences = [padded(tokens) for tokens in training]
    unigrams = collections.Counter(token for tokens in sentences for token in tokens)
    unigrams["<UNK>"] = unigrams["<UNK>"] or 1
    bigrams = collections.Counter(pair for tokens in sentences for pair in zip(tokens, tokens[1:]))

    def probability(context, word):
        unigram = unigrams[word] / sum(unigrams.values())
        after = [count for (first, _), count in bigrams.items() if first == context]  # c(h w) of each w seen
        if not after:
            return unigram
        return (bigrams[context, word] + len(after) * unigram) / (sum(after) + len(after))

    tokens = padded(sentence)
    return -np.mean([np.log2(probability(context, word)) for context, word in zip(tokens, tokens[1:])])


def test_the_difference_is_the_cross_entropy_difference_computed_from_the_counts():
    """A corpus small enough to score by hand (Axelrod et al. 2011: the sum over both sides of H_in(s) -
    H_general(s)): its general sample is the whole general corpus (fewer words than the in-domain text), the
    vocabulary the in-domain words seen there too. The caption-like pair ranks first; the two news pairs, all
    `<UNK>` on both sides, score alike and keep their order."""
    in_domain = [("a dog runs", "un chien court"), ("a cat runs", "un chat court"), ("a dog sleeps", "un chien dort"),
                 ("a cat sleeps", "un chat dort")]
    general = [("the bank said", "la banque a dit"), ("a dog runs", "un chien court"),
               ("the minister said", "le ministre a dit")]
    selection = DataSelection(in_domain, general, "en", "fr", side="both", order=2, unk_cutoff=1)
    assert sorted(selection.sample.tolist()) == [0, 1, 2]
    vocabularies = {"source": {"a", "dog", "runs"}, "target": {"un", "chien", "court"}}
    scores = selection.scores()
    expected = np.zeros(len(general))
    for column, side in enumerate(("source", "target")):
        in_domain_side, general_side = ([pair[column].split() for pair in pairs] for pairs in (in_domain, general))
        for index, sentence in enumerate(general_side):
            h_in = _witten_bell_cross_entropy(in_domain_side, vocabularies[side], sentence)
            h_general = _witten_bell_cross_entropy(general_side, vocabularies[side], sentence)
            assert scores.in_domain[side][index] == pytest.approx(h_in)
            assert scores.general[side][index] == pytest.approx(h_general)
            expected[index] += h_in - h_general
    np.testing.assert_allclose(scores.difference, expected, rtol=1e-9)
    assert expected[1] < 0 < expected[0] == expected[2]
    assert selection.ranking().tolist() == [1, 0, 2]


def test_an_in_domain_text_without_unknown_words_still_gives_them_a_finite_cost():
    """Every in-domain word clears --unk_cutoff and is in the general sample, so the in-domain model never saw
    `<UNK>`: NLTK's Witten-Bell gave an unknown word probability 0 at the unigram level, and the pairs holding one
    infinite cross-entropies (and a difference inf - inf). That model counts `<UNK>` once; the general one, whose
    text has unknown words, is NLTK's as it is: both by hand, as above."""
    in_domain = [("a dog runs .", "un chien court .")] * 2
    general = [("the dog runs .", "le chien court ."), ("stocks fell sharply .", "les actions ont chuté ."),
               ("a cat sits .", "un chat est assis ."), ("the market runs .", "le marché court ."),
               ("A Dog Runs .", "Un Chien Court .")]
    selection = DataSelection(in_domain, general, "en", "fr", side="both", order=2, unk_cutoff=2)
    scores = selection.scores()
    for values in (scores.difference, *scores.in_domain.values(), *scores.general.values()):
        assert np.all(np.isfinite(values)), values
    sample = [general[index] for index in sorted(selection.sample)]
    for column, side in enumerate(("source", "target")):
        in_domain_side, general_side = ([pair[column].lower().split() for pair in pairs]
                                        for pairs in (in_domain, sample))
        counts = collections.Counter(token for tokens in in_domain_side for token in tokens)
        vocabulary = {token for token, count in counts.items() if count >= 2} & set(sum(general_side, []))
        assert set(counts) <= vocabulary < set(sum(general_side, []))  # <UNK> in the general text only
        for index, (source, target) in enumerate(general):
            sentence = (source, target)[column].lower().split()
            assert scores.in_domain[side][index] == pytest.approx(
                _witten_bell_cross_entropy(in_domain_side, vocabulary, sentence))
            assert scores.general[side][index] == pytest.approx(
                _witten_bell_cross_entropy(general_side, vocabulary, sentence))


def test_a_sentence_of_n_tokens_is_scored_as_n_plus_order_minus_one_ngrams():
    """NLTK's `pad_both_ends` adds order - 1 `<s>` and order - 1 `</s>`: the cross-entropy is the mean over n +
    order - 1 events, order - 1 of them predicting `</s>`."""
    in_domain = [["a", "dog", "runs"], ["a", "cat", "runs"]]
    for order in (1, 2, 3, 4):
        models = DomainLanguageModels(in_domain, in_domain, order=order, unk_cutoff=1)
        ngrams_scored = models.ngrams(["a", "dog", "runs"])
        assert len(ngrams_scored) == 3 + order - 1
        assert sum(gram[-1] == "</s>" for gram in ngrams_scored) == order - 1
        probabilities = [models.in_domain.score(gram[-1], gram[:-1]) for gram in ngrams_scored]
        assert models.cross_entropies(["a", "dog", "runs"])[0] == pytest.approx(-np.mean(np.log2(probabilities)))


def test_per_word_entropy_is_the_mean_negative_log2_probability_of_a_fitted_nltk_model():
    in_domain = [["a", "dog", "runs"], ["a", "cat", "runs"], ["a", "dog", "sleeps"]]
    general = [["the", "bank", "said"], ["a", "dog", "said"], ["the", "cat", "runs"]]
    models = DomainLanguageModels(in_domain, general, order=2, unk_cutoff=1)
    reference = WittenBellInterpolated(2, vocabulary=models.vocabulary)
    reference.fit(list(everygrams(list(pad_both_ends(s, n=2)), max_len=2)) for s in in_domain)
    sentence = ["a", "cat", "sleeps"]
    probabilities = [reference.score(bigram[-1], bigram[:-1]) for bigram in ngrams(pad_both_ends(sentence, n=2), 2)]
    assert models.cross_entropies(sentence)[0] == pytest.approx(-np.mean(np.log2(probabilities)))
    # The shared vocabulary: the in-domain words also seen in the general sample ("sleeps" is not, "bank" is
    # general only).
    assert "dog" in models.vocabulary and "runs" in models.vocabulary
    assert "sleeps" not in models.vocabulary and "bank" not in models.vocabulary


def test_keep_best_keeps_the_longest_prefix_within_max_words():
    ranking = np.array([3, 0, 2, 1])
    words = [5, 7, 4, 6]  # in ranking order: 6, 5, 4, 7 -> running totals 6, 11, 15, 22
    assert keep_best(ranking, words, 15).tolist() == [3, 0, 2]
    assert keep_best(ranking, words, 14).tolist() == [3, 0]
    assert keep_best(ranking, words, 5).tolist() == []
    assert keep_best(ranking, words, 1000).tolist() == [3, 0, 2, 1]


def test_selection_words_count_both_sides_and_the_general_sample_matches_the_in_domain_size():
    general = _general()
    selection = DataSelection(_captions(), general, "en", "fr", order=2, unk_cutoff=1)
    tokens = [len(source) + len(target) for source, target in
              zip(tokenize([s for s, _ in general], "en"), tokenize([t for _, t in general], "fr"))]
    assert selection.words == tokens
    captions = _captions()
    in_domain_words = sum(len(tokens) for tokens in tokenize([s for s, _ in captions], "en") + tokenize(
        [t for _, t in captions], "fr"))
    sample_words = [selection.words[index] for index in selection.sample]
    assert sum(sample_words) <= in_domain_words < sum(sample_words) + max(selection.words)


def test_tokenize_lowercases_moses_tokens():
    assert tokenize(["The Dog's ball, 3,5 kg."], "en") == [["the", "dog", "'s", "ball", ",", "3,5", "kg", "."]]


def test_random_ranking_is_a_seeded_permutation():
    assert sorted(random_ranking(10, 7).tolist()) == list(range(10))
    assert random_ranking(10, 7).tolist() == random_ranking(10, 7).tolist()
    assert random_ranking(10, 7).tolist() != random_ranking(10, 8).tolist()


def test_misuse():
    with pytest.raises(ValueError, match="side must be one of"):
        DataSelection(_captions(), _general(), "en", "fr", side="target")
    with pytest.raises(ValueError, match="one of them is empty"):
        DataSelection([], _general(), "en", "fr")


from data_pipeline.data_selection import ranked_pairs  # noqa: E402


class _Counted(str):
    """A sentence that counts how many sentences of its kind are alive at once (the most so far in `peak`): a
    corpus made of them shows how much of it a reader holds."""

    alive = peak = 0

    def __new__(cls, text):
        sentence = super().__new__(cls, text)
        _Counted.alive += 1
        _Counted.peak = max(_Counted.peak, _Counted.alive)
        return sentence

    def __del__(self):
        _Counted.alive -= 1


class _PoolFile:
    """A general corpus of `size` pairs made anew on every iteration, as a file is read again: news pairs with
    the two captions of `_general()` at 1/3 and 2/3, each side a `_Counted`."""

    def __init__(self, size):
        self.size = size

    def pair(self, index):
        captions = {self.size // 3: _general()[5], 2 * self.size // 3: _general()[10]}
        if index in captions:
            return captions[index]
        noun, other = _BANK[index % 4], _BANK[(index // 4) % 4]
        return f"The {noun} said the {other} would raise {index} taxes.", f"Le {noun}fr a dit {index} impôts."

    def __iter__(self):
        for index in range(self.size):
            yield tuple(_Counted(side) for side in self.pair(index))


def test_the_general_corpus_is_read_in_passes_and_never_held():
    """10,000 general pairs, read again for each pass (words, the general sample, the scores): never were half
    of them alive at once (two sentences a pair), and the two captions among them rank first."""
    pool = _PoolFile(10_000)
    _Counted.alive = _Counted.peak = 0
    selection = DataSelection(_captions(), pool, "en", "fr", side="source", order=2, unk_cutoff=1)
    ranking = selection.ranking()
    assert len(selection.words) == len(ranking) == pool.size
    assert sorted(ranking[:2].tolist()) == [pool.size // 3, 2 * pool.size // 3]
    assert 0 < _Counted.peak < pool.size


def test_ranked_pairs_gives_every_pair_in_ranking_order_holding_a_bucket_at_a_time():
    """1,000 pairs in buckets of 64 ranks (the last one of 40) come back in a random ranking's order, each with
    its index, from one pass over them; never were more than a bucket's pairs and two others alive."""
    pool = _PoolFile(1000)
    ranking = random_ranking(pool.size, seed=5)
    _Counted.alive = _Counted.peak = 0
    count = 0
    for (index, pair), expected in zip(ranked_pairs(pool, ranking, bucket_pairs=64), ranking):
        assert index == expected and pair == pool.pair(index)
        count += 1
    assert count == pool.size and 0 < _Counted.peak <= 2 * (64 + 2)


def test_a_general_corpus_that_changes_between_passes_is_refused():
    with pytest.raises(ValueError, match="the general corpus changed while it was read: 31 pairs, then 30$"):
        list(ranked_pairs(_PoolFile(30), np.arange(31)))
    with pytest.raises(ValueError, match="the general corpus changed while it was read: 30 pairs, then more"):
        list(ranked_pairs(_PoolFile(31), np.arange(30)))


def test_scoring_leaves_the_fitted_models_as_they_were():
    """NLTK's counts add an empty entry for each context they are asked about and never saw, so that scoring a
    corpus grew the models with it: a sentence of unseen trigram contexts leaves both models' contexts as they
    were fitted, and scores as NLTK's own Witten-Bell trigram model does."""
    in_domain = [["a", "dog", "runs"], ["a", "cat", "runs"], ["a", "dog", "sleeps"]]
    general = [["the", "bank", "said"], ["a", "dog", "said"], ["the", "cat", "runs"]]
    models = DomainLanguageModels(in_domain, general, order=3, unk_cutoff=1)
    contexts = [(len(model.counts[2]), len(model.counts[3])) for model in (models.in_domain, models.general)]
    sentence = ["runs", "a", "cat", "dog", "a", "bank"]
    entropies = models.cross_entropies(sentence)
    assert [(len(model.counts[2]), len(model.counts[3])) for model in (models.in_domain, models.general)] == contexts
    reference = WittenBellInterpolated(3, vocabulary=models.vocabulary)
    reference.fit(list(everygrams(list(pad_both_ends(s, n=3)), max_len=3)) for s in in_domain)
    assert entropies[0] == pytest.approx(reference.entropy(models.ngrams(sentence)))
    assert len(reference.counts[3]) > contexts[0][1]  # NLTK's own model grew by the contexts it was asked about
