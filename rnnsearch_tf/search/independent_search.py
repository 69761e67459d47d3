"""The loop of hypotheses that are never reordered: the base of `GreedySearch` and `Sampler`."""

import tensorflow as tf

from data_pipeline import constants
from rnnsearch_tf.search.search_helpers import (
    broadcast_mask,
    merged_state,
    next_word_alternatives,
    no_alternatives,
    restrict_log_probs,
    split_leading_dimension,
    updated_alternatives,
)
from rnnsearch_tf.search.search_strategy import SearchStrategy


class IndependentSearch(SearchStrategy):
    """A `SearchStrategy` whose `count` hypotheses per sentence each pick their own next token
    (`choose_ids`) and are never reordered, unlike `BeamSearch`'s; the subclasses say how many and how
    each token is picked."""

    def search_independently(self, initial_state, maximum_lengths, count, choose_ids, prefix_ids=None,
                             num_alternatives=0):
        """`count` hypotheses per sentence that are never reordered, each token picked by `choose_ids`.

        Each hypothesis keeps its row of the flattened `[batch * count]` state (`tiled_state`; the fixed
        entries keep one row per sentence, merged back after every step), so the loop records
        tokens, alignments and token log-probabilities only (in `tf.TensorArray`s of the maximum length, static for XLA). Inside a
        sentence's prefix the forced token replaces the one chosen; the alternatives come from the
        sentence's first hypothesis (all of them hold the same prefix there).

        Args:
            count: hypotheses per sentence.
            choose_ids: `fn(restricted_logits [batch * count, vocab], step) -> ids [batch * count]`;
                impossible tokens are at `LARGE_NEGATIVE` in the logits it gets.
            prefix_ids, num_alternatives: as `search`.

        Returns:
            the dict of `search`, `n = count`, sorted by score (stable).
        """
        batch_size, maximum_lengths, length_bound, prefix = self.prepare(
            initial_state, maximum_lengths, prefix_ids, num_alternatives
        )
        loop_state = self._independent_loop_state(initial_state, batch_size, count, length_bound, num_alternatives)

        def condition(loop_state):
            still_searching = tf.logical_not(tf.reduce_all(loop_state["finished"]))
            return tf.logical_and(loop_state["step"] < length_bound, still_searching)

        def body(loop_state):
            step, finished = loop_state["step"], loop_state["finished"]
            logits, new_state, alignment = self.symbols_to_logits_fn(loop_state["ids"], step, loop_state["state"])
            logits = tf.cast(logits, tf.float32)  # [batch * count, vocab]
            restricted = restrict_log_probs(
                split_leading_dimension(logits, batch_size, count), step, maximum_lengths, self.forbidden_ids,
                self.eos_id,
            )  # [batch, count, vocab]
            ids = choose_ids(tf.reshape(restricted, tf.shape(logits)), step)  # [batch * count]
            if prefix is not None:
                forced_ids = tf.repeat(prefix.forced_ids(step), count)  # [batch * count]
                ids = tf.where(forced_ids >= 0, forced_ids, ids)
            token_log_probs = tf.gather(logits, ids, batch_dims=1) - tf.reduce_logsumexp(
                logits, axis=-1
            )  # [batch * count]: log p of the chosen token, without normalising every token
            ids = tf.where(finished, constants.PAD_ID, ids)
            alignment = tf.cast(alignment, tf.float32)  # [batch * count, ...]
            alignment = tf.where(broadcast_mask(finished, alignment), tf.zeros_like(alignment), alignment)
            new_loop_state = dict(
                step=step + 1,
                ids=ids,
                log_probs=loop_state["log_probs"] + tf.where(finished, 0.0, token_log_probs),
                lengths=loop_state["lengths"] + tf.cast(tf.logical_not(finished), tf.int32),
                finished=finished | tf.equal(ids, self.eos_id),
                state=merged_state(loop_state["state"], new_state),
                tokens=loop_state["tokens"].write(step, ids),
                alignments=loop_state["alignments"].write(step, alignment),
                token_log_probs=loop_state["token_log_probs"].write(step, tf.where(finished, 0.0, token_log_probs)),
            )
            if num_alternatives:
                new_loop_state["alternatives"] = updated_alternatives(
                    loop_state["alternatives"],
                    prefix.is_first_free(step) & tf.logical_not(tf.reshape(finished, [batch_size, count])[:, 0]),
                    lambda: next_word_alternatives(
                        split_leading_dimension(logits, batch_size, count)[:, 0], num_alternatives, self.forbidden_ids
                    ),  # of each sentence's first hypothesis, [batch, vocab]
                )
            return [new_loop_state]

        final = tf.while_loop(condition, body, [loop_state], maximum_iterations=length_bound)[0]
        return self._sorted_by_score(final, batch_size, count)

    def _independent_loop_state(self, initial_state, batch_size, count, length_bound, num_alternatives):
        """The first loop state of `search_independently`: `count` rows per sentence at `<s>`."""
        flat_size = batch_size * count
        loop_state = dict(
            step=tf.constant(0),
            ids=tf.fill([flat_size], self.bos_id),
            log_probs=tf.zeros([flat_size]),
            lengths=tf.zeros([flat_size], tf.int32),
            finished=tf.zeros([flat_size], tf.bool),
            state=self.tiled_state(initial_state, batch_size, count),
            tokens=tf.TensorArray(tf.int32, size=length_bound),  # [max_length] of [batch * count]
            alignments=tf.TensorArray(tf.float32, size=length_bound),  # [max_length] of [batch * count, ...]
            token_log_probs=tf.TensorArray(tf.float32, size=length_bound),  # [max_length] of [batch * count]
        )
        if num_alternatives:
            loop_state["alternatives"] = no_alternatives(batch_size, num_alternatives)
        return loop_state

    def _sorted_by_score(self, final, batch_size, count):
        """The result dict of `search_independently` from its loop's final values."""
        ids = split_leading_dimension(
            tf.transpose(final["tokens"].stack()), batch_size, count
        )  # [max_length, batch * count] -> [batch, count, max_length]
        token_log_probs = split_leading_dimension(
            tf.transpose(final["token_log_probs"].stack()), batch_size, count
        )  # [max_length, batch * count] -> [batch, count, max_length]
        alignments = final["alignments"].stack()  # [max_length, batch * count, ...]
        rank = alignments.shape.rank
        alignments = split_leading_dimension(
            tf.transpose(alignments, [1, 0] + list(range(2, rank))), batch_size, count
        )  # [batch * count, max_length, ...] -> [batch, count, max_length, ...]
        lengths = tf.reshape(final["lengths"], [batch_size, count])  # [batch, count]
        log_probs = tf.reshape(final["log_probs"], [batch_size, count])  # [batch, count]
        scores = log_probs / self.penalty(lengths)
        order = tf.argsort(scores, axis=1, direction="DESCENDING", stable=True)  # [batch, count]
        result = dict(ids=ids, lengths=lengths, scores=scores, log_probs=log_probs, alignments=alignments,
                      token_log_probs=token_log_probs)
        result = {name: tf.gather(value, order, batch_dims=1) for name, value in result.items()}
        if "alternatives" in final:
            result["alternative_log_probs"], result["alternative_ids"] = final["alternatives"]
        return result
