"""Finds corpus files in the local data folder: the files themselves, else read from the archives a user
downloaded by hand (WMT'14's `.tgz`/`.tar` files), else downloaded from their official URLs if allowed."""

import contextlib
import gzip
import os
import pathlib
import re
import shutil
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile
import zlib

from data_pipeline.missing_data_error import MissingDataError

DATA_ENVIRONMENT_VARIABLE = "RNNSEARCH_DATA"
# The default the scripts use too: ../shared/data beside the checkout.
DEFAULT_DATA_ROOT = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"
_SEGMENT = re.compile(rb"<seg[^>]*>(.*?)</seg>")  # one WMT SGML segment: <seg id="1">text</seg>


def data_root_from_environment(given=None):
    """The data folder: `given` (a command's `--data_dir`) when set, else the one named by `RNNSEARCH_DATA`;
    both unset, `DEFAULT_DATA_ROOT` if it exists, else None."""
    value = given or os.environ.get(DATA_ENVIRONMENT_VARIABLE)
    if value:
        return pathlib.Path(value)
    return DEFAULT_DATA_ROOT if DEFAULT_DATA_ROOT.is_dir() else None


def archive_name(corpus_file):
    """The file name of the archive holding `corpus_file` (its URL's last part, e.g. `dev.tgz`); None when it
    is not an archive member."""
    if corpus_file.member is None or corpus_file.url is None:
        return None
    return pathlib.PurePosixPath(urllib.parse.urlparse(corpus_file.url).path).name


def resolve(corpus_file, data_root, allow_download):
    """Returns the local path of `corpus_file`, extracting it from its archive or downloading it first.

    Looked for in this order: the file at `path` under the data folder, or the same path without `.gz`;
    its archive (`archive_name`) in the file's own folder (`<data>/wmt14/`) or in the data folder itself,
    whose member is then extracted to `path`; with `allow_download`, the archive downloaded into the file's
    folder, kept there under its own name (so the archive's other files are read from it, not downloaded
    again), and extracted the same way. An extracted file is written whole or not at all.

    Args:
        corpus_file: a `CorpusFile`.
        data_root: the data folder (`pathlib.Path`), or None when no data folder is set.
        allow_download: whether a missing file may be fetched from `corpus_file.url`.

    Returns:
        `pathlib.Path` of an existing file: `path` under `data_root`, or the same path without `.gz`.

    Raises:
        MissingDataError: the file is missing and cannot be extracted or downloaded, or its archive holds
            no such member (the message names the archive and the member).
        ValueError: its archive cannot be read (truncated or corrupt); the message names the archive.
    """
    path = _expected_path(corpus_file, data_root)
    candidates = [path, path.with_suffix("")] if path.suffix == ".gz" else [path]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
        if candidate.is_dir():
            raise MissingDataError(f"corpus file {candidate} is a directory; give the text file inside it")
    archives = [folder / archive_name(corpus_file) for folder in _archive_folders(path, data_root, corpus_file)]
    archive = next((archive for archive in archives if archive.is_file()), None)
    if archive is None and (corpus_file.url is None or not allow_download):
        raise MissingDataError(_missing_message(corpus_file, path, data_root, archives))
    path.parent.mkdir(parents=True, exist_ok=True)
    if archive is not None:
        _extract(archive, corpus_file, path)
    elif corpus_file.member is not None:
        _extract(_download(corpus_file.url, archives[0]), corpus_file, path)
    else:  # the URL is the file itself
        with tempfile.TemporaryDirectory(dir=path.parent) as scratch:
            _extract(_download(corpus_file.url, pathlib.Path(scratch) / "download"), corpus_file, path)
    return path


def _expected_path(corpus_file, data_root):
    """`corpus_file.path` under `data_root` (an absolute path as it is); MissingDataError when none is set."""
    path = pathlib.Path(corpus_file.path)
    if path.is_absolute():
        return path
    if data_root is None:
        raise MissingDataError(
            f"no data folder: set {DATA_ENVIRONMENT_VARIABLE} (or --data_dir) to the folder holding {path}"
        )
    return pathlib.Path(data_root) / path


def _archive_folders(path, data_root, corpus_file):
    """Where the archive of `corpus_file` may lie: beside `path` first, then in the data folder; none when
    the file is no archive member."""
    if archive_name(corpus_file) is None:
        return []
    folders = [path.parent] + ([pathlib.Path(data_root)] if data_root is not None else [])
    return list(dict.fromkeys(folders))


def _missing_message(corpus_file, path, data_root, archives):
    """One line: the path expected, the archive looked for, why nothing was downloaded, and where from; for a
    user's own file (an absolute path that no download serves, e.g. `--train_source`), its path alone."""
    if pathlib.Path(corpus_file.path).is_absolute() and corpus_file.url is None:
        return f"missing corpus file {path}"
    how = "downloads are off (--allow_download)" if corpus_file.url else "it has no download URL"
    archive = ""
    if archives:
        folders = " or ".join(str(archive.parent) for archive in archives)
        archive = f", or its archive {archives[0].name} (member {corpus_file.member}) in {folders}"
    return (
        f"missing corpus file {path}: expected under the data folder "
        f"({DATA_ENVIRONMENT_VARIABLE}={data_root}){archive}; {how}"
        + (f"; get it from {corpus_file.url}" if corpus_file.url else "")
    )


def _download(url, destination):
    """Fetches `url` into `destination` through a partial file renamed when whole; returns `destination`."""
    with tempfile.TemporaryDirectory(dir=destination.parent) as scratch:
        partial = pathlib.Path(scratch) / destination.name
        with urllib.request.urlopen(url) as response, open(partial, "wb") as out:
            shutil.copyfileobj(response, out)
        partial.replace(destination)
    return destination


def _extract(source, corpus_file, path):
    """Writes the text of `corpus_file` read from `source` (its archive, or the downloaded file itself) to
    `path`, gzip if `path` ends in `.gz`: a gzip member is decompressed (or copied as it is into a `.gz`
    path, once it has been read to its end), SGML keeps its segments one per line. Through a scratch file
    renamed when whole."""
    compressed = (corpus_file.member or corpus_file.url).endswith(".gz")
    with tempfile.TemporaryDirectory(dir=path.parent) as scratch:
        partial = pathlib.Path(scratch) / path.name
        with _open_source(source, corpus_file.member) as stream:
            if compressed and path.suffix == ".gz" and not corpus_file.sgml:
                with open(partial, "wb") as out:
                    shutil.copyfileobj(stream, out)
                _read_to_the_end(partial)  # a truncated gzip member is refused here, not cached
            else:
                text = gzip.GzipFile(fileobj=stream) if compressed else stream
                with _open_output(partial, compress=path.suffix == ".gz") as out:
                    _copy_text(text, out, corpus_file.sgml)
        partial.replace(path)


def _read_to_the_end(gzip_path):
    """Decompresses `gzip_path` to its end, raising EOFError or gzip.BadGzipFile if it is cut short or corrupt."""
    with gzip.open(gzip_path, "rb") as stream:
        while stream.read(1 << 20):
            pass


def _open_output(partial, compress):
    """`partial` opened for binary writing, through gzip (level 6, gzip's own default) when `compress`."""
    return gzip.open(partial, "wb", compresslevel=6) if compress else open(partial, "wb")


def _copy_text(text, out, sgml):
    """Copies the binary stream `text` to `out`; SGML: only its `<seg>` texts, stripped, one per line."""
    if not sgml:
        shutil.copyfileobj(text, out)
        return
    for line in text:
        for segment in _SEGMENT.findall(line):
            out.write(segment.strip() + b"\n")


@contextlib.contextmanager
def _open_source(source, member):
    """A binary stream of `member` of the zip or tar archive `source` (of `source` itself when `member` is
    None). MissingDataError naming the archive and the member when it holds no such file; ValueError naming
    the archive when it or the member cannot be read."""
    try:
        if member is None:
            with open(source, "rb") as stream:
                yield stream
        elif zipfile.is_zipfile(source):
            with zipfile.ZipFile(source) as archive:
                if member not in archive.namelist():
                    raise MissingDataError(f"{source} holds no file {member}")
                with archive.open(member) as stream:
                    yield stream
        else:
            with tarfile.open(source) as archive:  # read up to the member only: one pass over a .tgz
                found = next((info for info in archive if info.name == member and info.isfile()), None)
                if found is None:
                    raise MissingDataError(f"{source} holds no file {member}")
                yield archive.extractfile(found)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise ValueError(
            f"{source}: {error} (reading {member or 'it'}: a truncated or corrupt archive; download it again)"
        ) from error
