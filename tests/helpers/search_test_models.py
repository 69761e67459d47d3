"""Fake `symbols_to_logits_fn`s for the search tests, each with an independent NumPy scorer.

Token ids follow `data_pipeline.constants`: 0 PAD, 1 BOS, 2 EOS, 3 UNK, then words from 4.
"""

import itertools

import numpy as np
import tensorflow as tf

from data_pipeline import constants


UNIFORM = [1.0] * 6
# Ids 4 and 5 are the words "a" and "b". Greedy takes "a" (0.56) then EOS (0.37): p = 0.2072, but
# "b EOS" has p = 0.40 * 0.90 = 0.36, and "a b EOS" 0.56 * 0.30 * 0.90 = 0.1512 is third.
GREEDY_IS_NOT_BEST = [
    UNIFORM,  # after PAD
    [0.01, 0.01, 0.01, 0.01, 0.56, 0.40],  # after BOS
    UNIFORM,  # after EOS
    UNIFORM,  # after UNK
    [0.01, 0.01, 0.37, 0.01, 0.30, 0.30],  # after "a"
    [0.01, 0.01, 0.90, 0.01, 0.03, 0.04],  # after "b"
]


def numpy_result(result):
    """A search result with NumPy values."""
    return {name: value.numpy() for name, value in result.items()}


def hypotheses(result, sentence):
    """The returned hypotheses of one sentence (a NumPy result) as lists of ids, EOS included."""
    return [
        list(ids[:length]) for ids, length in zip(result["ids"][sentence], result["lengths"][sentence])
    ]


def check_token_log_probs(model, result):
    """Every returned hypothesis's `token_log_probs` (a NumPy result of a search over a `HashModel`) are
    the model's log p(y_i | y_<i) of its tokens, 0 after EOS, and add up to its `log_probs`."""
    for sentence in range(result["ids"].shape[0]):
        for rank, ids in enumerate(hypotheses(result, sentence)):
            values = result["token_log_probs"][sentence, rank]
            np.testing.assert_allclose(values[: len(ids)], model.token_log_probs(sentence, ids), atol=1e-4)
            np.testing.assert_array_equal(values[len(ids) :], 0.0)
            if ids:  # an empty slot (fewer hypotheses than asked for) has log_probs -inf
                np.testing.assert_allclose(values.sum(), result["log_probs"][sentence, rank], atol=1e-4)


def log_softmax(logits):
    """NumPy float64 log-softmax over the last axis."""
    logits = np.asarray(logits, np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


class BigramModel:
    """Next-token probabilities depend only on the previous token: `probabilities[previous, next]`.

    Stateless (its state is `{}`); records `[step, previous id]` as its alignment (the per-step output
    that a search records with each token).
    """

    def __init__(self, probabilities):
        probabilities = np.asarray(probabilities, np.float64)
        self.log_probs = np.log(probabilities / probabilities.sum(axis=-1, keepdims=True))
        self.calls = 0  # steps run, counted when called eagerly

    def symbols_to_logits_fn(self, ids, step, state):
        self.calls += 1
        logits = tf.gather(tf.constant(self.log_probs, tf.float32), ids)  # [n, vocab]
        alignment = tf.stack(
            [tf.cast(tf.fill(tf.shape(ids), step), tf.float32), tf.cast(ids, tf.float32)], axis=1
        )  # [n, 2]
        return logits, state, alignment

    def sequence_log_prob(self, ids):
        """Log-probability of a token sequence (EOS included) starting after BOS."""
        previous = [constants.BOS_ID] + list(ids[:-1])
        return float(sum(self.log_probs[p, t] for p, t in zip(previous, ids)))

    def all_sequences(self, maximum_length, forbidden_ids=()):
        """Every sequence ending in EOS with at most `maximum_length` tokens, with its log-probability."""
        vocab_size = self.log_probs.shape[0]
        words = [t for t in range(vocab_size) if t != constants.EOS_ID and t not in forbidden_ids]
        for length in range(1, maximum_length + 1):
            for prefix in itertools.product(words, repeat=length - 1):
                ids = list(prefix) + [constants.EOS_ID]
                yield ids, self.sequence_log_prob(ids)


class HashModel:
    """A recurrent fake model: the state is a running hash of the prefix, and the logits depend on it.

    State `{"prefix_hash": int32 [n], "source": {"bias": float32 [n, vocab]}}`: the hash starts at a
    per-sentence value and is updated with every previous token, so hypotheses whose states are not
    reordered with their tokens get the wrong logits; `bias` is a per-sentence constant (like encoder
    annotations). Records `[step, previous id, prefix hash]` as its alignment.
    """

    def __init__(self, vocab_size=9, num_hashes=101, seed=0, eos_logit_shift=0.0):
        rng = np.random.default_rng(seed)
        self.table = rng.normal(scale=2.0, size=[num_hashes, vocab_size])
        self.table[:, [constants.PAD_ID, constants.BOS_ID]] -= 8.0  # rare, as in a trained model
        self.table[:, constants.EOS_ID] += eos_logit_shift
        self.num_hashes = num_hashes
        self.vocab_size = vocab_size

    def initial_state(self, batch_size, seed=1):
        rng = np.random.default_rng(seed)
        self.initial_hashes = rng.integers(0, self.num_hashes, size=[batch_size])
        self.biases = rng.normal(size=[batch_size, self.vocab_size])
        return {
            "prefix_hash": tf.constant(self.initial_hashes, tf.int32),
            "source": {"bias": tf.constant(self.biases, tf.float32)},
        }

    def _next_hash(self, prefix_hash, ids):
        return (prefix_hash * 31 + ids + 1) % self.num_hashes

    def symbols_to_logits_fn(self, ids, step, state):
        prefix_hash = self._next_hash(state["prefix_hash"], ids)  # [n]
        logits = tf.gather(tf.constant(self.table, tf.float32), prefix_hash) + state["source"]["bias"]
        alignment = tf.cast(
            tf.stack([tf.fill(tf.shape(ids), step), ids, prefix_hash], axis=1), tf.float32
        )  # [n, 3]
        return logits, {"prefix_hash": prefix_hash, "source": state["source"]}, alignment

    def sequence_log_prob(self, sentence, ids):
        """Log-probability of `ids` (EOS included) for sentence `sentence` of the last initial_state."""
        return float(sum(self.token_log_probs(sentence, ids)))

    def token_log_probs(self, sentence, ids):
        """log p(y_i | y_<i) of each of `ids` (EOS included) for sentence `sentence` of the last initial_state."""
        prefix_hash = int(self.initial_hashes[sentence])
        values = []
        previous = constants.BOS_ID
        for token in ids:
            prefix_hash = self._next_hash(prefix_hash, previous)
            values.append(log_softmax(self.table[prefix_hash] + self.biases[sentence])[token])
            previous = token
        return np.array(values)

    def alignments(self, sentence, ids):
        """The `[step, previous id, prefix hash]` alignments a correct search returns with `ids`."""
        prefix_hash = int(self.initial_hashes[sentence])
        records = []
        previous = constants.BOS_ID
        for step, token in enumerate(ids):
            prefix_hash = self._next_hash(prefix_hash, previous)
            records.append([step, previous, prefix_hash])
            previous = token
        return np.array(records, np.float64).reshape([-1, 3])
