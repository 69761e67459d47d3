"""The forced first target words of a prefix-constrained search (interactive translation: the user has
typed the start of the translation, the search completes it)."""

import tensorflow as tf

from data_pipeline import constants


class TargetPrefix:
    """The tokens each sentence's hypotheses must start with, and where its free search begins.

    For the first `lengths[b]` steps of sentence b the only possible token is `prefix_ids[b, step]`,
    whatever the model prefers (a forbidden token too, e.g. `<unk>`); its log-probability is added to
    the hypothesis as for a token the search picked. A forced EOS ends the hypothesis there. From step
    `lengths[b]` on (the first free position) the search is free.

    Args:
        prefix_ids: int `[batch, prefix_len]`, target vocabulary ids right-padded with `PAD_ID` (0); a
            row of padding only (or `prefix_len` 0) forces nothing.

    Example:
    >>> prefix = TargetPrefix(tf.constant([[4, 5], [0, 0]]))
    >>> prefix.lengths  # [2, 0]
    >>> prefix.forced_ids(1)  # [5, -1]: sentence 1 is free
    """

    def __init__(self, prefix_ids):
        prefix_ids = tf.cast(tf.convert_to_tensor(prefix_ids), tf.int32)
        if prefix_ids.shape.rank != 2:
            raise ValueError(f"prefix_ids must be [batch, prefix_len], got shape {prefix_ids.shape}")
        positions = tf.range(1, tf.shape(prefix_ids)[1] + 1)  # [prefix_len]
        ends = tf.where(tf.not_equal(prefix_ids, constants.PAD_ID), positions[None, :], 0)  # [batch, prefix_len]
        # The last token that is not padding ends the prefix (a zero column keeps an empty prefix at 0).
        self.lengths = tf.reduce_max(tf.pad(ends, [[0, 0], [0, 1]]), axis=1)  # [batch]
        self.ids = tf.pad(prefix_ids, [[0, 0], [0, 1]])  # [batch, prefix_len + 1]: every row ends in PAD
        self.static_length = prefix_ids.shape[1]

    @classmethod
    def empty(cls, batch_size):
        """The prefix of a free search (`lengths` 0), to find the alternatives of its first word."""
        return cls(tf.zeros([batch_size, 0], tf.int32))

    def with_room(self, maximum_lengths, length_bound):
        """The maximum lengths raised to hold each prefix and EOS, and the largest of them.

        Args:
            maximum_lengths: int32 `[batch]`, the most tokens (EOS included) of a sentence's hypotheses.
            length_bound: their maximum, a Python int or a scalar int32 tensor.

        Returns:
            `(maximum_lengths, length_bound)`: int32 `[batch]` at least `lengths + 1`; an int where
            `length_bound` is one and `prefix_len` is static (so buffers stay static, for XLA), else a
            scalar tensor.
        """
        maximum_lengths = tf.maximum(maximum_lengths, self.lengths + 1)  # [batch]
        if isinstance(length_bound, int) and self.static_length is not None:
            return maximum_lengths, max(length_bound, self.static_length + 1)
        return maximum_lengths, tf.maximum(length_bound, tf.reduce_max(self.lengths) + 1)

    def forced_ids(self, step):
        """int32 `[batch]`: the token each sentence must take at `step`, -1 where it is free."""
        index = tf.minimum(step, tf.shape(self.ids)[1] - 1)
        return tf.where(step < self.lengths, tf.gather(self.ids, index, axis=1), -1)  # [batch]

    def is_first_free(self, step):
        """bool `[batch]`: `step` is the sentence's first free position (the step right after its prefix)."""
        return tf.equal(step, self.lengths)
