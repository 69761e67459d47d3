"""A seeded shuffle of more lines than memory holds: lines scattered into bucket files, each shuffled alone."""

import math
import os
import pathlib

import numpy as np

# Lines per bucket on average: what the shuffle holds in memory at a time (~40 MB of pairs of 25-word lines).
BUCKET_LINES = 200_000
_SCATTER_LINES = 100_000  # lines given their buckets per draw


class ExternalShuffle:
    """Shuffles a stream of lines once, holding one bucket of them in memory, not the stream.

    Two passes, the scatter shuffle (Sandelius 1962; Rao 1961): `scatter` sends each line to one of
    `num_buckets` bucket files, drawn uniformly at random; iterating reads the buckets in turn, each put in a
    random order in memory alone, and yields their lines. As every line's bucket is drawn independently and
    uniformly and every bucket's order is a uniform permutation, the order yielded is a uniform random
    permutation of all the lines: the distribution of shuffling them all in memory, with a bucket in
    memory. Two alternatives were set aside: a shuffle buffer (tf.data's) moves a line at most a buffer's
    length, so a corpus made of parts (or sorted, as some are) keeps its order at the scale of shards; an
    external merge sort by random keys gives the same uniform order with several merge passes instead of
    one scatter.

    `num_buckets` is `ceil(lines / bucket_lines)`, so a bucket holds `bucket_lines` lines on average whatever
    the size of the stream (binomially distributed: within a few percent at 200,000). The same `seed`, lines
    and `bucket_lines` give the same order. Iterate once: each bucket file is removed as it is read, so
    the lines are on disk once, and memory holds one bucket (its bytes and their order).

    Args:
        folder: where the bucket files are written (created by `scatter`, removed once the last bucket is
            read; it must hold nothing else).
        lines: number of lines that will be scattered: sizes the buckets.
        seed: seed of the bucket draws and of the orders within buckets.
        bucket_lines: lines per bucket on average, which bounds the memory of iterating.

    Example:
    >>> shuffle = ExternalShuffle("/tmp/buckets", lines=3, seed=1)
    >>> shuffle.scatter([b"a", b"b", b"c"])
    >>> list(shuffle)  # the three lines, in a random order
    """

    def __init__(self, folder, lines, seed, bucket_lines=BUCKET_LINES):
        if bucket_lines < 1:
            raise ValueError(f"bucket_lines must be at least 1, got {bucket_lines}")
        self.folder = pathlib.Path(folder)
        self.lines = lines
        self.seed = seed
        self.bucket_lines = bucket_lines
        self.num_buckets = max(1, math.ceil(lines / bucket_lines))
        self._random = np.random.default_rng(seed)

    def bucket_file(self, index):
        return self.folder / f"bucket-{index:05d}"

    def scatter(self, lines):
        """Appends each of `lines` (bytes without a line break) to a random bucket file; returns their number."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for index in range(self.num_buckets):
            self.bucket_file(index).write_bytes(b"")
        scattered, chunk = 0, []
        for line in lines:
            if b"\n" in line:
                raise ValueError(f"line {scattered + len(chunk) + 1} holds a line break: {line[:80]!r}")
            chunk.append(line)
            if len(chunk) == _SCATTER_LINES:
                scattered += self._scatter_chunk(chunk)
                chunk = []
        return scattered + self._scatter_chunk(chunk)

    def _scatter_chunk(self, chunk):
        buckets = [[] for _ in range(self.num_buckets)]
        for line, bucket in zip(chunk, self._random.integers(self.num_buckets, size=len(chunk)).tolist()):
            buckets[bucket].append(line + b"\n")
        for index, bucket in enumerate(buckets):
            if bucket:
                with open(self.bucket_file(index), "ab") as stream:
                    stream.writelines(bucket)
        return len(chunk)

    def __iter__(self):
        """The scattered lines, bucket after bucket, each bucket in a random order; removes the bucket files."""
        for index in range(self.num_buckets):
            path = self.bucket_file(index)
            with open(path, "rb") as stream:
                lines = stream.read().split(b"\n")[:-1]
            os.remove(path)
            if index == self.num_buckets - 1:
                self.folder.rmdir()
            for position in self._random.permutation(len(lines)).tolist():
                yield lines[position]
