"""The base of the search strategies: their shared options, set-up and the loop of independent hypotheses."""

import tensorflow as tf

from data_pipeline import constants
from rnnsearch_tf.search.search_helpers import (
    batch_size_and_maximum_lengths,
    broadcast_mask,
    check_search_options,
    fixed_entries,
    length_penalty,
    merged_state,
    next_word_alternatives,
    no_alternatives,
    repeat_rows,
    restrict_log_probs,
    split_leading_dimension,
    updated_alternatives,
)
from rnnsearch_tf.search.target_prefix import TargetPrefix


class SearchStrategy:
    """What `BeamSearch`, `GreedySearch` and `Sampler` take and return.

    Args:
        symbols_to_logits_fn: `fn(ids, step, state) -> (logits, new_state, alignment)`: `ids` int32
            `[batch * hypotheses]` the previous token of each hypothesis (BOS at step 0), `step` scalar
            int32, `state` a nested structure of tensors with leading dimension `batch * hypotheses`;
            `logits` `[batch * hypotheses, vocab]` unnormalised, `new_state` the state after the step,
            `alignment` float `[batch * hypotheses, ...]` of static rank: the model's per-step output,
            whatever it is, recorded with each token (α_i for RNNsearch; `tf.zeros([n, 0])` to record
            nothing).
            Fixed entries: when `state` is a dict, the entries whose names `new_state` (a dict) leaves
            out are fixed (`search_helpers.fixed_entries`): the step function reads them but never
            changes them, and the search keeps them as given, one row per sentence (`[batch, ...]`)
            whatever the hypotheses per sentence, never reordered. The step function then gets the
            changing entries with a sentence's hypotheses in adjacent rows (`[batch * hypotheses, ...]`)
            and the fixed ones with one row per sentence (`Decoder.step` reads a sentence's annotations
            once for all of its hypotheses). An entry returned in `new_state`, even unchanged, is
            changing: each hypothesis has its own row of it. Every call returns the same entries.
        length_normalization: `"none"`, `"length"` or `"gnmt"`, see `search_helpers.length_penalty`.
        length_penalty_alpha: the GNMT exponent.
        forbidden_ids: token ids that never appear, e.g. `(constants.UNK_ID,)` for "No UNK".
        eos_id: end-of-sentence id; must not be forbidden.
        bos_id: the "previous word" fed at step 0.

    Call arguments (`search`; `__call__` without the last two):
        initial_state: nested structure of tensors `[batch, ...]` (`model.encode(source_ids)`): its
            changing entries are tiled to every hypothesis, its fixed ones kept one row per sentence.
        maximum_lengths: int, or int `[batch]` tensor: most tokens per hypothesis, EOS included
            (e.g. `2 * source_length + 10`); EOS is the only possible token at the last one.
        prefix_ids: optional int32 `[batch, prefix_len]`, target ids right-padded with `PAD_ID`: every
            hypothesis of sentence b starts with its prefix, the only possible token at each of its
            first steps, forbidden or not (`TargetPrefix`); the search is free after it. A sentence's
            maximum length is raised to its prefix length + 1 where it is smaller. Rows of padding only
            give the unconstrained search's hypotheses and scores, bit for bit.
        num_alternatives: int k: also return, at each sentence's first free position (step 0 without a
            prefix), the k most probable next tokens of its best hypothesis
            (`search_helpers.next_word_alternatives`).

    Returns:
        dict, a sentence's hypotheses sorted best-first, `max_length` the largest maximum length
        (static when `maximum_lengths` is an int; with a prefix, when `prefix_len` is static too, and
        then at least `prefix_len + 1`):
        - `ids`: int32 `[batch, n, max_length]`, EOS included, then PAD.
        - `lengths`: int32 `[batch, n]`, EOS included.
        - `scores`: float32 `[batch, n]`, `log_probs / length_penalty(lengths)`.
        - `log_probs`: float32 `[batch, n]`, sum of the token log-probabilities.
        - `alignments`: float32 `[batch, n, max_length, ...]`, the model's per-step output that came
          with each token (α for RNNsearch), zeros after EOS.
        - with `num_alternatives` k > 0: `alternative_ids` int32 `[batch, k]` and
          `alternative_log_probs` float32 `[batch, k]`, log p(y_{P+1} | prefix, x) of each sentence's k
          most probable next tokens after its P-token prefix, best first (`-inf` and `PAD_ID` where
          fewer are possible, or where a forced EOS ended every hypothesis inside the prefix).

    Example (interactive translation: the user typed the first two words):
    >>> result = search.search(model.encode(source_ids), maximum_lengths, prefix_ids=[[7, 12]], num_alternatives=10)
    >>> result["ids"][0, 0, :2]  # [7, 12]
    >>> result["alternative_ids"][0]  # the 10 words the model finds most probable after them
    """

    def __init__(
        self,
        symbols_to_logits_fn,
        length_normalization="none",
        length_penalty_alpha=0.6,
        forbidden_ids=(),
        eos_id=constants.EOS_ID,
        bos_id=constants.BOS_ID,
    ):
        check_search_options(length_normalization, forbidden_ids, eos_id)
        self.symbols_to_logits_fn = symbols_to_logits_fn
        self.length_normalization = length_normalization
        self.length_penalty_alpha = length_penalty_alpha
        self.forbidden_ids = tuple(forbidden_ids)
        self.eos_id = eos_id
        self.bos_id = bos_id

    def __call__(self, initial_state, maximum_lengths):
        return self.search(initial_state, maximum_lengths)

    def search(self, initial_state, maximum_lengths, prefix_ids=None, num_alternatives=0):
        raise NotImplementedError

    def penalty(self, lengths):
        """The divisor of a hypothesis's log-probability (`search_helpers.length_penalty`)."""
        return length_penalty(lengths, self.length_normalization, self.length_penalty_alpha)

    def prepare(self, initial_state, maximum_lengths, prefix_ids=None, num_alternatives=0):
        """The set-up of every search.

        Returns:
            `(batch_size, maximum_lengths, length_bound, prefix)`: see `batch_size_and_maximum_lengths`
            (the lengths raised to hold a prefix, `TargetPrefix.with_room`); the `TargetPrefix` of
            `prefix_ids` (an empty one when only alternatives are asked for), or None.
        """
        if num_alternatives < 0:
            raise ValueError(f"num_alternatives must be at least 0, got {num_alternatives}")
        batch_size, maximum_lengths, length_bound = batch_size_and_maximum_lengths(initial_state, maximum_lengths)
        prefix = None
        if prefix_ids is not None:
            prefix = TargetPrefix(prefix_ids)
        elif num_alternatives:
            prefix = TargetPrefix.empty(batch_size)
        if prefix is not None:
            maximum_lengths, length_bound = prefix.with_room(maximum_lengths, length_bound)
        return batch_size, maximum_lengths, length_bound, prefix

    def tiled_state(self, initial_state, batch_size, count):
        """The state of `count` hypotheses per sentence: the changing entries of `initial_state` repeated,
        `[batch * count, ...]` with a sentence's hypotheses adjacent, the fixed ones as given `[batch, ...]`.

        Which entries are fixed is learnt from a probe, the step function at step 0 on one row per sentence
        (`search_helpers.fixed_entries`), whose outputs are not used: inside a `tf.function` it is pruned
        from the graph and never runs. With one hypothesis per sentence nothing needs repeating: the state
        is `initial_state` itself.
        """
        if count == 1:
            return initial_state
        _, new_state, _ = self.symbols_to_logits_fn(tf.fill([batch_size], self.bos_id), tf.constant(0), initial_state)
        fixed = fixed_entries(initial_state, new_state)
        if not fixed:
            return repeat_rows(initial_state, count)  # [batch * count, ...]
        changing = {name: value for name, value in initial_state.items() if name not in fixed}
        return dict(repeat_rows(changing, count), **fixed)  # [batch * count, ...] and [batch, ...]

    def search_independently(self, initial_state, maximum_lengths, count, choose_ids, prefix_ids=None,
                             num_alternatives=0):
        """`count` hypotheses per sentence that are never reordered, each token picked by `choose_ids`.

        Each hypothesis keeps its row of the flattened `[batch * count]` state (`tiled_state`; the fixed
        entries keep one row per sentence, merged back after every step), so the loop records
        tokens and alignments only (in `tf.TensorArray`s of the maximum length, static for XLA). Inside a
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
        )
        if num_alternatives:
            loop_state["alternatives"] = no_alternatives(batch_size, num_alternatives)
        return loop_state

    def _sorted_by_score(self, final, batch_size, count):
        """The result dict of `search_independently` from its loop's final values."""
        ids = split_leading_dimension(
            tf.transpose(final["tokens"].stack()), batch_size, count
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
        result = dict(ids=ids, lengths=lengths, scores=scores, log_probs=log_probs, alignments=alignments)
        result = {name: tf.gather(value, order, batch_dims=1) for name, value in result.items()}
        if "alternatives" in final:
            result["alternative_log_probs"], result["alternative_ids"] = final["alternatives"]
        return result
