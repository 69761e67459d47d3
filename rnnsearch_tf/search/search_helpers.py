"""What the search strategies share: impossible-token masks, length penalties, fixed state entries, shapes,
and the next-word alternatives offered after a forced target prefix."""

import tensorflow as tf

from data_pipeline import constants

# Log-probability of an impossible hypothesis. Finite (as in Model Garden) so that sums and length
# normalisation never produce NaN; anything below `IMPOSSIBLE` counts as impossible.
LARGE_NEGATIVE = -1e9
IMPOSSIBLE = LARGE_NEGATIVE / 2

LENGTH_NORMALIZATIONS = ("none", "length", "gnmt")


def length_penalty(lengths, length_normalization="none", length_penalty_alpha=0.6):
    """The divisor that turns a hypothesis log-probability into its ranking score.

    Args:
        lengths: int or float tensor of any shape: hypothesis lengths in tokens, EOS included.
        length_normalization: `"none"` (divisor 1), `"length"` (divisor = length) or `"gnmt"`
            (divisor `((5 + length) / 6) ** length_penalty_alpha`, Wu et al. 2016, Eq. 14).
        length_penalty_alpha: the GNMT exponent; 0 gives `"none"`, 1 a softened `"length"`.

    Returns:
        float32 tensor shaped like `lengths`.
    """
    lengths = tf.cast(lengths, tf.float32)
    if length_normalization == "none":
        return tf.ones_like(lengths)
    if length_normalization == "length":
        return lengths
    if length_normalization == "gnmt":
        return tf.pow((5.0 + lengths) / 6.0, length_penalty_alpha)
    raise ValueError(
        f"length_normalization must be one of {LENGTH_NORMALIZATIONS}, got {length_normalization!r}"
    )


def restrict_log_probs(log_probs, step, maximum_lengths, forbidden_ids, eos_id):
    """Makes forbidden tokens impossible, and EOS the only possible token at a sentence's last step.

    The remaining log-probabilities are left as the model gave them (not renormalised), so the
    returned `log_probs` of a search are the model's own.

    Args:
        log_probs: float32 `[batch, hypotheses, vocab]` log-probabilities of the next token (or logits).
        step: scalar int32, 0 at the first token.
        maximum_lengths: int32 `[batch]`, the most tokens (EOS included) of a sentence's hypotheses.
        forbidden_ids: tuple of token ids that never appear (e.g. `(UNK_ID,)`).
        eos_id: the end-of-sentence id.

    Returns:
        float32 `[batch, hypotheses, vocab]`.
    """
    impossible = impossible_tokens(
        tf.range(tf.shape(log_probs)[-1])[None, None, :], step + 1 >= maximum_lengths, forbidden_ids, eos_id
    )  # [batch, 1, vocab]
    return tf.where(impossible, LARGE_NEGATIVE, log_probs)


def impossible_tokens(token_ids, is_last_step, forbidden_ids, eos_id):
    """bool: the forbidden tokens, and every token but EOS where `is_last_step`.

    int `token_ids` `[batch or 1, ...]` and bool `is_last_step` `[batch]` -> `[batch, ...]`: only the
    tokens asked about are tested (a search asks about a few chunks of the vocabulary, not all of it).
    """
    forbidden = tf.constant(tuple(forbidden_ids) + (-1,), tf.int32)  # [forbidden + 1]
    is_forbidden = tf.reduce_any(tf.equal(token_ids[..., None], forbidden), axis=-1)  # like token_ids
    is_last_step = tf.reshape(is_last_step, [-1] + [1] * (token_ids.shape.rank - 1))  # [batch, 1, ...]
    return tf.logical_or(is_forbidden, tf.logical_and(is_last_step, tf.not_equal(token_ids, eos_id)))


def next_word_alternatives(logits, k, forbidden_ids):
    """The k most probable next tokens of each row of `logits`, with their log-probabilities.

    What a user is offered after a forced prefix (`TargetPrefix`): the model's own log p (not renormalised
    without the forbidden tokens, as the search scores them), forbidden tokens left out, EOS included.

    Args:
        logits: float32 `[rows, vocab]`, unnormalised.
        k: int, tokens returned per row (more than the vocabulary holds is allowed).
        forbidden_ids: tuple of token ids never returned.

    Returns:
        `(log_probs, ids)`: float32 and int32 `[rows, k]`, best first; `-inf` and `PAD_ID` where fewer
        than k tokens are possible.
    """
    log_probs = tf.nn.log_softmax(logits, axis=-1)  # [rows, vocab]
    impossible = impossible_tokens(
        tf.range(tf.shape(logits)[-1])[None, :], tf.constant([False]), forbidden_ids, constants.EOS_ID
    )  # [1, vocab]
    log_probs = tf.where(impossible, float("-inf"), log_probs)
    padded = tf.pad(log_probs, [[0, 0], [0, k]], constant_values=float("-inf"))  # [rows, vocab + k]
    top_log_probs, ids = tf.math.top_k(padded, k=k)  # [rows, k]
    possible = top_log_probs > IMPOSSIBLE  # [rows, k]
    return tf.where(possible, top_log_probs, float("-inf")), tf.where(possible, ids, constants.PAD_ID)


def no_alternatives(batch_size, k):
    """`(log_probs, ids)` `[batch, k]` before any sentence reaches its first free position: `-inf`, `PAD_ID`."""
    return tf.fill([batch_size, k], float("-inf")), tf.fill([batch_size, k], constants.PAD_ID)


def updated_alternatives(alternatives, at_first_free, compute):
    """The alternatives of the sentences at their first free position replaced by `compute()`'s.

    Args:
        alternatives: `(log_probs, ids)` `[batch, k]` so far.
        at_first_free: bool `[batch]` (`TargetPrefix.is_first_free`).
        compute: `fn() -> (log_probs, ids)` `[batch, k]` (`next_word_alternatives` of each sentence's
            best hypothesis), run only at a step where some sentence is at its first free position.

    Returns:
        `(log_probs, ids)` `[batch, k]`.
    """

    def replaced():
        return tuple(tf.where(at_first_free[:, None], new, old) for new, old in zip(compute(), alternatives))

    return tf.cond(tf.reduce_any(at_first_free), replaced, lambda: tuple(alternatives))


def check_search_options(length_normalization, forbidden_ids, eos_id):
    """Raises ValueError for options no search strategy accepts."""
    if length_normalization not in LENGTH_NORMALIZATIONS:
        raise ValueError(
            f"length_normalization must be one of {LENGTH_NORMALIZATIONS}, got {length_normalization!r}"
        )
    if eos_id in forbidden_ids:
        raise ValueError(f"eos_id={eos_id} cannot be forbidden")


def repeat_rows(structure, copies):
    """Every tensor of a nested `structure` `[batch, ...]` with each row `copies` times, a sentence's copies
    adjacent: `[batch * copies, ...]`."""
    return tf.nest.map_structure(lambda t: tf.repeat(t, copies, axis=0), structure)


def fixed_entries(state, new_state):
    """The entries of a search's `state` that the step function reads but never changes.

    The rule: they are the entries of a dict `state` whose names the step function's `new_state` (a dict)
    leaves out. An entry returned in `new_state`, even unchanged, is changing. A state or `new_state` that
    is not a dict has no fixed entries.

    Args:
        state: the state a step function was called with (nested structure of tensors).
        new_state: the state it returned.

    Returns:
        dict of the fixed entries of `state` (empty when there are none).
    """
    if not isinstance(state, dict) or not isinstance(new_state, dict):
        return {}
    return {name: value for name, value in state.items() if name not in new_state}


def merged_state(state, new_state):
    """The state after a step: `new_state`, with the fixed entries of a dict `state` it leaves out
    (`fixed_entries`) kept as they are."""
    if not isinstance(state, dict) or not isinstance(new_state, dict):
        return new_state
    return dict(state, **new_state)


def batch_size_and_maximum_lengths(initial_state, maximum_lengths):
    """Reads the batch size and per-sentence maximum lengths of a search call.

    Args:
        initial_state: nested structure of tensors with leading dimension `batch`.
        maximum_lengths: a Python int (same for every sentence) or an int `[batch]` tensor.

    Returns:
        `(batch_size, maximum_lengths, length_bound)`: a scalar int32 tensor, int32 `[batch]`, and the
        largest maximum length (a Python int when `maximum_lengths` is one, so buffers stay static).
    """
    if isinstance(maximum_lengths, int):
        leaves = tf.nest.flatten(initial_state)
        if not leaves:
            raise ValueError(
                "with an int maximum_lengths the batch size is read from initial_state, which is empty; "
                "pass maximum_lengths as a [batch] tensor"
            )
        if maximum_lengths < 1:
            raise ValueError(f"maximum_lengths must be at least 1, got {maximum_lengths}")
        batch_size = tf.shape(leaves[0])[0]
        return batch_size, tf.fill([batch_size], maximum_lengths), maximum_lengths
    maximum_lengths = tf.cast(tf.convert_to_tensor(maximum_lengths), tf.int32)
    if maximum_lengths.shape.rank != 1:
        raise ValueError(
            f"maximum_lengths must be an int or a [batch] tensor, got shape {maximum_lengths.shape}"
        )
    return tf.shape(maximum_lengths)[0], maximum_lengths, tf.reduce_max(maximum_lengths)


def split_leading_dimension(tensor, batch_size, hypotheses):
    """Reshapes `[batch * hypotheses, ...]` to `[batch, hypotheses, ...]`, keeping known trailing dims."""
    shape = tf.concat([[batch_size, hypotheses], tf.shape(tensor)[1:]], axis=0)
    split = tf.reshape(tensor, shape)  # [batch, hypotheses, ...]
    split.set_shape(tf.TensorShape([None, None]).concatenate(tensor.shape[1:]))
    return split


def broadcast_mask(mask, tensor):
    """Reshapes a mask of the leading dimensions of `tensor` (e.g. `[batch, hypotheses]`) to broadcast
    against it (e.g. `[batch, hypotheses, ...]`)."""
    ones = tf.ones([tf.rank(tensor) - tf.rank(mask)], tf.int32)
    return tf.reshape(mask, tf.concat([tf.shape(mask), ones], axis=0))  # [batch, hypotheses, 1, ...]
