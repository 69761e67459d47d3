"""Greedy search over any recurrent step function.

After OpenNMT-tf `opennmt/utils/decoding.py` (`GreedySearch`, `BestSampler`); the loop is
`IndependentSearch.search_independently`, shared with `Sampler`.
"""

import tensorflow as tf

from rnnsearch_tf.search.independent_search import IndependentSearch


class GreedySearch(IndependentSearch):
    """Greedy search: the most probable next token at every step, until EOS.

    Takes the step function, options and call arguments of `SearchStrategy`, and returns its dict with
    one hypothesis per sentence (`n = 1`); equals `BeamSearch(beam_size=1)` with no length
    normalisation. Forbidden tokens are never chosen, and EOS is the only possible token at a
    sentence's maximum length. `length_normalization` sets how the returned `scores` are computed; it
    does not change the choice of tokens. With `prefix_ids` it equals `BeamSearch(beam_size=1)` with the
    same prefix: the prefix, then the most probable token at every step.

    Example:
    >>> result = GreedySearch(model.symbols_to_logits_fn).search(model.encode(source_ids), 2 * source_lengths + 10)
    >>> result["ids"][:, 0]  # [batch, max_length]
    """

    def search(self, initial_state, maximum_lengths, prefix_ids=None, num_alternatives=0):
        return self.search_independently(
            initial_state, maximum_lengths, 1, self.choose_ids, prefix_ids, num_alternatives
        )

    @staticmethod
    def choose_ids(logits, step):
        """The most probable token of each row of `logits` `[batch, vocab]` -> int32 `[batch]`."""
        del step  # the greedy choice does not depend on it
        return tf.argmax(logits, axis=-1, output_type=tf.int32)
