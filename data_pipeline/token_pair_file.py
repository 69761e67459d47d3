"""A split's kept pairs as tokens, on disk: written in corpus order, read in order or by index."""

import collections.abc
import os
import pathlib

import numpy as np

_INDEX_CHUNK_BYTES = 1 << 24  # bytes scanned for line breaks at a time when the index is written
_OFFSET = np.dtype("<i8")


def pair_line(source, target):
    """One pair's line, without its line break: `source tokens<TAB>target tokens`, tokens joined by spaces."""
    return b" ".join(source) + b"\t" + b" ".join(target)


def line_pair(line):
    """(source tokens, target tokens), lists of bytes, of a line written by `pair_line`."""
    source, target = line.split(b"\t")
    return source.split(b" "), target.split(b" ")


class TokenPairFile(collections.abc.Sequence):
    """The scratch file of a split's kept pairs: one `pair_line` per pair, UTF-8 bytes, in corpus order.

    `lines()` streams it; as a sequence (`len(pairs)`, `pairs[i]`, `pairs[i:j]`, each pair a `line_pair`)
    it is read from disk by index, through an index of line offsets (8 bytes a line, `.offsets` beside the
    file) written on first use, so neither the pairs nor their offsets are held in memory: what
    `SentenceJoiner.sample_joined_pairs` draws joined pairs from on a corpus of any size. `close()` (or the
    end of a `with`) closes the files read by index and removes the index.

    Args:
        path: the file; written by whoever tokenizes the split, read here.
    """

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.index_path = self.path.with_name(self.path.name + ".offsets")
        self._files = None  # (lines, offsets) file descriptors, opened on the first read by index
        self._length = None

    def lines(self):
        """Each line's bytes without its line break, in order."""
        with open(self.path, "rb") as stream:
            for line in stream:
                yield line.rstrip(b"\n")

    def append(self, lines):
        """Appends `lines` (bytes without line breaks) at the end; returns how many. Reading by index while
        appending reads the pairs there were when it began (its index is theirs)."""
        count = 0
        with open(self.path, "ab") as stream:
            for line in lines:
                stream.write(line + b"\n")
                count += 1
        return count

    def __len__(self):
        self._open()
        return self._length

    def __getitem__(self, key):
        self._open()
        if isinstance(key, slice):
            start, stop, step = key.indices(self._length)
            if step != 1:
                raise ValueError(f"{self.path}: only slices of step 1 are read, got {key}")
            return [line_pair(line) for line in self._read_lines(start, max(start, stop))]
        position = key + self._length if key < 0 else key
        if not 0 <= position < self._length:
            raise IndexError(f"{self.path}: pair {key} of {self._length}")
        return line_pair(self._read_lines(position, position + 1)[0])

    def _read_lines(self, start, stop):
        """Lines start..stop-1 without their line breaks, read with two positioned reads."""
        if start == stop:
            return []
        lines, offsets = self._files
        bounds = np.frombuffer(os.pread(offsets, (stop - start + 1) * _OFFSET.itemsize, start * _OFFSET.itemsize),
                               _OFFSET)  # [stop - start + 1]: each line's first byte, then the end of the last
        text = os.pread(lines, int(bounds[-1] - bounds[0]), int(bounds[0]))
        return text.split(b"\n")[:-1]

    def _open(self):
        if self._files is not None:
            return
        if not self.index_path.exists():
            self._write_index()
        self._files = (os.open(self.path, os.O_RDONLY), os.open(self.index_path, os.O_RDONLY))
        self._length = os.path.getsize(self.index_path) // _OFFSET.itemsize - 1

    def _write_index(self):
        """Writes the offset of every line's first byte, then the file's size (the end of the last line)."""
        with open(self.path, "rb") as stream, open(self.index_path, "wb") as index:
            index.write(np.zeros(1, _OFFSET).tobytes())
            position = 0
            for chunk in iter(lambda: stream.read(_INDEX_CHUNK_BYTES), b""):
                breaks = np.flatnonzero(np.frombuffer(chunk, np.uint8) == ord("\n"))
                index.write((breaks + position + 1).astype(_OFFSET).tobytes())
                position += len(chunk)
            if position and not chunk.endswith(b"\n"):
                raise ValueError(f"{self.path}: its last line has no line break")

    def close(self):
        """Closes the files read by index and removes the index (written again if it is read by index again)."""
        if self._files is not None:
            for descriptor in self._files:
                os.close(descriptor)
            self._files = None
        if self.index_path.exists():
            os.remove(self.index_path)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
