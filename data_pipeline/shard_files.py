"""Finding, checking and parsing the TFRecord shards written by `DatasetBuilder`."""

import json
import pathlib

import tensorflow as tf

from data_pipeline import pair_reader
from data_pipeline.constants import METADATA_FILE
from data_pipeline.corrupt_shard_error import CorruptShardError

_FEATURES = {
    "source_ids": tf.io.VarLenFeature(tf.int64),
    "target_ids": tf.io.VarLenFeature(tf.int64),
}


def list_shards(file_pattern):
    """The shard paths matching `file_pattern`, sorted; raises FileNotFoundError when there are none."""
    paths = sorted(tf.io.gfile.glob(str(file_pattern)))
    if not paths:
        raise FileNotFoundError(f"no TFRecord shards match {file_pattern}")
    return paths


def verify_shards(paths):
    """Checks each shard's sha256 against the `metadata.json` beside it.

    Shards in a folder without `metadata.json`, or not listed in it, are not checked.

    Raises:
        CorruptShardError: naming the first shard whose bytes differ from what the build wrote.
    """
    recorded = {}
    for folder in sorted({pathlib.Path(path).parent for path in paths}):
        if (folder / METADATA_FILE).is_file():
            metadata = json.loads((folder / METADATA_FILE).read_text())
            for split in metadata["splits"].values():
                recorded.update({str(folder / shard["file"]): shard["sha256"] for shard in split["shards"]})
    for path in paths:
        expected = recorded.get(str(pathlib.Path(path)))
        if expected is not None and pair_reader.sha256(path) != expected:
            raise CorruptShardError(
                f"corrupt TFRecord shard {path}: its sha256 differs from the one in "
                f"{pathlib.Path(path).parent / METADATA_FILE}; rebuild it with `rnnsearch build-data`"
            )


def parse_example(serialized):
    """One serialized `tf.train.Example` -> {"source_ids": int32 [src_len], "target_ids": int32 [tgt_len]}."""
    features = tf.io.parse_single_example(serialized, _FEATURES)
    return {name: tf.cast(tf.sparse.to_dense(ids), tf.int32) for name, ids in features.items()}


def read_examples(paths, input_context=None, sequential=False):
    """Parsed pairs of `paths`; with several input pipelines, this pipeline's share.

    Shards are divided among pipelines when there are enough of them, pairs otherwise.

    Args:
        paths: shard paths, in reading order.
        input_context: `tf.distribute.InputContext`, or None for a single pipeline.
        sequential: read shard after shard (corpus order) instead of interleaving 4 shards at a time.

    Returns:
        `tf.data.Dataset` of {"source_ids": int32 [None], "target_ids": int32 [None]}.
    """
    pipelines = input_context.num_input_pipelines if input_context else 1
    pipeline = input_context.input_pipeline_id if input_context else 0
    shard_by_file = pipelines > 1 and len(paths) >= pipelines
    if shard_by_file:
        paths = paths[pipeline::pipelines]
    dataset = tf.data.Dataset.from_tensor_slices(paths).interleave(
        lambda path: tf.data.TFRecordDataset(path, compression_type="GZIP"),
        cycle_length=1 if sequential else min(len(paths), 4),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=True,
    )
    if pipelines > 1 and not shard_by_file:
        dataset = dataset.shard(pipelines, pipeline)
    return dataset.map(parse_example, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
