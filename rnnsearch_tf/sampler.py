"""Ancestral sampling of translations (Cho et al. 2014 drew 50 per source and ranked them by score).

After OpenNMT-tf `opennmt/utils/decoding.py` (`RandomSampler`): the greedy loop of `GreedySearch`
with a draw from the (tempered) next-token distribution in place of the argmax.
"""

import tensorflow as tf

from rnnsearch_tf import constants
from rnnsearch_tf.greedy_search import GreedySearch


class Sampler(GreedySearch):
    """Draws `num_samples` independent translations per sentence, returned best-first.

    Every sample starts from BOS and draws each next token from `softmax(log_probs / temperature)`
    with stateless random ops seeded by `(seed, step)`, so a call is reproducible, also inside
    `tf.function`. Forbidden tokens are never drawn and EOS is the only possible token at a sentence's
    maximum length. The returned `log_probs` are those of the model itself (temperature 1), and the
    samples of each sentence are sorted by `scores` (the log-probability, under the default
    `length_normalization="none"`). Duplicate samples are kept.

    Args:
        symbols_to_logits_fn: `fn(ids, step, state) -> (logits, new_state, step_output)`, as in
            `BeamSearch` with `beam = num_samples`.
        num_samples: samples per sentence (50 in Cho et al. 2014).
        temperature: > 0; below 1 sharpens the distribution (towards greedy), above 1 flattens it.
        seed: int, the seed of the stateless draws.
        length_normalization: `"none"`, `"length"` or `"gnmt"`: how `scores` are computed and ranked.
        length_penalty_alpha: the GNMT exponent.
        forbidden_ids: token ids that are never drawn, e.g. `(constants.UNK_ID,)`.
        eos_id: end-of-sentence id; must not be forbidden.
        bos_id: the "previous word" fed at step 0.

    Call arguments and returns: as `GreedySearch`, with `num_samples` in place of 1.

    Example:
    >>> samples = Sampler(model.symbols_to_logits_fn, num_samples=50, seed=7)(initial_state, 60)
    >>> samples["ids"][:, 0]  # the most probable sample of each sentence, [batch, max_length]
    """

    def __init__(
        self,
        symbols_to_logits_fn,
        num_samples=50,
        temperature=1.0,
        seed=0,
        length_normalization="none",
        length_penalty_alpha=0.6,
        forbidden_ids=(),
        eos_id=constants.EOS_ID,
        bos_id=constants.BOS_ID,
    ):
        if num_samples < 1:
            raise ValueError(f"num_samples must be at least 1, got {num_samples}")
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}; use GreedySearch for 0")
        super().__init__(
            symbols_to_logits_fn,
            length_normalization=length_normalization,
            length_penalty_alpha=length_penalty_alpha,
            forbidden_ids=forbidden_ids,
            eos_id=eos_id,
            bos_id=bos_id,
        )
        self.num_samples = num_samples
        self.temperature = temperature
        self.seed = seed

    @property
    def hypotheses_per_sentence(self):
        return self.num_samples

    def choose_ids(self, logits, step):
        step_seed = tf.random.experimental.stateless_fold_in(tf.constant([self.seed, 0], tf.int64), step)
        samples = tf.random.stateless_categorical(
            logits / self.temperature, num_samples=1, seed=step_seed, dtype=tf.int32
        )  # [batch * num_samples, 1]
        return samples[:, 0]  # [batch * num_samples]
