"""The sentences a beam search step computes, once finished ones are dropped (`BeamSearch(drop_finished=True)`)."""

import tensorflow as tf

from data_pipeline import constants
from rnnsearch_tf.search.search_helpers import LARGE_NEGATIVE


class ActiveSentences:
    """The sentences a beam search step computes: `indices` int32 `[active]` into the batch, ascending;
    with `every_sentence`, the whole batch, and `gather` / `scatter` return what they get (static
    shapes stay static, for XLA)."""

    def __init__(self, indices, batch_size, every_sentence=False):
        self.indices = indices
        self.batch_size = batch_size
        self.every_sentence = every_sentence
        self.size = batch_size if every_sentence else tf.shape(indices)[0]
        if not every_sentence:  # each sentence's row among the active ones; `size` (a default row) if none
            self._positions = tf.tensor_scatter_nd_update(
                tf.fill([batch_size], self.size), indices[:, None], tf.range(self.size)
            )  # [batch]

    def gather(self, values):
        """The active sentences' rows of `values` `[batch, ...]`: `[active, ...]`."""
        return values if self.every_sentence else tf.gather(values, self.indices)

    def scatter(self, values, default):
        """`[active, ...]` -> `[batch, ...]`, `default` in the rows of the other sentences."""
        if self.every_sentence:
            return values
        fill = tf.fill(tf.concat([[1], tf.shape(values)[1:]], axis=0), tf.cast(default, values.dtype))
        return tf.gather(tf.concat([values, fill], axis=0), self._positions)  # [batch, ...]

    def scatter_candidates(self, candidates, alive):
        """The step's candidates and new alive hypotheses for the whole batch; a sentence not computed
        has none (log-probability `LARGE_NEGATIVE`)."""
        everywhere = dict(
            log_probs=self.scatter(candidates["log_probs"], LARGE_NEGATIVE),
            parents=self.scatter(candidates["parents"], 0),
            ids=self.scatter(candidates["ids"], constants.PAD_ID),
            is_eos=self.scatter(candidates["is_eos"], False),
            length=candidates["length"],
        )
        alive_everywhere = dict(
            log_probs=self.scatter(alive["log_probs"], LARGE_NEGATIVE),
            ids=self.scatter(alive["ids"], constants.PAD_ID),
            parents=self.scatter(alive["parents"], 0),
        )
        return everywhere, alive_everywhere
