"""Ancestral sampling of translations (Cho et al. 2014 drew 50 per source and ranked them by score).

After OpenNMT-tf `opennmt/utils/decoding.py` (`RandomSampler`): the loop of `GreedySearch`
(`IndependentSearch.search_independently`) with a draw from the (tempered) next-token distribution in
place of the argmax.
"""

import tensorflow as tf

from rnnsearch_tf.search.independent_search import IndependentSearch
from rnnsearch_tf.search.search_helpers import batch_size_and_maximum_lengths


class Sampler(IndependentSearch):
    """Draws `num_samples` independent translations per sentence, returned best-first.

    Every sample starts from BOS and draws each next token from `softmax(log_probs / temperature)`
    (Gumbel-max: the argmax of the tempered logits plus Gumbel noise) with stateless random ops seeded by
    `(seed, sentence key, sample, step)`, one row at a time: a sentence's samples depend on the seed, its key
    and its own logits only, not on the rows beside it (their number, order, or the threads that share them),
    so a call is reproducible, also inside `tf.function`. Forbidden tokens are never drawn and EOS is the only possible token at a sentence's
    maximum length. The returned `log_probs` are those of the model itself (temperature 1), and the
    samples of each sentence are sorted by `scores` (the log-probability, under the default
    `length_normalization="none"`). Duplicate samples are kept. With `prefix_ids` every sample starts
    with its sentence's prefix and is drawn after it (the draws of a step use the same seed either way).

    Args:
        symbols_to_logits_fn: as `SearchStrategy`, with `num_samples` hypotheses per sentence.
        num_samples: samples per sentence (50 in Cho et al. 2014).
        temperature: > 0; below 1 sharpens the distribution (towards greedy), above 1 flattens it.
        seed: int, the seed of the stateless draws.
        **options: `length_normalization`, `length_penalty_alpha`, `forbidden_ids`, `eos_id`, `bos_id`
            of `SearchStrategy`.

    Call arguments and returns: as `SearchStrategy`, `n = num_samples`; `search` takes `sentence_keys` too, an
    optional int `[batch]`, each sentence's key of its draws (`SentenceSearch`: a hash of its source ids); by
    default its position in the batch.

    Example:
    >>> samples = Sampler(model.symbols_to_logits_fn, num_samples=50, seed=7)(initial_state, 60)
    >>> samples["ids"][:, 0]  # the most probable sample of each sentence, [batch, max_length]
    """

    def __init__(self, symbols_to_logits_fn, num_samples=50, temperature=1.0, seed=0, **options):
        if num_samples < 1:
            raise ValueError(f"num_samples must be at least 1, got {num_samples}")
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}; use GreedySearch for 0")
        super().__init__(symbols_to_logits_fn, **options)
        self.num_samples = num_samples
        self.temperature = temperature
        self.seed = seed

    def search(self, initial_state, maximum_lengths, prefix_ids=None, num_alternatives=0, sentence_keys=None):
        if sentence_keys is None:
            batch_size, _, _ = batch_size_and_maximum_lengths(initial_state, maximum_lengths)
            sentence_keys = tf.range(batch_size)
        row_seeds = self._row_seeds(tf.cast(sentence_keys, tf.int64))  # [batch * num_samples, 2]

        def choose_ids(logits, step):
            return self.choose_ids(logits, step, row_seeds)

        return self.search_independently(
            initial_state, maximum_lengths, self.num_samples, choose_ids, prefix_ids, num_alternatives
        )

    def _row_seeds(self, sentence_keys):
        """The seed of each sample's draws, from `seed`, its sentence's key and its index:
        int64 `[batch]` -> `[batch * num_samples, 2]`, a sentence's samples adjacent."""
        keys = tf.repeat(sentence_keys, self.num_samples)  # [batch * num_samples]
        samples = tf.tile(tf.range(self.num_samples, dtype=tf.int64), tf.shape(sentence_keys))  # [batch * num_samples]
        seed = tf.constant([self.seed, 0], tf.int64)
        fold_in = tf.random.experimental.stateless_fold_in
        return tf.vectorized_map(lambda row: fold_in(fold_in(seed, row[0]), row[1]), tf.stack([keys, samples], 1))

    def choose_ids(self, logits, step, row_seeds):
        """A draw from each row of `logits / temperature` `[batch, vocab]` -> int32 `[batch]`, row r's by
        `row_seeds[r]` and `step` alone (Gumbel-max)."""
        vocab_size = tf.shape(logits)[1]

        def uniform(row_seed):  # [vocab] in (0, 1)
            seed = tf.random.experimental.stateless_fold_in(row_seed, tf.cast(step, tf.int64))
            return tf.random.stateless_uniform([vocab_size], seed, minval=1e-20, maxval=1.0)

        gumbel = -tf.math.log(-tf.math.log(tf.vectorized_map(uniform, row_seeds)))  # [batch, vocab]
        return tf.argmax(logits / self.temperature + gumbel, axis=-1, output_type=tf.int32)  # [batch]
