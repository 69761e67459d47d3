"""TFRecord shards of given id pairs, as `DatasetBuilder` writes them, and readers of the batches made
from them, and the size of a checkpoint of their iterator; shared by the shard, data directory, input pipeline
and trainer tests."""

import glob
import json
import os

import numpy as np
import tensorflow as tf

from data_pipeline import pair_reader
from data_pipeline.constants import EOS_ID


def write_shards(folder, pairs, num_shards, metadata=False):
    """Writes `pairs` (id lists, EOS included) in contiguous blocks over shards, plus metadata.json."""
    bounds = np.linspace(0, len(pairs), num_shards + 1).astype(int)
    shards = []
    for index in range(num_shards):
        path = folder / f"train-{index:05d}-of-{num_shards:05d}.tfrecord.gz"
        with tf.io.TFRecordWriter(str(path), options="GZIP") as writer:
            for source, target in pairs[bounds[index] : bounds[index + 1]]:
                feature = {
                    "source_ids": tf.train.Feature(int64_list=tf.train.Int64List(value=source)),
                    "target_ids": tf.train.Feature(int64_list=tf.train.Int64List(value=target)),
                }
                writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
        records = int(bounds[index + 1] - bounds[index])
        shards.append({"file": path.name, "records": records, "sha256": pair_reader.sha256(path)})
    if metadata:
        (folder / "metadata.json").write_text(json.dumps({"splits": {"train": {"shards": shards}}}))
    return str(folder / "train-*.tfrecord.gz")


def checkpoint_bytes(path):
    """Bytes of the data files of the checkpoint `path` (what `tf.train.Checkpoint.write` returned)."""
    return sum(os.path.getsize(name) for name in glob.glob(f"{path}.data-*"))


def batches_of(dataset):
    return [{name: ids.numpy().tolist() for name, ids in batch.items()} for batch in dataset]


def batches_per_input_pipeline(input_fn, pipelines=2):
    """The batches each of `pipelines` input pipelines reads from `input_fn(InputContext)`, one replica each."""
    return [
        batches_of(input_fn(tf.distribute.InputContext(
            num_input_pipelines=pipelines, input_pipeline_id=pipeline, num_replicas_in_sync=pipelines)))
        for pipeline in range(pipelines)
    ]


def pairs_of(batches):
    """The unpadded (source, target) tuples of a list of batches."""
    return [
        (tuple(s[: s.index(EOS_ID) + 1]), tuple(t[: t.index(EOS_ID) + 1]))
        for batch in batches
        for s, t in zip(batch["source_ids"], batch["target_ids"])
    ]
