"""The user's cache folder for what the commands derive once and reuse between processes (traced searches, Moses
rules), after the XDG base directory convention: `$XDG_CACHE_HOME/rnnsearch-tf` (`~/.cache/rnnsearch-tf` without it).
Everything there can be deleted: it is made again when missing."""

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
