"""Files that take seconds to make (exports, their translations), made once per test session and read by every
test worker: pytest-xdist runs the workers as separate processes, which share the parent folder of their
temporary folders (xdist's documented recipe for a session fixture made once)."""

import fcntl
import json
import os
import shutil

_MADE = {}


def made_once(tmp_path_factory, name, make):
    """`make(folder)`'s result (anything JSON writes), made in `folder` by the first worker that asks and read back
    by the others (they wait for it, a lock held while it is made).

    Args:
        tmp_path_factory: pytest's session fixture.
        name: the folder's name, one per kind of files.
        make: called with the empty folder (a `pathlib.Path`); what it returns is recorded beside it.
    """
    if name not in _MADE:
        root = tmp_path_factory.getbasetemp()
        if os.environ.get("PYTEST_XDIST_WORKER"):
            root = root.parent  # the session's folder, above each worker's own
        folder, record = root / f"made-once-{name}", root / f"made-once-{name}.json"
        with open(root / f"made-once-{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not record.exists():
                shutil.rmtree(folder, ignore_errors=True)  # a worker that failed while making it
                folder.mkdir()
                record.write_text(json.dumps(make(folder)))
        _MADE[name] = json.loads(record.read_text())
    return _MADE[name]
