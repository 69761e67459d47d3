"""data_pipeline/evaluation_input.py: EvaluationInput reads dev/test shards once, in corpus order, in
batches right-padded with PAD_ID; splits its data among input pipelines; checks shard checksums unless told
not to."""

import collections
import json

import pytest
import tensorflow as tf

from data_pipeline import CorruptShardError
from data_pipeline import EvaluationInput
from data_pipeline.constants import EOS_ID, PAD_ID
from helpers.shard_test_data import batches_of, batches_per_input_pipeline, pairs_of, write_shards


@pytest.fixture
def many_pairs(tmp_path):
    """50 pairs; pair i: source of (i % 7) + 1 words, target of (i % 5) + 1 words, all ids 10 + i."""
    pairs = [([10 + i] * (i % 7 + 1) + [EOS_ID], [10 + i] * (i % 5 + 1) + [EOS_ID]) for i in range(50)]
    return write_shards(tmp_path, pairs, num_shards=3, metadata=True), pairs


def test_evaluation_input_keeps_corpus_order(many_pairs):
    pattern, pairs = many_pairs
    batches = batches_of(EvaluationInput(pattern, batch_size=8)())
    assert [len(batch["source_ids"]) for batch in batches] == [8] * 6 + [2]
    assert pairs_of(batches) == [(tuple(s), tuple(t)) for s, t in pairs]


def test_exact_batches_padded_to_their_own_longest_sentence(tmp_path):
    pairs = [([5, 6, EOS_ID], [7, EOS_ID]), ([8, EOS_ID], [9, 9, 9, EOS_ID]), ([4, 4, 4, 4, EOS_ID], [3, EOS_ID])]
    pattern = write_shards(tmp_path, pairs, num_shards=2)
    dataset = EvaluationInput(pattern, batch_size=2)()
    assert batches_of(dataset) == [
        {"source_ids": [[5, 6, 2], [8, 2, PAD_ID]], "target_ids": [[7, 2, PAD_ID, PAD_ID], [9, 9, 9, 2]]},
        {"source_ids": [[4, 4, 4, 4, 2]], "target_ids": [[3, 2]]},
    ]
    batch = next(iter(dataset))
    assert batch["source_ids"].dtype == tf.int32 and batch["target_ids"].dtype == tf.int32
    assert batches_of(dataset) == batches_of(dataset)  # one pass per iteration, the same each time


def test_input_pipelines_share_the_pairs_with_per_replica_batches(many_pairs):
    pattern, pairs = many_pairs
    evaluation_input = EvaluationInput(pattern, batch_size=8)
    seen = []
    for batches in batches_per_input_pipeline(evaluation_input):
        assert max(len(batch["source_ids"]) for batch in batches) == 4  # per-replica share of 8
        seen += pairs_of(batches)
    assert len(seen) == 50
    assert collections.Counter(seen) == collections.Counter((tuple(s), tuple(t)) for s, t in pairs)


def test_a_recorded_checksum_that_differs_is_refused_unless_verification_is_off(many_pairs, tmp_path):
    pattern, pairs = many_pairs
    metadata = json.loads((tmp_path / "metadata.json").read_text())
    metadata["splits"]["train"]["shards"][2]["sha256"] = "0" * 64
    (tmp_path / "metadata.json").write_text(json.dumps(metadata))
    with pytest.raises(CorruptShardError, match=str(tmp_path / "train-00002-of-00003.tfrecord.gz")):
        EvaluationInput(pattern)()
    batches = batches_of(EvaluationInput(pattern, verify_shards=False)())
    assert pairs_of(batches) == [(tuple(s), tuple(t)) for s, t in pairs]


def test_a_pattern_without_shards_is_named(tmp_path):
    pattern = str(tmp_path / "test-*.tfrecord.gz")
    with pytest.raises(FileNotFoundError, match=rf"no TFRecord shards match {pattern}".replace("*", r"\*")):
        EvaluationInput(pattern)()
