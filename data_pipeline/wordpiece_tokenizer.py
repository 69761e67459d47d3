"""Subword option beyond the paper: Moses tokens split into WordPieces, so no word is unknown."""

import tensorflow as tf
import tensorflow_text as text
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib

from data_pipeline.moses_tokenizer import MosesTokenizer
from data_pipeline.vocabulary import Vocabulary
from data_pipeline import constants

SUFFIX_INDICATOR = "##"


class WordPieceTokenizer(tf.Module):
    """Moses tokenization, then tensorflow-text's `FastWordpieceTokenizer` on each word.

    A word continues with pieces marked "##" ("unbelievable" -> "un", "##believ", "##able"). Learned
    with tensorflow-text's WordPiece vocabulary builder from the training word counts, the vocabulary
    holds every character seen in training, so `<unk>` is left only for unseen characters. The
    vocabulary file has the `Vocabulary` format (reserved tokens first, pieces by descending count), so
    `Vocabulary(vocabulary_file)` maps the pieces to ids in-graph.

    Args:
        language: "en" or "fr".
        vocabulary_file: WordPiece vocabulary written by `WordPieceTokenizer.learn`.
        name: module name.

    Example:
    >>> WordPieceTokenizer("en", "wordpiece.en.tsv").tokenize(tf.constant(["Unbelievable!"]))
    <tf.RaggedTensor [[b'Un', b'##believ', b'##able', b'!']]>
    """

    def __init__(self, language, vocabulary_file, name=None):
        super().__init__(name=name)
        self.language = language
        self.vocabulary_file = str(vocabulary_file)
        self._moses = MosesTokenizer(language)
        with tf.io.gfile.GFile(self.vocabulary_file) as lines:
            pieces = [line.split("\t")[0] for line in lines]
        self._wordpiece = text.FastWordpieceTokenizer(
            vocab=pieces,
            suffix_indicator=SUFFIX_INDICATOR,
            token_out_type=tf.string,
            unknown_token=constants.UNK_TOKEN,
            no_pretokenization=True,
        )

    def tokenize(self, strings):
        """tf.string `[batch]` sentences -> tf.RaggedTensor of tf.string `[batch, None]` word pieces."""
        words = self._moses.tokenize(strings)  # [batch, words]
        return self._wordpiece.tokenize(words).merge_dims(1, 2)  # [batch, words, pieces] -> [batch, pieces]

    def detokenize(self, pieces):
        """tf.RaggedTensor of tf.string `[batch, None]` pieces -> tf.string `[batch]` sentences."""
        joined = tf.strings.reduce_join(pieces, axis=-1, separator=" ")  # [batch]
        words = tf.strings.split(tf.strings.regex_replace(joined, " " + SUFFIX_INDICATOR, ""))  # [batch, words]
        return self._moses.detokenize(words)

    @staticmethod
    def learn(word_counts, vocabulary_size, path, num_sentences):
        """Learns a WordPiece vocabulary from Moses-token counts and writes it as a vocabulary file.

        Args:
            word_counts: mapping word (str or UTF-8 bytes) -> running count in the training side.
            vocabulary_size: target number of pieces (tensorflow-text's builder may return fewer).
            path: vocabulary file to write.
            num_sentences: sentences counted (the count of `</s>`).

        Returns:
            dict with `size` (ids in the file) and `coverage` (share of running pieces in the vocabulary).
        """
        words = {
            (word.decode("utf-8") if isinstance(word, bytes) else word): count for word, count in word_counts.items()
        }
        pieces = wordpiece_tokenizer_learner_lib.learn(
            list(words.items()), vocabulary_size, reserved_tokens=list(constants.RESERVED_TOKENS)
        )
        pieces = [piece for piece in pieces if piece not in constants.RESERVED_TOKENS]
        splitter = text.FastWordpieceTokenizer(
            vocab=list(constants.RESERVED_TOKENS) + pieces,
            suffix_indicator=SUFFIX_INDICATOR,
            token_out_type=tf.string,
            unknown_token=constants.UNK_TOKEN,
            no_pretokenization=True,
        )
        word_list = list(words)
        split_words = splitter.tokenize(tf.constant(word_list, tf.string)).to_list() if word_list else []
        piece_counts = dict.fromkeys(pieces, 0)
        piece_counts[constants.UNK_TOKEN] = 0  # running pieces outside the vocabulary, for the coverage
        for word, word_pieces in zip(word_list, split_words):
            for piece in word_pieces:
                piece = piece.decode("utf-8")
                piece_counts[piece if piece in piece_counts else constants.UNK_TOKEN] += words[word]
        return Vocabulary.write(path, piece_counts, len(pieces), num_sentences)

    def split_words(self, words):
        """tf.string `[num_words]` Moses tokens -> tf.RaggedTensor of tf.string `[num_words, None]` pieces."""
        return self._wordpiece.tokenize(words)
