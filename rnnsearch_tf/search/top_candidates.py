"""The k best one-token extensions of a beam's hypotheses, found without normalising or sorting the
vocabulary: the candidate selection of `BeamSearch` (Model Garden's `_grow_alive_seq` top-k)."""

import tensorflow as tf

from rnnsearch_tf.search.search_helpers import LARGE_NEGATIVE, impossible_tokens


def _chunk_size(vocab_size):
    """Vocabulary entries per chunk in `top_candidates`: a divisor of a static `vocab_size` near 64 if
    there is one (no padding copy), else 64."""
    if isinstance(vocab_size, int):
        divisors = [size for size in range(32, 129) if vocab_size % size == 0]
        if divisors:
            return min(divisors, key=lambda size: abs(size - 64))
    return 64


def top_candidates(logits, alive_log_probs, k, is_last_step, forbidden_ids, eos_id, forced_ids=None):
    """The k best one-token extensions of each sentence's hypotheses, in `top_k` order.

    Equals `tf.math.top_k(tf.reshape(alive_log_probs[:, :, None] + restrict_log_probs(log_softmax(
    logits)), [batch, beam * vocab]), k)` for every candidate better than `IMPOSSIBLE` (impossible ones
    are returned with the same value, possibly for other tokens), without writing or sorting a
    `[batch * beam, vocab]` tensor: a k-th best candidate lies in one of the k chunks of the vocabulary
    with the best maxima, so only the log-sum-exp and the chunk maxima read every logit, and the final
    top-k reads k chunks per sentence (docs/performance.md, "In the code", has the gain).

    Args:
        logits: float32 `[batch * beam, vocab]`, the hypotheses of a sentence adjacent.
        alive_log_probs: float32 `[batch, beam]`.
        k: candidates kept per sentence, at most `beam * vocab`.
        is_last_step: bool `[batch]`: EOS is the only possible token of the sentence.
        forbidden_ids: tuple of token ids that are never possible.
        eos_id: the end-of-sentence id, never forbidden.
        forced_ids: optional int32 `[batch]`, the token every hypothesis of a sentence must take (a
            forbidden one too), or -1 where the sentence is free (`TargetPrefix.forced_ids`). A forced
            sentence's candidates are its hypotheses extended by that token, best first, then
            `LARGE_NEGATIVE` ones; their log-probabilities are computed as a free candidate's would be.

    Returns:
        `(log_probs, hypotheses, ids)`: float32, int32, int32 `[batch, k]`, best first: the candidate's
        log-probability, the hypothesis it extends and its token.
    """
    batch_size = tf.shape(alive_log_probs)[0]
    beam = alive_log_probs.shape[1] or tf.shape(alive_log_probs)[1]
    vocab_size = logits.shape[-1] or tf.shape(logits)[-1]
    size = _chunk_size(vocab_size)
    chunks = (vocab_size + size - 1) // size
    padded = tf.pad(logits, [[0, 0], [0, chunks * size - vocab_size]], constant_values=float("-inf"))
    chunked = tf.reshape(padded, [batch_size, beam * chunks, size])  # [batch, beam * chunks, size]
    chunk_maxima = tf.reduce_max(chunked, axis=-1)  # [batch, beam * chunks]
    log_normalizer = _log_normalizer(padded, chunk_maxima, batch_size, beam, chunks, size)  # [batch, beam]

    def restricted_log_probs(values, ids, hypotheses):
        """values `[batch, n, size]` of hypotheses `[batch, n]` and tokens `ids` `[batch or 1, n, size]`."""
        log_probs = values - tf.gather(log_normalizer, hypotheses, batch_dims=1)[:, :, None]
        impossible = impossible_tokens(ids, is_last_step, forbidden_ids, eos_id)  # [batch, n, size]
        return tf.where(impossible, LARGE_NEGATIVE, log_probs)  # [batch, n, size]

    # Chunk maxima of the restricted log-probabilities. Only the few chunks holding a forbidden token,
    # or EOS at a sentence's last step, can differ from the maxima of the raw logits: those are recomputed.
    hypotheses = tf.range(beam * chunks) // chunks  # [beam * chunks]
    chunk_starts = (tf.range(beam * chunks) % chunks) * size  # [beam * chunks]
    maxima = chunk_maxima - tf.repeat(log_normalizer, chunks, axis=1)  # [batch, beam * chunks]
    maxima = tf.where(is_last_step[:, None], LARGE_NEGATIVE, maxima)  # only EOS may follow: in a special chunk
    maxima = _with_special_chunks(maxima, chunked, restricted_log_probs, forbidden_ids + (eos_id,), beam, chunks,
                                  size)  # [batch, beam * chunks]
    chunk_scores = tf.repeat(alive_log_probs, chunks, axis=1) + maxima  # [batch, beam * chunks]
    chunk_count = min(k, beam * chunks) if isinstance(beam * chunks, int) else tf.minimum(k, beam * chunks)
    _, best_chunks = tf.math.top_k(chunk_scores, k=chunk_count)  # [batch, chunk_count]
    best_chunks = tf.sort(best_chunks, axis=1)  # flat-index order, so ties break as in one top_k
    best_hypotheses = tf.gather(hypotheses, best_chunks)  # [batch, chunk_count]
    ids = tf.gather(chunk_starts, best_chunks)[:, :, None] + tf.range(size)[None, None, :]  # [batch, chunk_count, size]
    candidates = tf.gather(alive_log_probs, best_hypotheses, batch_dims=1)[:, :, None] + restricted_log_probs(
        tf.gather(chunked, best_chunks, batch_dims=1), ids, best_hypotheses
    )  # [batch, chunk_count, size]
    candidates = tf.where(ids < vocab_size, candidates, float("-inf"))  # padding is never a candidate
    top_log_probs, positions = tf.math.top_k(tf.reshape(candidates, [batch_size, -1]), k=k)  # [batch, k]
    top_hypotheses = tf.gather(best_hypotheses, positions // size, batch_dims=1)  # [batch, k]
    top_ids = tf.gather(tf.reshape(ids, [batch_size, -1]), positions, batch_dims=1)  # [batch, k]
    if forced_ids is None:
        return top_log_probs, top_hypotheses, top_ids
    forced = _forced_candidates(logits, log_normalizer, alive_log_probs, k, forced_ids)
    is_forced = forced_ids[:, None] >= 0  # [batch, 1]
    return tuple(
        tf.where(is_forced, forced_value, free_value)
        for forced_value, free_value in zip(forced, (top_log_probs, top_hypotheses, top_ids))
    )


def _log_normalizer(padded, chunk_maxima, batch_size, beam, chunks, size):
    """log Σ_k exp(logit_k) of each hypothesis `[batch, beam]`, from the padded logits `[batch * beam, chunks *
    size]` and their chunk maxima `[batch, beam * chunks]`.

    log Σ_k exp(logit_k) = m - log max_k softmax_k, m the row maximum: the largest probability is
    exp(m - log Σ_k exp(logit_k)) ≥ 1 / vocab, and it lies in the chunk of the largest logit. One fused
    softmax and a max over one chunk instead of a subtraction, an exp and a sum over the row.
    """
    row_chunk_maxima = tf.reshape(chunk_maxima, [batch_size * beam, chunks])  # [batch * beam, chunks]
    row_maxima = tf.reduce_max(row_chunk_maxima, axis=-1)  # [batch * beam]
    top_chunks = tf.argmax(row_chunk_maxima, axis=-1, output_type=tf.int32)  # [batch * beam]
    probabilities = tf.reshape(tf.nn.softmax(padded), [batch_size * beam, chunks, size])  # padding: 0
    largest_probabilities = tf.reduce_max(tf.gather(probabilities, top_chunks, batch_dims=1), axis=-1)  # [batch * beam]
    return tf.reshape(row_maxima - tf.math.log(largest_probabilities), [batch_size, beam])  # [batch, beam]


def _with_special_chunks(maxima, chunked, restricted_log_probs, special_tokens, beam, chunks, size):
    """`maxima` `[batch, beam * chunks]` with the chunks that hold a special token (forbidden, or EOS)
    recomputed from the restricted log-probabilities of `chunked` `[batch, beam * chunks, size]`."""
    batch_size = tf.shape(maxima)[0]
    special = sorted({token // size for token in special_tokens})
    special_chunks = tf.reshape(
        tf.range(beam)[:, None] * chunks + tf.constant(special, tf.int32)[None, :], [-1]
    )  # [beam * specials]
    chunk_starts = (special_chunks % chunks) * size  # [beam * specials]
    special_ids = chunk_starts[:, None] + tf.range(size)[None, :]  # [beam * specials, size]
    special_maxima = tf.reduce_max(
        restricted_log_probs(
            tf.gather(chunked, special_chunks, axis=1),
            special_ids[None],
            tf.tile((special_chunks // chunks)[None], [batch_size, 1]),
        ),
        axis=-1,
    )  # [batch, beam * specials]
    return tf.transpose(
        tf.tensor_scatter_nd_update(tf.transpose(maxima), special_chunks[:, None], tf.transpose(special_maxima))
    )  # [batch, beam * chunks]


def _forced_candidates(logits, log_normalizer, alive_log_probs, k, forced_ids):
    """`(log_probs, hypotheses, ids)` `[batch, k]`: each hypothesis extended by its sentence's forced token,
    best first, padded with `LARGE_NEGATIVE` candidates; `forced_ids` -1 (free) reads token 0."""
    batch_size = tf.shape(alive_log_probs)[0]
    beam = alive_log_probs.shape[1] or tf.shape(alive_log_probs)[1]
    row_ids = tf.repeat(tf.maximum(forced_ids, 0), beam)  # [batch * beam]
    values = tf.reshape(tf.gather(logits, row_ids[:, None], batch_dims=1), [batch_size, beam])  # [batch, beam]
    log_probs = alive_log_probs + (values - log_normalizer)  # [batch, beam], the sum of a free candidate
    count = min(k, beam) if isinstance(beam, int) else tf.minimum(k, beam)
    best_log_probs, hypotheses = tf.math.top_k(log_probs, k=count)  # [batch, count]
    best_log_probs = tf.pad(best_log_probs, [[0, 0], [0, k - count]], constant_values=LARGE_NEGATIVE)  # [batch, k]
    hypotheses = tf.pad(hypotheses, [[0, 0], [0, k - count]])  # [batch, k]
    return best_log_probs, hypotheses, tf.broadcast_to(forced_ids[:, None], tf.shape(hypotheses))
