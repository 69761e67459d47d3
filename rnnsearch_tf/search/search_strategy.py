"""The base of the search strategies: their shared options and set-up."""

import tensorflow as tf

from data_pipeline import constants
from rnnsearch_tf.search.search_helpers import (
    batch_size_and_maximum_lengths,
    check_search_options,
    fixed_entries,
    length_penalty,
    repeat_rows,
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
        - `token_log_probs`: float32 `[batch, n, max_length]`, log p(y_i | y_<i, x) of each token under
          the step function's logits (temperature 1; an ensemble's: its mean of log-probabilities, as
          `log_softmax` of its logits), EOS included, 0 after; recorded in the search, not re-scored.
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
