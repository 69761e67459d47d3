"""A vocabulary of the most frequent tokens: its file format, and in-graph token <-> id lookup."""

import collections

import tensorflow as tf

from data_pipeline import constants


class Vocabulary(tf.Module):
    """Maps tokens to ids and back inside the TensorFlow graph, from a vocabulary file.

    The file holds one `token<TAB>count` per line; line i is id i. It starts with the reserved tokens
    `<pad>`, `<s>`, `</s>`, `<unk>` (ids 0-3, `data_pipeline.constants`), then the kept tokens: the most
    frequent tokens of the training side, by descending count, ties broken by the token string
    (Bahdanau et al. 2014, Section 4.1: "a shortlist of 30,000 most frequent words in each language").
    Every other token maps to `<unk>`. The lookup tables are tracked by this `tf.Module`, so a serving
    module that holds a `Vocabulary` exports the file as a SavedModel asset.

    Args:
        vocabulary_file: path of the vocabulary file.
        name: module name.

    Example:
    >>> vocabulary = Vocabulary("vocab.en.tsv")
    >>> vocabulary.lookup(tf.ragged.constant([["the", "zyzzyva"]]))
    <tf.RaggedTensor [[4, 3]]>
    """

    def __init__(self, vocabulary_file, name=None):
        super().__init__(name=name)
        self.vocabulary_file = str(vocabulary_file)
        head = tuple(token for token, _ in self.read_entries(self.vocabulary_file)[: len(constants.RESERVED_TOKENS)])
        if head != constants.RESERVED_TOKENS:
            raise ValueError(
                f"{self.vocabulary_file}: must start with {constants.RESERVED_TOKENS}, starts with {tuple(head)}"
            )
        self._token_to_id = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(
                self.vocabulary_file,
                key_dtype=tf.string,
                key_index=0,
                value_dtype=tf.int64,
                value_index=tf.lookup.TextFileIndex.LINE_NUMBER,
                delimiter="\t",
            ),
            default_value=constants.UNK_ID,
        )
        self._id_to_token = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(
                self.vocabulary_file,
                key_dtype=tf.int64,
                key_index=tf.lookup.TextFileIndex.LINE_NUMBER,
                value_dtype=tf.string,
                value_index=0,
                delimiter="\t",
            ),
            default_value=constants.UNK_TOKEN,
        )

    @property
    def size(self):
        """Number of ids, reserved tokens included."""
        return int(self._token_to_id.size())

    def lookup(self, tokens):
        """Token strings -> int32 ids; tokens outside the vocabulary -> `UNK_ID`.

        Args:
            tokens: tf.string, any shape, dense or ragged (e.g. `[batch, None]`).

        Returns:
            tf.int32 ids with the shape of `tokens`.
        """
        return tf.ragged.map_flat_values(lambda flat: tf.cast(self._token_to_id.lookup(flat), tf.int32), tokens)

    def tokens(self, ids):
        """Ids -> token strings; ids outside the vocabulary -> `<unk>`.

        Args:
            ids: integer ids, any shape, dense or ragged (e.g. `[batch, None]`).

        Returns:
            tf.string tokens with the shape of `ids`.
        """
        return tf.ragged.map_flat_values(lambda flat: self._id_to_token.lookup(tf.cast(flat, tf.int64)), ids)

    @staticmethod
    def read_entries(path):
        """The `(token, count)` of each line of a vocabulary file, in id order: the one reader of the format.

        ValueError names the file and line of a line that is not `token<TAB>count`.
        """
        with tf.io.gfile.GFile(str(path)) as stream:
            lines = stream.read().replace("\r\n", "\n").split("\n")  # whole: its line iterator costs ~1 µs a line more
        if lines[-1] == "":
            lines.pop()  # the last line's newline
        entries = []
        for number, line in enumerate(lines, 1):
            token, separator, count = line.rpartition("\t")
            if not separator or not count.isdigit():
                raise ValueError(f"{path}, line {number}: not token<TAB>count: {line.rstrip()[:80]!r}")
            entries.append((token, int(count)))
        return entries

    @staticmethod
    def write_entries(path, entries):
        """Writes `(token, count)` pairs as a vocabulary file, one per line, in id order."""
        with tf.io.gfile.GFile(str(path), "w") as out:
            for token, count in entries:
                out.write(f"{token}\t{count}\n")

    @staticmethod
    def write_pieces(path, pieces, token_counts, num_sentences):
        """Writes the vocabulary file of a subword model's `pieces` (in its id order, reserved ones first).

        Args:
            path: file to write.
            pieces: the model's pieces, id i at index i.
            token_counts: mapping piece (str, or UTF-8 bytes) -> running occurrences in the training side.
            num_sentences: sentences counted (the count of `</s>`).

        Returns:
            dict with `size` and `coverage` (share of running pieces in the model: 1 with byte fallback).
        """
        counts = collections.Counter({
            (token.decode("utf-8") if isinstance(token, bytes) else token): count
            for token, count in token_counts.items()
        })
        if tuple(pieces[: len(constants.RESERVED_TOKENS)]) != constants.RESERVED_TOKENS:
            raise ValueError(f"a subword model's first pieces must be {constants.RESERVED_TOKENS}, got {pieces[:4]}")
        known = set(pieces)
        running = sum(counts.values())
        outside = sum(count for token, count in counts.items() if token not in known)
        counts[constants.EOS_TOKEN], counts[constants.UNK_TOKEN] = num_sentences, outside
        Vocabulary.write_entries(path, [(piece, counts.get(piece, 0)) for piece in pieces])
        return {"size": len(pieces), "coverage": (running - outside) / running if running else 1.0}

    @staticmethod
    def write(path, token_counts, vocabulary_size, num_sentences):
        """Writes the vocabulary file of the `vocabulary_size` most frequent tokens.

        Args:
            path: file to write.
            token_counts: mapping token (str, or UTF-8 bytes) -> running occurrences in the training side.
            vocabulary_size: number of ordinary tokens kept (the reserved four come on top).
            num_sentences: sentences counted; each ends with `</s>`, which is its count.

        Returns:
            dict with `size` (ids in the file) and `coverage` (share of running tokens kept).
        """
        decoded = (
            (token.decode("utf-8") if isinstance(token, bytes) else token, count)
            for token, count in token_counts.items()
        )
        ranked = sorted(decoded, key=lambda item: (-item[1], item[0]))
        kept = [(token, count) for token, count in ranked if token not in constants.RESERVED_TOKENS]
        kept = kept[:vocabulary_size]
        running = sum(token_counts.values())
        covered = sum(count for _, count in kept)
        reserved = collections.OrderedDict.fromkeys(constants.RESERVED_TOKENS, 0)
        reserved[constants.EOS_TOKEN] = num_sentences
        reserved[constants.UNK_TOKEN] = running - covered
        Vocabulary.write_entries(path, list(reserved.items()) + kept)
        return {"size": len(reserved) + len(kept), "coverage": covered / running if running else 1.0}
