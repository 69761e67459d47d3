"""The user's cache folder for what the commands derive once and reuse between processes (traced searches, Moses
rules, language names), after the XDG base directory convention: `$XDG_CACHE_HOME/rnnsearch-tf`
(`~/.cache/rnnsearch-tf` without it). Everything there can be deleted: it is made again when missing."""

import functools
import hashlib
import importlib.metadata
import json
import os
import tempfile


def cache_directory(*parts):
    """`$XDG_CACHE_HOME/rnnsearch-tf/PARTS...` (`~/.cache/...` without XDG_CACHE_HOME); not created here."""
    cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache_home, "rnnsearch-tf", *parts)


def read_json(path):
    """The JSON value of `path`, or None where it is missing or unreadable (a cache is remade, never trusted)."""
    try:
        with open(path, encoding="utf-8") as stream:
            return json.load(stream)
    except (OSError, ValueError):
        return None


def write_json(path, value):
    """Writes `value` as JSON to `path` whole or not at all: a temporary file beside it, renamed (processes may race;
    the temporary file is removed if writing fails). Raises OSError (a read-only or full disk)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            json.dump(value, stream)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def kept_answer(path, ask, fits):
    """`ask()`'s JSON value kept in the file `path`: read from there where the value found `fits`, else asked and
    written there (a cache that cannot be written is asked again next time)."""
    found = read_json(path)
    if fits(found):
        return found
    found = ask()
    try:
        write_json(path, found)
    except OSError:
        pass
    return found


def answer_file(distribution, asking_module, name):
    """`cache_directory(DISTRIBUTION, VERSION, QUESTIONS)/NAME.json`, where what a library says of `name` is kept:
    VERSION the installed distribution's, QUESTIONS a digest of the file of the module that asks (`asking_module`,
    its `__file__`): another version of the library or other questions, another folder."""
    return os.path.join(cache_directory(distribution, *_version_and_questions(distribution, asking_module)),
                        f"{name}.json")


@functools.lru_cache(maxsize=None)
def _version_and_questions(distribution, asking_module):
    """(the installed version of `distribution`, the digest of `asking_module`'s file): read once per process."""
    with open(asking_module, "rb") as source:
        questions = hashlib.sha256(source.read()).hexdigest()[:16]
    return importlib.metadata.version(distribution), questions
