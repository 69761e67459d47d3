"""Greedy search over any recurrent step function, the base of `Sampler`.

After OpenNMT-tf `opennmt/utils/decoding.py` (`GreedySearch`, `BestSampler`). Hypotheses are never
reordered: each one keeps its row of the flattened `[batch * hypotheses]` state, so the loop only
records tokens and step outputs (in `tf.TensorArray`s of the maximum length, so an int maximum length
keeps every shape static for XLA) and stacks them once at the end.
"""

import tensorflow as tf

from rnnsearch_tf import constants
from rnnsearch_tf.beam_search import (
    batch_size_and_maximum_lengths,
    broadcast_mask,
    check_search_options,
    length_penalty,
    restrict_log_probs,
    split_leading_dimension,
    with_fixed_state,
)


class GreedySearch:
    """Greedy search: the most probable next token at every step, until EOS.

    Takes the same step function, call arguments and returns the same dict as `BeamSearch`, with
    one hypothesis per sentence; equals `BeamSearch(beam_size=1)` with no length normalisation.
    Forbidden tokens are never chosen, and EOS is the only possible token at a sentence's maximum
    length.

    Args:
        symbols_to_logits_fn: `fn(ids, step, state) -> (logits, new_state, step_output)`, as in
            `BeamSearch` with `beam = 1`.
        length_normalization: `"none"`, `"length"` or `"gnmt"`: how the returned `scores` are computed
            (see `beam_search.length_penalty`); it does not change the choice of tokens.
        length_penalty_alpha: the GNMT exponent.
        forbidden_ids: token ids that never appear, e.g. `(constants.UNK_ID,)`.
        eos_id: end-of-sentence id; must not be forbidden.
        bos_id: the "previous word" fed at step 0.

    Call arguments:
        initial_state: nested structure of tensors `[batch, ...]`.
        fixed_state: optional dict of tensors `[batch, ...]` the step function only reads
            (`beam_search.with_fixed_state`).
        maximum_lengths: int, or int `[batch]` tensor: most tokens per hypothesis, EOS included.

    Returns:
        dict, `max_length` the largest maximum length (static when `maximum_lengths` is an int):
        - `ids`: int32 `[batch, 1, max_length]`, EOS included, then PAD.
        - `lengths`: int32 `[batch, 1]`.
        - `scores`: float32 `[batch, 1]`, `log_probs / length_penalty(lengths)`.
        - `log_probs`: float32 `[batch, 1]`, sum of the token log-probabilities.
        - `step_outputs`: float32 `[batch, 1, max_length, ...]`, zeros after EOS.

    Example:
    >>> result = GreedySearch(model.symbols_to_logits_fn)(initial_state, 2 * source_lengths + 10)
    >>> result["ids"][:, 0]  # [batch, max_length]
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

    @property
    def hypotheses_per_sentence(self):
        """How many independent hypotheses each sentence gets."""
        return 1

    def choose_ids(self, logits, step):
        """The next token of every hypothesis.

        Args:
            logits: float32 `[batch * hypotheses, vocab]`, unnormalised (log-probabilities up to a
                constant per row), impossible tokens at `LARGE_NEGATIVE`.
            step: scalar int32.

        Returns:
            int32 `[batch * hypotheses]`.
        """
        del step  # the greedy choice does not depend on it
        return tf.argmax(logits, axis=-1, output_type=tf.int32)

    def __call__(self, initial_state, maximum_lengths):
        return self.search(initial_state, maximum_lengths)

    def search(self, initial_state, maximum_lengths, fixed_state=None):
        """The call, with state entries the step function only reads given once (`fixed_state`)."""
        batch_size, maximum_lengths, length_bound = batch_size_and_maximum_lengths(
            initial_state, maximum_lengths
        )
        count = self.hypotheses_per_sentence
        symbols_to_logits_fn = with_fixed_state(self.symbols_to_logits_fn, fixed_state, count)
        flat_size = batch_size * count
        state = tf.nest.map_structure(
            lambda t: tf.repeat(t, count, axis=0), initial_state
        )  # [batch * count, ...], the copies of a sentence adjacent
        loop_vars = dict(
            step=tf.constant(0),
            ids=tf.fill([flat_size], self.bos_id),
            log_probs=tf.zeros([flat_size]),
            lengths=tf.zeros([flat_size], tf.int32),
            finished=tf.zeros([flat_size], tf.bool),
            state=state,
            tokens=tf.TensorArray(tf.int32, size=length_bound),
            step_outputs=tf.TensorArray(tf.float32, size=length_bound),
        )

        def condition(v):
            return tf.logical_and(v["step"] < length_bound, tf.logical_not(tf.reduce_all(v["finished"])))

        def body(v):
            step = v["step"]
            logits, new_state, step_output = symbols_to_logits_fn(v["ids"], step, v["state"])
            logits = tf.cast(logits, tf.float32)  # [batch * count, vocab]
            vocab_size = tf.shape(logits)[-1]
            restricted = tf.reshape(
                restrict_log_probs(
                    tf.reshape(logits, [batch_size, count, vocab_size]),  # [batch, count, vocab]
                    step,
                    maximum_lengths,
                    self.forbidden_ids,
                    self.eos_id,
                ),
                [flat_size, vocab_size],
            )  # [batch * count, vocab]
            finished = v["finished"]
            ids = self.choose_ids(restricted, step)  # [batch * count]
            token_log_probs = tf.gather(logits, ids, batch_dims=1) - tf.reduce_logsumexp(
                logits, axis=-1
            )  # [batch * count]: log p of the chosen token, without normalising every token
            ids = tf.where(finished, constants.PAD_ID, ids)
            step_output = tf.cast(step_output, tf.float32)  # [batch * count, ...]
            step_output = tf.where(
                broadcast_mask(finished, step_output), tf.zeros_like(step_output), step_output
            )  # zeros after EOS
            new_values = dict(
                step=step + 1,
                ids=ids,
                log_probs=v["log_probs"] + tf.where(finished, 0.0, token_log_probs),
                lengths=v["lengths"] + tf.cast(tf.logical_not(finished), tf.int32),
                finished=finished | tf.equal(ids, self.eos_id),
                state=new_state,
                tokens=v["tokens"].write(step, ids),
                step_outputs=v["step_outputs"].write(step, step_output),
            )
            return [new_values]

        final = tf.while_loop(condition, body, [loop_vars], maximum_iterations=length_bound)[0]
        ids = split_leading_dimension(
            tf.transpose(final["tokens"].stack()), batch_size, count
        )  # [max_length, batch * count] -> [batch, count, max_length]
        step_outputs = final["step_outputs"].stack()  # [max_length, batch * count, ...]
        rank = step_outputs.shape.rank
        step_outputs = split_leading_dimension(
            tf.transpose(step_outputs, [1, 0] + list(range(2, rank))), batch_size, count
        )  # [batch * count, max_length, ...] -> [batch, count, max_length, ...]
        lengths = tf.reshape(final["lengths"], [batch_size, count])  # [batch, count]
        log_probs = tf.reshape(final["log_probs"], [batch_size, count])  # [batch, count]
        scores = log_probs / length_penalty(lengths, self.length_normalization, self.length_penalty_alpha)
        order = tf.argsort(scores, axis=1, direction="DESCENDING", stable=True)  # [batch, count]
        return {
            "ids": tf.gather(ids, order, batch_dims=1),
            "lengths": tf.gather(lengths, order, batch_dims=1),
            "scores": tf.gather(scores, order, batch_dims=1),
            "log_probs": tf.gather(log_probs, order, batch_dims=1),
            "step_outputs": tf.gather(step_outputs, order, batch_dims=1),
        }
