"""ExternalShuffle: a permutation of the lines, seeded, uniform, one bucket in memory; bad lines refused."""

import collections
import itertools

import pytest

from data_pipeline.external_shuffle import ExternalShuffle


def _shuffled(folder, lines, seed, bucket_lines):
    shuffle = ExternalShuffle(folder, len(lines), seed, bucket_lines)
    assert shuffle.scatter(lines) == len(lines)
    return list(shuffle)


def test_the_lines_come_back_once_each_in_another_order_and_the_buckets_are_removed(tmp_path):
    lines = [f"line {i}\tand\ttabs".encode() for i in range(1000)] + [b"", b""]
    shuffled = _shuffled(tmp_path / "buckets", lines, seed=3, bucket_lines=100)
    assert collections.Counter(shuffled) == collections.Counter(lines)
    assert shuffled != lines
    assert not (tmp_path / "buckets").exists()


def test_buckets_hold_about_bucket_lines_each_and_are_read_one_at_a_time(tmp_path):
    lines = [str(i).encode() for i in range(10_000)]
    shuffle = ExternalShuffle(tmp_path / "buckets", len(lines), seed=5, bucket_lines=1000)
    shuffle.scatter(lines)
    assert shuffle.num_buckets == 10
    buckets = [shuffle.bucket_file(index).read_bytes().split(b"\n")[:-1] for index in range(shuffle.num_buckets)]
    assert sum(map(len, buckets)) == 10_000 and 900 < min(map(len, buckets)) and max(map(len, buckets)) < 1100
    iterator = iter(shuffle)
    first = [next(iterator) for _ in range(len(buckets[0]))]
    assert sorted(first) == sorted(buckets[0]) and first != buckets[0]  # the first bucket, in a random order
    assert not shuffle.bucket_file(0).exists() and all(shuffle.bucket_file(i).exists() for i in range(1, 10))
    assert len(first) + len(list(iterator)) == 10_000


def test_the_same_seed_gives_the_same_order_and_another_seed_another(tmp_path):
    lines = [str(i).encode() for i in range(500)]
    first = _shuffled(tmp_path / "a", lines, seed=7, bucket_lines=64)
    assert _shuffled(tmp_path / "b", lines, seed=7, bucket_lines=64) == first
    assert _shuffled(tmp_path / "c", lines, seed=8, bucket_lines=64) != first


def test_every_order_is_equally_likely_across_buckets(tmp_path):
    """4 lines in 2 buckets (2 lines each on average), 2,400 seeds: each of the 24 orders about 100 times.
    The scatter puts a line in a bucket at random, so the order of the buckets does not show in the output."""
    lines = [b"a", b"b", b"c", b"d"]
    counts = collections.Counter(tuple(_shuffled(tmp_path / str(seed), lines, seed, 2)) for seed in range(2400))
    assert set(counts) == set(itertools.permutations(lines))
    chi_square = sum((count - 100) ** 2 / 100 for count in counts.values())
    assert chi_square < 49.7  # 23 degrees of freedom, p = 0.001


def test_the_number_of_buckets_follows_the_lines(tmp_path):
    for lines, buckets in ((0, 1), (1, 1), (200_000, 1), (200_001, 2), (10_000_000, 50)):
        assert ExternalShuffle(tmp_path, lines, seed=1).num_buckets == buckets


def test_a_line_with_a_line_break_or_a_bad_bucket_size_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"line 2 holds a line break: b'b\\nc'"):
        ExternalShuffle(tmp_path / "buckets", 2, seed=1).scatter([b"a", b"b\nc"])
    with pytest.raises(ValueError, match="bucket_lines must be at least 1, got 0"):
        ExternalShuffle(tmp_path / "buckets", 2, seed=1, bucket_lines=0)
