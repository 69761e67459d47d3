"""A vocabulary shortlist for decoding: the target words a batch's translations may use."""

import hashlib

import numpy as np
import tensorflow as tf

from data_pipeline import constants
from data_pipeline.pair_reader import sha256
# K and N by default: measured on three Multi30k En->Fr models in docs/translating.md ("A vocabulary shortlist"):
# the largest BLEU loss of the two trained longest 0.15, 1.3-1.6x the whole vocabulary's speed (10, 300: up to 0.63).
PER_SOURCE_WORD = 30
FREQUENT_WORDS = 500

_RESERVED_IDS = np.arange(len(constants.RESERVED_TOKENS), dtype=np.int32)  # PAD, BOS, EOS, UNK


class Shortlist:
    """Per source word the target words most associated with it, plus the most frequent target words.

    As Marian's lexical shortlist, CTranslate2's vocabulary map and the candidate lists of Jean et al.
    2015: a batch is decoded over the sorted union of the reserved ids, `frequent` and the rows of
    `candidates` of its source words (`candidate_ids`), so the output layer computes `V'` logits instead
    of K_y (`EncoderDecoderModel.restricted_symbols_to_logits_fn`).

    The association is the Dice coefficient of sentence-level co-occurrence counts in the training data,
    2 c(s, t) / (c(s) + c(t)) (`build`): cheap (one pass, no alignment model), and it ranks a word t that
    appears in most sentences low, as it should, since such words are in `frequent` anyway.

    Args:
        candidates: int `[source_vocab_size, K]`, row s the K target ids most associated with source id s,
            best first, padded with `PAD_ID` where fewer co-occur (rows of the reserved ids: `PAD_ID`).
        frequent: int `[N]`, the N most frequent target ids.
        vocabularies: the `vocabulary_digest` of the codecs whose ids it holds (`rnnsearch shortlist` records it,
            `model_loader` refuses a shortlist of other vocabularies); None where not known (a file written before
            it was recorded).

    Example:
    >>> shortlist = Shortlist.from_file("models/rnnsearch50/shortlist.npz")
    >>> shortlist.candidate_ids(tf.constant([[17, 5, 2]]))  # int32 [V'], 0, 1, 2, 3 first
    """

    def __init__(self, candidates, frequent, vocabularies=None):
        self.candidates = np.asarray(candidates, np.int32)
        self.frequent = np.asarray(frequent, np.int32)
        self.vocabularies = vocabularies
        if self.candidates.ndim != 2 or self.frequent.ndim != 1:
            raise ValueError(
                f"a shortlist has candidates [source_vocab, K] and frequent [N], got shapes "
                f"{self.candidates.shape} and {self.frequent.shape}"
            )

    @property
    def per_source_word(self):
        return self.candidates.shape[1]

    @property
    def source_vocab_size(self):
        return self.candidates.shape[0]

    @property
    def description(self):
        """Its size in words, as reports name it: "K per source word, N frequent"."""
        return f"{self.per_source_word} per source word, {len(self.frequent)} frequent"

    @classmethod
    def build(cls, pairs, source_vocab_size, target_vocab_size, per_source_word=PER_SOURCE_WORD, frequent=FREQUENT_WORDS):
        """The shortlist of a training corpus.

        Args:
            pairs: iterable of `(source_ids, target_ids)`, int arrays of one sentence pair each (reserved
                ids, EOS among them, are ignored).
            source_vocab_size, target_vocab_size: K_x and K_y.
            per_source_word: K, the candidates kept per source word.
            frequent: N, the most frequent target words kept: ids 4 .. N + 3, since a target vocabulary
                lists its words by count after the reserved ids (`data_pipeline.Vocabulary`).

        Returns:
            the `Shortlist`; a target word ranks by Dice, then by id (the more frequent first).
        """
        reserved = len(_RESERVED_IDS)
        source_counts = np.zeros(source_vocab_size, np.int64)  # c(s): sentences holding s
        target_counts = np.zeros(target_vocab_size, np.int64)  # c(t)
        codes, counts = np.zeros(0, np.int64), np.zeros(0, np.int64)  # s * K_y + t -> c(s, t)
        chunk = []
        for source_ids, target_ids in pairs:
            source_words = np.unique(np.asarray(source_ids, np.int64))
            target_words = np.unique(np.asarray(target_ids, np.int64))
            source_words = source_words[source_words >= reserved]
            target_words = target_words[target_words >= reserved]
            source_counts[source_words] += 1
            target_counts[target_words] += 1
            chunk.append((source_words[:, None] * target_vocab_size + target_words[None, :]).ravel())
            if len(chunk) == 10000:
                codes, counts = _merged_counts(codes, counts, chunk)
                chunk = []
        codes, counts = _merged_counts(codes, counts, chunk)
        source_words, target_words = codes // target_vocab_size, codes % target_vocab_size
        dice = 2.0 * counts / (source_counts[source_words] + target_counts[target_words])
        order = np.lexsort((target_words, -dice, source_words))  # by source, best Dice first, then id
        source_words, target_words = source_words[order], target_words[order]
        first = np.searchsorted(source_words, source_words)  # where each source word's run starts
        rank = np.arange(len(source_words)) - first
        kept = rank < per_source_word
        candidates = np.full((source_vocab_size, per_source_word), constants.PAD_ID, np.int32)
        candidates[source_words[kept], rank[kept]] = target_words[kept]
        return cls(candidates, np.arange(reserved, min(reserved + frequent, target_vocab_size), dtype=np.int32))

    @classmethod
    def from_file(cls, path):
        """The shortlist `save` wrote."""
        with np.load(path) as arrays:
            vocabularies = str(arrays["vocabularies"]) if "vocabularies" in arrays else None
            return cls(arrays["candidates"], arrays["frequent"], vocabularies)

    def save(self, path):
        """Writes `candidates`, `frequent`, the parameters K (`per_source_word`) and N (`frequent_words`), and
        `vocabularies` where known."""
        known = {} if self.vocabularies is None else dict(vocabularies=np.str_(self.vocabularies))
        with open(path, "wb") as file:
            np.savez(
                file,
                candidates=self.candidates,
                frequent=self.frequent,
                per_source_word=np.int32(self.per_source_word),
                frequent_words=np.int32(len(self.frequent)),
                **known,
            )

    def candidate_ids(self, source_ids, extra_ids=None):
        """The target ids a batch is decoded over: int32 `[V']`, sorted and unique.

        The reserved ids 0-3 (so they keep their ids: position = id), `frequent`, `candidates` of every
        id in `source_ids` (int, any shape, padding included) and every id in `extra_ids` (int, any shape,
        e.g. the forced prefixes of `Translator.translate_prefix`). Core TensorFlow ops only.
        """
        parts = [
            tf.constant(_RESERVED_IDS),
            tf.constant(self.frequent),
            tf.reshape(tf.gather(tf.constant(self.candidates), tf.reshape(source_ids, [-1])), [-1]),  # [n * K]
        ]
        if extra_ids is not None:
            parts.append(tf.reshape(tf.cast(extra_ids, tf.int32), [-1]))
        unique_ids, _ = tf.unique(tf.concat(parts, axis=0))
        return tf.sort(unique_ids)  # [V']


def vocabulary_digest(source_codec, target_codec):
    """What identifies the vocabularies a shortlist's ids are of: a sha256 of the sha256s of the two `TextCodec`s'
    files (vocabularies, and SentencePiece models), source first."""
    files = [sha256(path) for codec in (source_codec, target_codec) for path in codec.files]
    return hashlib.sha256(" ".join(files).encode()).hexdigest()


def _merged_counts(codes, counts, chunk):
    """Adds the co-occurrence codes of `chunk` (list of int64 arrays) to the sorted `codes` and `counts`."""
    if not chunk:
        return codes, counts
    new_codes, new_counts = np.unique(np.concatenate(chunk), return_counts=True)
    all_codes = np.concatenate([codes, new_codes])
    merged, inverse = np.unique(all_codes, return_inverse=True)
    return merged, np.bincount(inverse, weights=np.concatenate([counts, new_counts]), minlength=len(merged)).astype(
        np.int64
    )
