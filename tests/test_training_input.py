"""TrainingInput on toy shards: exact batches, coverage, sorting, determinism, resume; corrupt shards are named
(by EvaluationInput too); subword sampling on a SentencePiece data directory."""

import collections

import pytest
import tensorflow as tf

from data_pipeline import CorruptShardError
from data_pipeline import EvaluationInput
from data_pipeline import TrainingInput
from data_pipeline import shard_files
from data_pipeline.constants import EOS_ID
from data_pipeline.data_dir import DataDir
from data_pipeline.text_codec import TextCodec
from helpers.shard_test_data import batches_of, batches_per_input_pipeline, checkpoint_bytes, pairs_of, write_shards
from helpers.subword_test_data import build_subword_data

SIDES = ("source", "target")


@pytest.fixture
def many_pairs(tmp_path):
    """50 pairs; pair i: source of (i % 7) + 1 words, target of (i % 5) + 1 words, all ids 10 + i."""
    pairs = [([10 + i] * (i % 7 + 1) + [EOS_ID], [10 + i] * (i % 5 + 1) + [EOS_ID]) for i in range(50)]
    return write_shards(tmp_path, pairs, num_shards=3, metadata=True), pairs


def test_exact_batches_without_shuffling(tmp_path):
    # Longer side, </s> included: p0 4, p1 2, p2 5, p3 3 | p4 3, p5 3, p6 2. Sorted (stable) windows:
    # p1 p3 | p0 p2 || p6 p4 | p5; each side padded to the longest of its own batch.
    pairs = [
        ([5, 6, 7, EOS_ID], [5, EOS_ID]),
        ([6, EOS_ID], [6, EOS_ID]),
        ([7, EOS_ID], [7, 7, 7, 7, EOS_ID]),
        ([8, 8, EOS_ID], [8, EOS_ID]),
        ([9, 9, EOS_ID], [9, EOS_ID]),
        ([10, EOS_ID], [10, 10, EOS_ID]),
        ([11, EOS_ID], [11, EOS_ID]),
    ]
    pattern = write_shards(tmp_path, pairs, num_shards=1)
    dataset = TrainingInput(pattern, batch_size=2, sort_window=2, shuffle_buffer=1, epochs=1)()
    assert batches_of(dataset) == [
        {"source_ids": [[6, 2, 0], [8, 8, 2]], "target_ids": [[6, 2], [8, 2]]},
        {"source_ids": [[5, 6, 7, 2], [7, 2, 0, 0]], "target_ids": [[5, 2, 0, 0, 0], [7, 7, 7, 7, 2]]},
        {"source_ids": [[11, 2, 0], [9, 9, 2]], "target_ids": [[11, 2], [9, 2]]},
        {"source_ids": [[10, 2]], "target_ids": [[10, 10, 2]]},
    ]


def test_every_pair_once_per_epoch_and_epochs_differ(many_pairs):
    pattern, pairs = many_pairs
    batches = batches_of(TrainingInput(pattern, batch_size=4, sort_window=3, shuffle_buffer=20, seed=3, epochs=2)())
    per_epoch = len(batches) // 2  # 50 pairs = 4 windows of 12 + 2: 4 * 3 + 1 batches per epoch
    assert per_epoch == 13
    expected = collections.Counter((tuple(s), tuple(t)) for s, t in pairs)
    first, second = pairs_of(batches[:per_epoch]), pairs_of(batches[per_epoch:])
    assert collections.Counter(first) == expected and collections.Counter(second) == expected
    assert first != second


def test_batches_are_sorted_inside_each_window_and_padded_to_own_longest(many_pairs):
    pattern, _ = many_pairs
    batches = batches_of(TrainingInput(pattern, batch_size=4, sort_window=3, shuffle_buffer=50, epochs=1)())
    for start in range(0, len(batches), 3):
        window = pairs_of(batches[start : start + 3])
        lengths = [max(len(s), len(t)) for s, t in window]
        assert lengths == sorted(lengths)
    for batch in batches:
        assert max(len(s) for s, _ in pairs_of([batch])) == len(batch["source_ids"][0])
        assert max(len(t) for _, t in pairs_of([batch])) == len(batch["target_ids"][0])


def test_shuffled_batches_are_the_sorted_windows_batches_in_a_seeded_order(many_pairs):
    pattern, _ = many_pairs
    read = lambda shuffle, seed=3: batches_of(TrainingInput(pattern, batch_size=4, sort_window=5, shuffle_buffer=50,
                                                            seed=seed, epochs=2, shuffle_batches=shuffle)())
    sorted_batches, shuffled = read(False), read(True)
    assert len(shuffled) == len(sorted_batches) == 2 * 13  # 50 pairs: 2 windows of 20 + 10, batches of 4
    windows = [(0, 5), (5, 10), (10, 13), (13, 18), (18, 23), (23, 26)]
    for start, end in windows:  # the same batches, each padded to its own longest, in another order
        key = lambda batch: str(batch)
        assert sorted(shuffled[start:end], key=key) == sorted(sorted_batches[start:end], key=key)
    assert sum(shuffled[start:end] != sorted_batches[start:end] for start, end in windows) >= 4  # reordered
    assert shuffled == read(True) and shuffled != read(True, seed=4)


def test_same_seed_same_batches_other_seed_otherbatches_of(many_pairs):
    pattern, _ = many_pairs
    run = lambda seed: batches_of(TrainingInput(pattern, batch_size=4, sort_window=3, seed=seed, epochs=1)())
    assert run(7) == run(7)
    assert run(7) != run(8)


def test_batches_are_int32_dicts(many_pairs):
    pattern, _ = many_pairs
    batch = next(iter(TrainingInput(pattern, batch_size=4, sort_window=3)()))
    assert set(batch) == {"source_ids", "target_ids"}
    assert batch["source_ids"].dtype == tf.int32 and batch["target_ids"].dtype == tf.int32
    assert batch["source_ids"].shape[0] == 4


def test_iterator_resumes_mid_epoch_from_checkpoint(many_pairs, tmp_path):
    pattern, _ = many_pairs
    make = lambda: iter(TrainingInput(pattern, batch_size=4, sort_window=3, shuffle_buffer=20, seed=5)())
    iterator = make()
    for _ in range(3):
        next(iterator)
    checkpoint_path = tf.train.Checkpoint(iterator=iterator).save(str(tmp_path / "ckpt" / "input"))
    expected = batches_of([next(iterator) for _ in range(15)])  # crosses the epoch boundary (13 batches)
    resumed = make()
    tf.train.Checkpoint(iterator=resumed).restore(checkpoint_path).assert_consumed()
    assert batches_of([next(resumed) for _ in range(15)]) == expected


def test_a_buffer_cut_to_the_pairs_gives_the_same_batches_and_a_smaller_checkpoint(many_pairs, tmp_path):
    pattern, pairs = many_pairs
    sizes, batches = {}, {}
    for name, cut in (("whole", None), ("cut", len(pairs))):
        training_input = TrainingInput(pattern, batch_size=4, sort_window=3, seed=5, pairs=cut)
        iterator = iter(training_input())
        batches[name] = batches_of([next(iterator) for _ in range(40)])  # three epochs of 13 batches and more
        sizes[name] = checkpoint_bytes(tf.train.Checkpoint(iterator=iterator).write(str(tmp_path / name / "input")))
    assert training_input.shuffle_buffer == len(pairs)
    assert batches["cut"] == batches["whole"]
    assert sizes["cut"] < sizes["whole"] / 10, sizes
    assert TrainingInput(pattern, shuffle_buffer=20, pairs=len(pairs)).shuffle_buffer == 20


def test_token_count_batching_respects_budget_and_covers_epoch(many_pairs):
    pattern, pairs = many_pairs
    batches = batches_of(TrainingInput(pattern, max_tokens=12, bucket_width=2, max_sequence_length=8, epochs=1)())
    for batch in batches:
        for side in ("source_ids", "target_ids"):
            assert len(batch[side]) * len(batch[side][0]) <= 12
    assert collections.Counter(pairs_of(batches)) == collections.Counter((tuple(s), tuple(t)) for s, t in pairs)


def test_input_pipelines_split_the_data_for_distribution(many_pairs):
    pattern, pairs = many_pairs
    training_input = TrainingInput(pattern, batch_size=8, sort_window=2, epochs=1)
    seen = []
    for batches in batches_per_input_pipeline(training_input):
        assert max(len(batch["source_ids"]) for batch in batches) == 4  # per-replica share of 8
        seen += pairs_of(batches)
    assert collections.Counter(seen) == collections.Counter((tuple(s), tuple(t)) for s, t in pairs)


def test_works_with_distribute_datasets_from_function(many_pairs):
    pattern, _ = many_pairs
    strategy = tf.distribute.get_strategy()
    dataset = strategy.distribute_datasets_from_function(TrainingInput(pattern, batch_size=4, sort_window=3))
    batch = next(iter(dataset))
    assert batch["source_ids"].shape[0] == 4


def test_corrupt_shard_is_named(many_pairs, tmp_path):
    pattern, _ = many_pairs
    shard = tmp_path / "train-00001-of-00003.tfrecord.gz"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    with pytest.raises(CorruptShardError, match=str(shard)):
        TrainingInput(pattern)()
    with pytest.raises(CorruptShardError, match=str(shard)):
        EvaluationInput(pattern)()


@pytest.mark.parametrize("max_tokens", [None, 808])
def test_inputs_of_up_to_100_tokens_are_batched_whole(tmp_path, max_tokens):
    # Joined pairs reach --max_length: 1 to 100 tokens and EOS, nothing may be cut or left out.
    pairs = [([10 + i] * (i + 1) + [EOS_ID], [10 + i] * (100 - i) + [EOS_ID]) for i in range(100)]
    pattern = write_shards(tmp_path, pairs, num_shards=2, metadata=True)
    training_input = TrainingInput(pattern, batch_size=8, sort_window=4, max_tokens=max_tokens, max_sequence_length=101,
                                   epochs=1)
    batches = batches_of(training_input())
    assert collections.Counter(pairs_of(batches)) == collections.Counter((tuple(s), tuple(t)) for s, t in pairs)
    for batch in batches:
        if max_tokens:
            for side in ("source_ids", "target_ids"):
                assert len(batch[side]) * len(batch[side][0]) <= max_tokens
    assert max(len(batch["source_ids"][0]) for batch in batches) == 101


@pytest.fixture(scope="module")
def subword_data(tmp_path_factory):
    """(DataDir of the toy corpus in BPE pieces, {side: TextCodec}, the shards' (source, target) id tuples)."""
    data_dir = DataDir(build_subword_data(tmp_path_factory.mktemp("sampling")))
    shards = shard_files.read_examples(shard_files.list_shards(data_dir.shard_pattern("train")))
    pairs = [(tuple(pair["source_ids"].numpy().tolist()), tuple(pair["target_ids"].numpy().tolist())) for pair in shards]
    return data_dir, {side: data_dir.codec(side) for side in SIDES}, pairs


def _sampling_input(data_dir, codecs, alpha, **options):
    """50 pairs a batch, windows of 100 pairs."""
    return TrainingInput(data_dir.shard_pattern("train"), batch_size=50, sort_window=2, seed=1,
                         pairs=data_dir.records("train"), subword_sampling_alpha=alpha, subword_codecs=codecs, **options)


def _texts(pairs, codecs):
    """The (source text, target text) of unpadded id pairs, `</s>` last."""
    texts = []
    for index, side in enumerate(SIDES):
        ids = tf.ragged.constant([list(pair[index][:-1]) for pair in pairs], dtype=tf.int32)
        texts.append([text.decode("utf-8") for text in codecs[side].detokenize(codecs[side].tokens(ids)).numpy()])
    return list(zip(*texts))


def test_sampled_pieces_spell_the_shards_text_and_vary_from_epoch_to_epoch(subword_data):
    data_dir, codecs, shard_pairs = subword_data
    longest = max(len(ids) for pair in shard_pairs for ids in pair)
    batches = batches_of(_sampling_input(data_dir, codecs, 0.1, epochs=3, max_sequence_length=longest)())
    sampled = pairs_of(batches)
    for epoch in range(3):  # 6 windows of 2 batches an epoch: every pair once, as the shard's text
        epoch_pairs = pairs_of(batches[12 * epoch: 12 * (epoch + 1)])
        assert collections.Counter(_texts(epoch_pairs, codecs)) == collections.Counter(_texts(shard_pairs, codecs))
    assert max(len(ids) for pair in sampled for ids in pair) <= longest  # a longer sample keeps the shard's ids
    segmentations = collections.defaultdict(set)
    for text, pair in zip(_texts(sampled, codecs), sampled):
        segmentations[text].add(pair)
    assert max(len(pairs) for pairs in segmentations.values()) >= 2
    assert collections.Counter(sampled) != collections.Counter(shard_pairs * 3)


def test_alpha_0_reads_the_shards_ids_bit_for_bit(subword_data):
    data_dir, codecs, shard_pairs = subword_data
    fixed = batches_of(_sampling_input(data_dir, codecs, 0.0, epochs=1)())
    assert fixed == batches_of(_sampling_input(data_dir, None, 0.0, epochs=1)())
    assert collections.Counter(pairs_of(fixed)) == collections.Counter(shard_pairs)


def test_same_seed_same_windows_of_texts_and_a_resumed_iterator_samples_on(subword_data, tmp_path):
    data_dir, codecs, _ = subword_data
    windows = lambda batches: [collections.Counter(_texts(pairs_of(batches[i: i + 2]), codecs))
                               for i in range(0, len(batches), 2)]
    first, second = (batches_of(_sampling_input(data_dir, codecs, 0.1, epochs=1)()) for _ in range(2))
    assert windows(first) == windows(second)  # the same pairs in each window; pieces and order inside may differ
    iterator = iter(_sampling_input(data_dir, codecs, 0.1)())
    for _ in range(3):
        next(iterator)
    checkpoint_path = tf.train.Checkpoint(iterator=iterator).save(str(tmp_path / "ckpt" / "input"))
    expected = batches_of([next(iterator) for _ in range(5)])  # ends window 2, then windows 3 and 4
    resumed = iter(_sampling_input(data_dir, codecs, 0.1)())
    tf.train.Checkpoint(iterator=resumed).restore(checkpoint_path).assert_consumed()
    batches = batches_of([next(resumed) for _ in range(5)])
    assert batches[0] == expected[0]  # sampled before the checkpoint, restored with it
    assert windows(batches[1:]) == windows(expected[1:])


def test_sampling_needs_the_datas_codecs_and_sentencepiece(subword_data):
    data_dir, _, _ = subword_data
    with pytest.raises(ValueError, match="subword_sampling_alpha > 0 needs the data's subword_codecs"):
        _sampling_input(data_dir, None, 0.1)
    with pytest.raises(ValueError, match="subword sampling needs a SentencePiece codec; the en codec is moses"):
        _sampling_input(data_dir, {side: TextCodec("en") for side in SIDES}, 0.1)
