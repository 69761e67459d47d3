"""The evaluation input pipeline: the dev/test shards in corpus order, padded batches."""

import tensorflow as tf

from data_pipeline import shard_files


class EvaluationInput:
    """Builds the evaluation `tf.data.Dataset`: no shuffling, pairs in the order of the corpus.

    Each element is {"source_ids": int32 [batch, src_len], "target_ids": int32 [batch, tgt_len]},
    right-padded with `PAD_ID` to the batch's longest sentence; one pass over the data.

    Args:
        file_pattern: glob of the split's shards, e.g. "/data/m30k/test-*.tfrecord.gz".
        batch_size: global batch size; each replica gets its share.
        verify_shards: check shard checksums against `metadata.json` first (`CorruptShardError`).

    Example:
    >>> for batch in EvaluationInput("/tmp/m30k/test-*.tfrecord.gz")(): ...
    """

    def __init__(self, file_pattern, batch_size=80, verify_shards=True):
        self.file_pattern = file_pattern
        self.batch_size = batch_size
        self.verify_shards = verify_shards

    def __call__(self, input_context=None):
        """The dataset of this input pipeline (`input_context`: `tf.distribute.InputContext` or None)."""
        paths = shard_files.list_shards(self.file_pattern)
        if self.verify_shards:
            shard_files.verify_shards(paths)
        batch_size = input_context.get_per_replica_batch_size(self.batch_size) if input_context else self.batch_size
        dataset = shard_files.read_examples(paths, input_context, sequential=True)
        return dataset.padded_batch(batch_size).prefetch(tf.data.AUTOTUNE)
