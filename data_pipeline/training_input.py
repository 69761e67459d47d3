"""The training input pipeline: shuffled, length-sorted, bucketed batches from TFRecord shards."""

import tensorflow as tf

from data_pipeline import shard_files
from data_pipeline.constants import EOS_ID

SIDES = ("source", "target")


def _longest_side(pair):
    """max(source length, target length) of one pair, `</s>` included."""
    return tf.maximum(tf.size(pair["source_ids"]), tf.size(pair["target_ids"]))


class TrainingInput:
    """Builds the training `tf.data.Dataset`; call it, or hand it to `distribute_datasets_from_function`.

    Bahdanau et al. 2014, Section 4.1 / Appendix B.2 (after GroundHog's `HomogenousData`): the pairs
    are shuffled (seeded), then taken `sort_window * batch_size` at a time (20 * 80 = 1600), sorted by
    the longer side of each pair (stable), and cut into `sort_window` minibatches of `batch_size`, each
    right-padded with `PAD_ID` only to its own longest sentence. Batches come out in sorted order
    within a window, or in an order drawn for each window with `shuffle_batches` (so that a window of a whole
    epoch pads as little as OpenNMT-py's corpus-wide sort without ordering the epoch short to long). With
    `max_tokens`, batches are instead formed by `bucket_by_sequence_length` so
    that batch size * padded length stays at most `max_tokens` per side.

    Each element is {"source_ids": int32 [batch, src_len], "target_ids": int32 [batch, tgt_len]};
    both sequences end with `EOS_ID`. Every pair appears exactly once per epoch (the last batch of an
    epoch may be smaller). The same seed gives the same batches (without subword sampling, below), and the
    iterator is checkpointable (`tf.train.Checkpoint(iterator=iterator)`) so training resumes mid-epoch.

    With `subword_sampling_alpha` > 0 (a SentencePiece data directory), each pair is cut into pieces anew
    every time it is read, after shuffling and before batching (Kudo 2018's subword regularisation;
    `TextCodec.segmentation_sampler`): its ids are detokenized to the text, a segmentation is sampled, `</s>`
    is appended. A side that comes out longer than `max_sequence_length` keeps the shard's segmentation, so
    no pair is cut or dropped and every pair still appears once per epoch. The sampling is SentencePiece's,
    not seeded: the same seed gives the same pairs in each window of `sort_window` batches, but not the same
    pieces (nor, as lengths differ, the same order inside a window); a run resumed mid-epoch reads the
    pairs it would have read, the pieces sampled afresh.

    Args:
        file_pattern: glob of the train shards, e.g. "/data/m30k/train-*.tfrecord.gz".
        batch_size: global minibatch size (the paper: 80); each replica gets its share.
        sort_window: minibatches sorted together (the paper: 20).
        shuffle_batches: a window's minibatches in a seeded random order, not shortest first.
        seed: shuffling seed.
        epochs: passes over the data; None repeats forever.
        shuffle_buffer: pairs in the shuffle buffer (the shards were shuffled once at build time).
        pairs: the number of pairs in the shards, when known (`DataDir.records`): the buffer is cut to it.
            A buffer at least as large as the data gives the same batches whatever its size, while a
            checkpoint of the iterator writes every slot of it (docs/performance.md, "In the code").
        max_tokens: if set, token-count batching: the global budget of tokens per side per batch.
        bucket_width: length step between token-count buckets.
        max_sequence_length: longest sequence, `</s>` included (the build's max_length + 1); sizes the
            last token-count bucket.
        verify_shards: check shard checksums against `metadata.json` first (`CorruptShardError`).
        subword_sampling_alpha: 0 reads the shards' ids as they are; > 0 samples segmentations (unigram:
            the smoothing alpha; BPE: the merge dropout probability).
        subword_codecs: {"source": TextCodec, "target": TextCodec} of the data (SentencePiece ones);
            needed when `subword_sampling_alpha` > 0.

    Example:
    >>> training_input = TrainingInput("/tmp/m30k/train-*.tfrecord.gz", seed=1)
    >>> dataset = strategy.distribute_datasets_from_function(training_input)
    """

    def __init__(
        self,
        file_pattern,
        batch_size=80,
        sort_window=20,
        shuffle_batches=False,
        seed=1234,
        epochs=None,
        shuffle_buffer=100_000,
        max_tokens=None,
        bucket_width=8,
        max_sequence_length=51,
        verify_shards=True,
        pairs=None,
        subword_sampling_alpha=0.0,
        subword_codecs=None,
    ):
        self.file_pattern = file_pattern
        self.batch_size = batch_size
        self.sort_window = sort_window
        self.shuffle_batches = shuffle_batches
        self.seed = seed
        self.epochs = epochs
        self.shuffle_buffer = shuffle_buffer if pairs is None else max(1, min(shuffle_buffer, pairs))
        self.max_tokens = max_tokens
        self.bucket_width = bucket_width
        self.max_sequence_length = max_sequence_length
        self.verify_shards = verify_shards
        self.subword_sampling_alpha = subword_sampling_alpha
        self.subword_codecs = subword_codecs
        self._samplers = None
        if subword_sampling_alpha:
            if not subword_codecs:
                raise ValueError("subword_sampling_alpha > 0 needs the data's subword_codecs")
            self._samplers = {side: subword_codecs[side].segmentation_sampler(subword_sampling_alpha) for side in SIDES}

    def __call__(self, input_context=None):
        """The dataset of this input pipeline.

        Args:
            input_context: `tf.distribute.InputContext` from `distribute_datasets_from_function`, or
                None: one pipeline, one replica.

        Returns:
            `tf.data.Dataset` of per-replica batches.
        """
        paths = shard_files.list_shards(self.file_pattern)
        if self.verify_shards:
            shard_files.verify_shards(paths)
        replicas = input_context.num_replicas_in_sync if input_context else 1
        dataset = shard_files.read_examples(paths, input_context)
        dataset = dataset.shuffle(self.shuffle_buffer, seed=self.seed, reshuffle_each_iteration=True)
        if self._samplers:
            dataset = dataset.map(self._sampled_segmentation, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
        if self.max_tokens:
            dataset = dataset.apply(self._token_count_batches(self.max_tokens // replicas))
        else:
            batch_size = input_context.get_per_replica_batch_size(self.batch_size) if input_context else self.batch_size
            dataset = dataset.apply(self._sorted_window_batches(batch_size))
        return dataset.repeat(self.epochs).prefetch(tf.data.AUTOTUNE)

    def _sampled_segmentation(self, pair):
        """One pair {name: int32 [length], `</s>` last} -> the same texts in sampled pieces, `</s>` last; a side
        longer than `max_sequence_length` once sampled keeps the shard's ids."""
        sampled_pair = {}
        for side in SIDES:
            ids = pair[f"{side}_ids"]  # [length]
            sampled = tf.concat([self._samplers[side](ids[:-1]), [EOS_ID]], axis=0)  # [sampled length]
            fits = tf.size(sampled) <= self.max_sequence_length
            sampled_pair[f"{side}_ids"] = tf.cond(fits, lambda sampled=sampled: sampled, lambda ids=ids: ids)
        return sampled_pair

    def _sorted_window_batches(self, batch_size):
        """Dataset transform: windows of `sort_window * batch_size` pairs -> sorted, padded minibatches."""

        def sort_by_length(window):  # values: RaggedTensor [window_pairs, None]
            lengths = tf.maximum(window["source_ids"].row_lengths(), window["target_ids"].row_lengths())
            order = tf.argsort(lengths, stable=True)  # [window_pairs]
            return {name: tf.gather(ids, order) for name, ids in window.items()}

        def cut_into_batches(index, window):  # values: RaggedTensor [window_pairs, None], sorted
            starts = tf.range(0, window["source_ids"].nrows(), batch_size)  # [sort_window] (fewer at the end)
            if self.shuffle_batches:  # the order drawn from the seed and the window's place in the epoch
                seed = tf.stack([tf.constant(self.seed, tf.int64), index])
                starts = tf.random.experimental.stateless_shuffle(starts, seed)
            return tf.data.Dataset.from_tensor_slices(starts).map(
                lambda start: {name: ids[start : start + batch_size].to_tensor() for name, ids in window.items()}
            )  # each: int32 [batch_size, longest in this batch]

        def transform(dataset):
            return (
                dataset.ragged_batch(self.sort_window * batch_size)
                .map(sort_by_length, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
                .enumerate()
                .flat_map(cut_into_batches)
            )

        return transform

    def _token_count_batches(self, max_tokens):
        """Dataset transform: buckets of similar length, batch size * bucket's longest <= max_tokens."""
        boundaries = list(range(self.bucket_width + 1, self.max_sequence_length + 1, self.bucket_width))
        longest = [boundary - 1 for boundary in boundaries] + [self.max_sequence_length]
        return lambda dataset: dataset.bucket_by_sequence_length(
            _longest_side,
            bucket_boundaries=boundaries,
            bucket_batch_sizes=[max(1, max_tokens // length) for length in longest],
        )
