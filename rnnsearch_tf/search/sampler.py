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

    Every sample starts from BOS and draws each next token from `softmax(log_probs / temperature)` by
    inverse transform: the first token whose running sum of probabilities reaches a uniform draw of its row.
    A row's draw is the FarmHash fingerprint (`tf.fingerprint`) of `(seed, sentence key, sample, step)`, made
    one row at a time: a sentence's samples depend on the seed, its key and its own logits only, not on the rows
    beside it (their number, order, or the threads that share them), so a call is reproducible, also inside
    `tf.function` (not under XLA: `tf.fingerprint` has no XLA kernel). Forbidden tokens are never drawn and
    EOS is the only possible token at a sentence's maximum length. The returned `log_probs` are those of the
    model itself (temperature 1), and the samples of each sentence are sorted by `scores` (the log-probability,
    under the default `length_normalization="none"`). Duplicate samples are kept. With `prefix_ids` every sample
    starts with its sentence's prefix and is drawn after it (the draws of a step use the same seed either way).

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
        keys = tf.repeat(tf.cast(sentence_keys, tf.int64), self.num_samples)  # [batch * num_samples]
        samples = tf.tile(tf.range(self.num_samples, dtype=tf.int64), tf.shape(sentence_keys))  # [batch * num_samples]
        rows = tf.stack([tf.fill(tf.shape(keys), tf.constant(self.seed, tf.int64)), keys, samples], axis=1)

        def choose_ids(logits, step):
            return self.choose_ids(logits, step, rows)

        return self.search_independently(
            initial_state, maximum_lengths, self.num_samples, choose_ids, prefix_ids, num_alternatives
        )

    def choose_ids(self, logits, step, rows):
        """A draw from each row of `softmax(logits / temperature)` `[batch, vocab]` -> int32 `[batch]`, row r's
        by the fingerprint of `rows[r]` (int64 `[batch, 3]`: seed, sentence key, sample) and `step` alone."""
        steps = tf.fill([tf.shape(rows)[0], 1], tf.cast(step, tf.int64))  # [batch, 1]
        bits = tf.bitcast(tf.fingerprint(tf.concat([rows, steps], axis=1)), tf.uint64)  # [batch]
        uniform = tf.cast((tf.cast(bits, tf.float64) + 0.5) / 2.0**64, tf.float32)  # [batch] in (0, 1]
        weights = tf.exp((logits - tf.reduce_max(logits, axis=-1, keepdims=True)) / self.temperature)  # [batch, vocab]
        running = tf.math.cumsum(weights, axis=-1)  # [batch, vocab]: a forbidden token (weight 0) adds nothing
        reached = tf.searchsorted(running, uniform[:, None] * running[:, -1:], side="left")  # [batch, 1]
        return tf.cast(reached[:, 0], tf.int32)  # [batch]
