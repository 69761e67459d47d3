"""data_pipeline/shard_files.py: list_shards, verify_shards against metadata.json, parse_example and
read_examples (corpus order, round-robin interleaving, the share of each input pipeline) on real shards."""

import collections
import json

import pytest
import tensorflow as tf

from data_pipeline import CorruptShardError
from data_pipeline import shard_files
from data_pipeline.constants import EOS_ID
from helpers.shard_test_data import write_shards


def _pairs(dataset):
    return [(tuple(example["source_ids"].numpy()), tuple(example["target_ids"].numpy())) for example in dataset]


@pytest.fixture
def six_pairs(tmp_path):
    """Pair i: source [10 + i] * (i + 1) + EOS, target [20 + i, EOS]; two per shard over three shards."""
    pairs = [([10 + i] * (i + 1) + [EOS_ID], [20 + i, EOS_ID]) for i in range(6)]
    pattern = write_shards(tmp_path, pairs, num_shards=3, metadata=True)
    return shard_files.list_shards(pattern), [(tuple(s), tuple(t)) for s, t in pairs]


def test_list_shards_sorts_and_names_a_pattern_without_match(six_pairs, tmp_path):
    paths, _ = six_pairs
    assert paths == [str(tmp_path / f"train-{index:05d}-of-00003.tfrecord.gz") for index in range(3)]
    with pytest.raises(FileNotFoundError, match=rf"no TFRecord shards match {tmp_path}/dev-"):
        shard_files.list_shards(tmp_path / "dev-*.tfrecord.gz")


def test_parse_example_gives_int32_ids(six_pairs):
    paths, _ = six_pairs
    serialized = next(iter(tf.data.TFRecordDataset(paths[1], compression_type="GZIP")))
    example = shard_files.parse_example(serialized)
    assert example["source_ids"].dtype == tf.int32 and example["target_ids"].dtype == tf.int32
    assert (example["source_ids"].numpy().tolist(), example["target_ids"].numpy().tolist()) == ([12, 12, 12, 2], [22, 2])


def test_sequential_reading_keeps_corpus_order_and_interleaving_takes_shards_in_turn(six_pairs):
    paths, pairs = six_pairs
    assert _pairs(shard_files.read_examples(paths, sequential=True)) == pairs
    assert _pairs(shard_files.read_examples(paths)) == [pairs[i] for i in (0, 2, 4, 1, 3, 5)]


@pytest.mark.parametrize("pipelines, shares", [
    (2, [[0, 1, 4, 5], [2, 3]]),  # enough shards: shards 0 and 2, then shard 1
    (4, [[0, 4], [1, 5], [2], [3]]),  # fewer shards than pipelines: every 4th pair
])
def test_each_input_pipeline_reads_its_own_share(six_pairs, pipelines, shares):
    paths, pairs = six_pairs
    read = []
    for pipeline in range(pipelines):
        context = tf.distribute.InputContext(num_input_pipelines=pipelines, input_pipeline_id=pipeline)
        read.append(_pairs(shard_files.read_examples(paths, context, sequential=True)))
    assert read == [[pairs[i] for i in share] for share in shares]
    assert collections.Counter(sum(read, [])) == collections.Counter(pairs)


def test_verify_shards_names_a_shard_whose_bytes_changed(six_pairs, tmp_path):
    paths, _ = six_pairs
    shard_files.verify_shards(paths)
    with open(paths[1], "ab") as stream:
        stream.write(b"\0")
    with pytest.raises(CorruptShardError, match=rf"corrupt TFRecord shard {paths[1]}: its sha256 differs from the "
                                                rf"one in {tmp_path}/metadata.json; rebuild it"):
        shard_files.verify_shards(paths)
    shard_files.verify_shards([paths[0], paths[2]])  # only the shards given are checked


def test_shards_without_a_recorded_checksum_are_not_checked(six_pairs, tmp_path):
    paths, _ = six_pairs
    metadata = json.loads((tmp_path / "metadata.json").read_text())
    del metadata["splits"]["train"]["shards"][0]
    (tmp_path / "metadata.json").write_text(json.dumps(metadata))
    with open(paths[0], "ab") as stream:
        stream.write(b"\0")
    shard_files.verify_shards(paths)  # not listed
    with open(paths[2], "ab") as stream:
        stream.write(b"\0")
    with pytest.raises(CorruptShardError, match=paths[2]):
        shard_files.verify_shards(paths)
    (tmp_path / "metadata.json").unlink()
    shard_files.verify_shards(paths)  # no metadata.json beside them
