"""Reads the sentence pairs of a corpus part, repairing or dropping bad lines and counting each case."""

import codecs
import collections
import contextlib
import gzip
import hashlib
import itertools
import zlib

from data_pipeline import data_files

_GZIP_MAGIC = b"\x1f\x8b"
_LINES_NAMED = 5  # first line numbers of each repair kept for the metadata


@contextlib.contextmanager
def open_binary(path):
    """A plain or gzip file (told by its first bytes, whatever its name) whose read errors name it."""
    with open(path, "rb") as probe:
        compressed = probe.read(2) == _GZIP_MAGIC
    try:
        with (gzip.open(path, "rb") if compressed else open(path, "rb")) as opened:
            yield opened
    except (EOFError, gzip.BadGzipFile, zlib.error) as error:
        raise ValueError(f"{path}: {error} (a truncated or corrupt gzip file)") from error


def count_lines(path):
    """Number of lines in a plain or gzip text file (a last line without newline counts)."""
    lines, last = 0, b"\n"
    with open_binary(path) as opened:
        for chunk in iter(lambda: opened.read(1 << 20), b""):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")


def sha256(path):
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as opened:
        for chunk in iter(lambda: opened.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class PairReader:
    """Yields the clean (source, target) sentence pairs of one `CorpusPart`, counting what it changes.

    Lines are decoded as UTF-8; invalid bytes become U+FFFD and are counted as `invalid_utf8_source` /
    `invalid_utf8_target` under `repaired`, a UTF-8 byte order mark opening a file is removed
    (`utf8_bom_source` / `utf8_bom_target`); `repaired_lines` keeps the first line numbers of each. Pairs with an
    empty (or whitespace-only) side, or with a side longer than `max_line_chars` characters, are dropped and
    counted under `dropped` by their first reason (`empty_source`, `empty_target`, `source_line_too_long`,
    `target_line_too_long`), `dropped_lines` keeping the first line numbers of each. Nothing is lost silently:
    `read == yielded + sum(dropped)`. `numbered()` gives each pair with the number of its line.

    Args:
        part: the `CorpusPart`.
        paths: local paths of `part.files`, in the same order.
        max_line_chars: longest line kept, in characters.

    Raises:
        ValueError: source and target files have different line counts (raised on construction,
            before any pair is read), or a TSV line has too few columns (naming file and line).
    """

    @classmethod
    def of_part(cls, part, data_root, max_line_chars, allow_download=False):
        """The reader of `part` with its files found in the data folder `data_root` (`data_files.resolve`:
        extracted from their archive, or downloaded with `allow_download`, where missing)."""
        return cls(part, [data_files.resolve(corpus_file, data_root, allow_download) for corpus_file in part.files],
                   max_line_chars)

    def __init__(self, part, paths, max_line_chars):
        self.part = part
        self.paths = tuple(paths)
        self.max_line_chars = max_line_chars
        self.read = 0
        self.dropped = collections.Counter()
        self.repaired = collections.Counter()
        self.repaired_lines = collections.defaultdict(list)
        self.dropped_lines = collections.defaultdict(list)
        self.lines = None  # lines of the part's file(s), once a pass has read them all
        if len(self.paths) == 2:
            source_lines, target_lines = count_lines(self.paths[0]), count_lines(self.paths[1])
            if source_lines != target_lines:
                raise ValueError(
                    f"line counts differ: {self.paths[0]} has {source_lines} lines, "
                    f"{self.paths[1]} has {target_lines} lines"
                )

    def __iter__(self):
        return (pair for _, pair in self.numbered())

    def numbered(self):
        """Yields (line, (source, target)) for the pairs `iter` yields: `line` the number, from 1, of the line of
        the part's file(s) the pair was read from (a TSV file's lines of other splits counted too)."""
        number = 0
        for number, (key, source, target) in enumerate(self._raw_pairs(), start=1):
            if number == 1:
                source, target = self._strip_bom(source, "source"), self._strip_bom(target, "target")
                key = key.removeprefix(codecs.BOM_UTF8)
            if self.part.hash_buckets is not None:
                low, high = self.part.hash_buckets
                if not low <= int(hashlib.md5(key).hexdigest(), 16) % 1000 < high:
                    continue
            self.read += 1
            source, target = self._decode(source, "source", number), self._decode(target, "target", number)
            reason = self._drop_reason(source, "source") or self._drop_reason(target, "target")
            if reason:
                self.dropped[reason] += 1
                self._name_line(self.dropped_lines, reason, number)
            else:
                yield number, (source, target)
        self.lines = number

    def _raw_pairs(self):
        """(hash key, source bytes, target bytes) per line, without the line break; the key is a TSV line's
        first column, or the source."""
        if len(self.paths) == 2:
            with open_binary(self.paths[0]) as sources, open_binary(self.paths[1]) as targets:
                for source, target in itertools.zip_longest(sources, targets, fillvalue=b""):
                    yield source.rstrip(b"\r\n"), source.rstrip(b"\r\n"), target.rstrip(b"\r\n")
            return
        source_column, target_column = self.part.tsv_columns
        with open_binary(self.paths[0]) as lines:
            for number, line in enumerate(lines, start=1):
                columns = line.rstrip(b"\r\n").split(b"\t")
                if len(columns) <= max(source_column, target_column):
                    raise ValueError(
                        f"{self.paths[0]}:{number}: expected at least "
                        f"{max(source_column, target_column) + 1} tab-separated columns, found {len(columns)}"
                    )
                yield columns[0], columns[source_column], columns[target_column]

    def _strip_bom(self, line, side):
        if not line.startswith(codecs.BOM_UTF8):
            return line
        self._count_repair(f"utf8_bom_{side}", 1)
        return line[len(codecs.BOM_UTF8) :]

    def _decode(self, line, side, number):
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            self._count_repair(f"invalid_utf8_{side}", number)
            return line.decode("utf-8", errors="replace")

    def _count_repair(self, reason, number):
        self.repaired[reason] += 1
        self._name_line(self.repaired_lines, reason, number)

    def _name_line(self, lines, reason, number):
        """Adds "file:number" to `lines[reason]` (the file of the side `reason` names) while it names fewer than
        `_LINES_NAMED`, each once however many passes read it."""
        named = f"{self.paths[0 if reason.endswith('source') else -1]}:{number}"
        if len(lines[reason]) < _LINES_NAMED and named not in lines[reason]:
            lines[reason].append(named)

    def _drop_reason(self, text, side):
        """Why a pair with this side must be dropped, or None to keep it (one reason per pair)."""
        if not text.strip():
            return f"empty_{side}"
        if len(text) > self.max_line_chars:
            return f"{side}_line_too_long"
        return None


class SplitPairs:
    """The clean pairs of several `PairReader`s (the parts of one corpus split), in order, read from the files
    anew on every iteration: a command passes over a corpus of any size more than once holding none of its
    pairs (`select-data`, `join-sentences`).

    A `PairReader`'s counts add up over its iterations; `summary()` gives those of the last complete pass.

    Args:
        readers: the `PairReader`s, in the order their pairs are read.
        with_lines: yield (line, (source, target)), not the pairs alone: `line` the number of the pair's line in the
            split's files read one after another (`PairReader.numbered`; a part's lines follow the parts' before it).
    """

    def __init__(self, readers, with_lines=False):
        self.readers = tuple(readers)
        self.with_lines = with_lines
        self._last_pass = None

    @property
    def paths(self):
        """The files read, in order."""
        return [path for reader in self.readers for path in reader.paths]

    def __iter__(self):
        return self._numbered_pairs() if self.with_lines else (pair for _, pair in self._numbered_pairs())

    def _numbered_pairs(self):
        before = [(reader.read, collections.Counter(reader.dropped)) for reader in self.readers]
        lines_before = 0
        for reader in self.readers:
            for number, pair in reader.numbered():
                yield lines_before + number, pair
            lines_before += reader.lines
        self._last_pass = {
            "read": sum(reader.read - read for reader, (read, _) in zip(self.readers, before)),
            "dropped": dict(sum((reader.dropped - dropped for reader, (_, dropped) in zip(self.readers, before)),
                                collections.Counter())),
        }

    def summary(self):
        """{"files", "read", "dropped", "dropped_lines"} of the last complete pass (None before one): the files as
        str, the lines read, the pairs dropped by reason and the first lines of each ("file:line")."""
        if self._last_pass is None:
            return None
        dropped_lines = collections.defaultdict(list)
        for reader in self.readers:
            for reason, lines in reader.dropped_lines.items():
                dropped_lines[reason] += lines
        return {"files": [str(path) for path in self.paths], **self._last_pass,
                "dropped_lines": dict(sorted(dropped_lines.items()))}
