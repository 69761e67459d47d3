"""Ancestral sampling of translations (Cho et al. 2014 drew 50 per source and ranked them by score).

After OpenNMT-tf `opennmt/utils/decoding.py` (`RandomSampler`): the loop of `GreedySearch`
(`IndependentSearch.search_independently`) with a draw from the (tempered) next-token distribution in
place of the argmax.
"""

import tensorflow as tf

from rnnsearch_tf.search.independent_search import IndependentSearch


class Sampler(IndependentSearch):
    """Draws `num_samples` independent translations per sentence, returned best-first.

    Every sample starts from BOS and draws each next token from `softmax(log_probs / temperature)`
    with stateless random ops seeded by `(seed, step)`, so a call is reproducible, also inside
    `tf.function`. Forbidden tokens are never drawn and EOS is the only possible token at a sentence's
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

    Call arguments and returns: as `SearchStrategy`, `n = num_samples`.

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

    def search(self, initial_state, maximum_lengths, prefix_ids=None, num_alternatives=0):
        return self.search_independently(
            initial_state, maximum_lengths, self.num_samples, self.choose_ids, prefix_ids, num_alternatives
        )

    def choose_ids(self, logits, step):
        """A draw from each row of `logits / temperature` `[batch, vocab]` -> int32 `[batch]`."""
        step_seed = tf.random.experimental.stateless_fold_in(tf.constant([self.seed, 0], tf.int64), step)
        samples = tf.random.stateless_categorical(
            logits / self.temperature, num_samples=1, seed=step_seed, dtype=tf.int32
        )  # [batch * num_samples, 1]
        return samples[:, 0]  # [batch * num_samples]
