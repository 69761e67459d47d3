"""The rows of a running beam search: sentences that join and leave it between steps (`BeamSearch.start`,
`advance`, `finish`; iteration-level batching, as a server that decodes requests as they come needs).

A running search is the dict of `BeamSearch`'s loop state with one row per sentence in every entry but
`state` (the changing model state, `beam` rows per sentence, a sentence's rows adjacent), and with
per-sentence values where the loop has batch-wide ones: `step` and `maximum_lengths` int32 `[sentences]`,
and the history of the steps as tensors, `tokens` and `parents` int32 `[sentences, max_length, beam]` and
`alignments` float32 `[sentences, max_length, beam, ...]`, written at each sentence's own step.
"""

import tensorflow as tf


def recorded(history, step, values):
    """`history` `[sentences, max_length, ...]` with each sentence's `values` `[sentences, ...]` written at
    its own `step` (int32 `[sentences]`)."""
    positions = tf.stack([tf.range(tf.shape(step)[0]), step], axis=1)  # [sentences, 2]
    return tf.tensor_scatter_nd_update(history, positions, values)


def first_history(values, max_length):
    """A history of `max_length` steps `[sentences, max_length, ...]` from the first step's `values`
    `[sentences, ...]`, zeros after it."""
    padding = [[0, 0], [0, max_length - 1]] + [[0, 0]] * (values.shape.rank - 1)
    return tf.pad(values[:, None], padding)


def sentence_rows(running, sentences, beam_size):
    """The running search of the sentences at positions `sentences` (int `[k]`) only, in that order."""
    hypotheses = tf.reshape(sentences[:, None] * beam_size + tf.range(beam_size)[None, :], [-1])  # [k * beam]
    return {
        name: tf.nest.map_structure(lambda t: tf.gather(t, hypotheses if name == "state" else sentences), value)
        for name, value in running.items()
    }


def joined(running, other):
    """Two running searches as one, `running`'s sentences first.

    Entries whose trailing dimensions differ (the histories' length, a fixed state's source length) are
    padded at the end with zeros (False) to the larger: a step function must treat zero padding of its
    fixed state as absent, as `Decoder.step` does with the source mask (α is 0 there).
    """

    def join(first, second):
        shape = tf.maximum(tf.shape(first)[1:], tf.shape(second)[1:])  # [rank - 1]

        def padded(tensor):
            missing = shape - tf.shape(tensor)[1:]  # [rank - 1]
            padding = tf.concat([[[0, 0]], tf.stack([tf.zeros_like(missing), missing], axis=1)], axis=0)
            return tf.pad(tensor, padding)  # [rows, *shape]

        return tf.concat([padded(first), padded(second)], axis=0)

    return tf.nest.map_structure(join, running, other)
