"""Finds corpus files in the local data folder, downloading them from their official URLs if allowed."""

import gzip
import io
import os
import pathlib
import re
import shutil
import tarfile
import tempfile
import urllib.request
import zipfile

from data_pipeline.missing_data_error import MissingDataError

DATA_ENVIRONMENT_VARIABLE = "RNNSEARCH_DATA"
# The default the scripts use too: ../shared/data beside the checkout.
DEFAULT_DATA_ROOT = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"


def data_root_from_environment():
    """The data folder named by `RNNSEARCH_DATA`; unset, `DEFAULT_DATA_ROOT` if it exists, else None."""
    value = os.environ.get(DATA_ENVIRONMENT_VARIABLE)
    if value:
        return pathlib.Path(value)
    return DEFAULT_DATA_ROOT if DEFAULT_DATA_ROOT.is_dir() else None


def resolve(corpus_file, data_root, allow_download):
    """Returns the local path of `corpus_file`, downloading it first when missing and allowed.

    Args:
        corpus_file: a `CorpusFile`.
        data_root: the data folder (`pathlib.Path`), or None when no data folder is set.
        allow_download: whether a missing file may be fetched from `corpus_file.url`.

    Returns:
        `pathlib.Path` of an existing file: `path` under `data_root`, or the same path without `.gz`.

    Raises:
        MissingDataError: the file is missing and cannot be downloaded.
    """
    path = pathlib.Path(corpus_file.path)
    if not path.is_absolute():
        if data_root is None:
            raise MissingDataError(
                f"no data folder: set {DATA_ENVIRONMENT_VARIABLE} (or --data_dir) to the folder holding {path}"
            )
        path = pathlib.Path(data_root) / path
    candidates = [path, path.with_suffix("")] if path.suffix == ".gz" else [path]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
        if candidate.is_dir():
            raise MissingDataError(f"corpus file {candidate} is a directory; give the text file inside it")
    if corpus_file.url is None or not allow_download:
        how = "downloads are off (--allow_download)" if corpus_file.url else "it has no download URL"
        raise MissingDataError(
            f"missing corpus file {path}: expected under the data folder "
            f"({DATA_ENVIRONMENT_VARIABLE}={data_root}); {how}"
            + (f"; get it from {corpus_file.url}" if corpus_file.url else "")
        )
    _download(corpus_file, path)
    return path


def _download(corpus_file, path):
    """Fetches `corpus_file.url` and stores the file (or archive member) at `path`, gzip if `.gz`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as scratch:
        archive = pathlib.Path(scratch) / "download"
        with urllib.request.urlopen(corpus_file.url) as response, open(archive, "wb") as out:
            shutil.copyfileobj(response, out)
        data = _read_member(archive, corpus_file) if corpus_file.member else archive.read_bytes()
        if corpus_file.url.endswith(".gz") or (corpus_file.member or "").endswith(".gz"):
            data = gzip.decompress(data)
        if corpus_file.sgml:
            segments = re.findall(rb"<seg[^>]*>(.*?)</seg>", data)
            data = b"".join(segment.strip() + b"\n" for segment in segments)
        partial = pathlib.Path(scratch) / "file"
        with (gzip.open(partial, "wb") if path.suffix == ".gz" else open(partial, "wb")) as out:
            out.write(data)
        partial.replace(path)


def _read_member(archive, corpus_file):
    """The bytes of `corpus_file.member` in the downloaded zip or tar `archive`; MissingDataError naming the
    URL and the member when the archive holds no such file."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as opened:
                return opened.read(corpus_file.member)
        with tarfile.open(archive) as opened:
            member = opened.extractfile(corpus_file.member)  # None for a directory
            if member is not None:
                return io.BufferedReader(member).read()
    except KeyError:  # zipfile and tarfile: no member of that name
        pass
    raise MissingDataError(f"{corpus_file.url} holds no file {corpus_file.member}")
