"""Line-oriented text files of the command-line tools; "-" is stdin or stdout."""

import contextlib
import os
import pathlib
import sys
import tempfile


def read_lines(path):
    """The lines of a UTF-8 file (or stdin for "-"), without their line ends.

    Lines end at "\\n" only (a "\\r" before it is dropped; Unicode line separators stay inside the line);
    invalid UTF-8 bytes become U+FFFD, as `Translator` would make them; a byte order mark opening the input is
    skipped (Python's "utf-8-sig", as `numbered_lines(bom=True)` and build-data's `PairReader` do), so that it
    reaches no tokenizer as a word.
    """
    return list(each_line(path))


def each_line(path):
    """`read_lines`' lines one at a time as they are read (a terminal's as they are typed)."""
    stdin = path == "-"
    with open(sys.stdin.fileno() if stdin else path, encoding="utf-8-sig", errors="replace", newline="\n",
              closefd=not stdin) as stream:
        for line in stream:
            yield line.removesuffix("\n").removesuffix("\r")


def numbered_lines(path, error, bom=False):
    """(number from 1, line without its line end) of the UTF-8 file `path`, for files whose lines a message names:
    a line that is not UTF-8 raises `error(number, problem)`; with `bom`, a byte-order mark at the start is
    skipped."""
    with open(path, "rb") as stream:
        for number, raw in enumerate(stream, start=1):
            try:
                yield number, raw.decode("utf-8-sig" if bom and number == 1 else "utf-8").rstrip("\r\n")
            except UnicodeDecodeError as decode_error:
                raise error(number, f"not UTF-8 ({decode_error.reason} at byte {decode_error.start})") from None


def input_name(path):
    """How a message names an input of `read_lines`: "stdin" for "-", else the path."""
    return "stdin" if path == "-" else path


def check_line_for_line(given, per, what):
    """Raises `ValueError`, naming both files and their line counts, unless the file `given` has one line per
    line of the file `per`: each a `(flag, path, lines)`; `what` is what a line of `given` holds ("target
    line"), said as "give one {what} per {per's flag} line"."""
    (flag, path, lines), (per_flag, per_path, per_lines) = given, per
    if len(lines) != len(per_lines):
        raise ValueError(
            f"{flag} {input_name(path)} has {len(lines)} line{'' if len(lines) == 1 else 's'} but {per_flag} "
            f"{input_name(per_path)} has {len(per_lines)}: give one {what} per {per_flag.lstrip('-')} line"
        )


def check_writable(path, flag):
    """Raises, naming `flag` and `path`, where `open_output(path)` would fail: a command checks its outputs
    before its work, so that a mistyped path does not lose the work. "-" (stdout) always passes."""
    if path == "-" or path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(f"{flag}={path} is a folder: give the path of a file")
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"{flag}={path}: the folder {folder} does not exist")
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        raise PermissionError(f"{flag}={path} cannot be written")


def check_writable_folder(folder, flag, beside=False):
    """Raises, naming `flag` and `folder`, where a command could not create the folder `folder` (parents
    included) or write in it: `check_writable` for a command that writes a folder, called before its work. With
    `beside`, the folder's parent is the one written (a command that writes the folder beside it and renames it
    into place). Tried by making and removing an empty folder in the nearest folder of the path that exists: the
    permission bits say nothing to root, nor of a folder such as /proc where no file can be made."""
    existing = os.path.realpath(folder)  # where a command's `Path.resolve()` writes, through links
    if beside:
        existing = os.path.dirname(existing)
    while not os.path.exists(existing):  # the nearest part of the path that exists
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise NotADirectoryError(f"{flag}={folder}: {existing} is a file, not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".writable-", dir=existing))
    except OSError:
        raise PermissionError(f"{flag}={folder} cannot be written: no folder can be made in {existing}") from None


def check_not_inputs(folder, file_names, inputs, flag):
    """Raises, naming `flag` and the file, where one of the files `file_names` a command writes in `folder` is
    one of the `inputs` it reads (the same file by any path or link): opening it for writing would empty the
    input before it is read again."""
    for name in file_names:
        output = os.path.join(folder, name)
        for path in inputs:
            if os.path.exists(output) and os.path.samefile(output, path):
                raise ValueError(f"{flag}={folder}: its {name} is the input {path}, which writing it would "
                                 "empty: give another folder")


@contextlib.contextmanager
def replaced_files(folder, names):
    """Paths through which a command writes the files `names` of `folder` (created if missing) whole or not at all:
    each `.NAME.incomplete`, renamed to NAME when the block ends, deleted where it raises. A command killed or
    failing while it writes leaves the files of its previous run as they were. The last name is the record of the
    others (a summary): it is removed before they are renamed and renamed after them, so that a record lies only
    beside the files it describes. Several renames are not one: a kill in the instant between two leaves some files
    new and some old, and no record, which is how a reader tells a folder to make again."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    temporary = [folder / f".{name}.incomplete" for name in names]
    try:
        yield temporary
        (folder / names[-1]).unlink(missing_ok=True)
        for path, name in zip(temporary, names):
            os.replace(path, folder / name)
    except BaseException:
        for path in temporary:
            path.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def open_output(path):
    """A UTF-8 text stream writing `path` (or stdout for "-"), with "\\n" line ends."""
    if path == "-":
        stream = open(sys.stdout.fileno(), "w", encoding="utf-8", newline="\n", closefd=False)
    else:
        stream = open(path, "w", encoding="utf-8", newline="\n")
    with stream:
        yield stream


def line_numbers(numbers, most=20):
    """How a message names input lines (`numbers` from 1): "line 4", "lines 1, 7", or the first `most`
    and the count, "lines 1, 2, ..., 20, ... (25 lines)"."""
    shown = ", ".join(map(str, numbers[:most]))
    if len(numbers) > most:
        shown += f", ... ({len(numbers)} lines)"
    return f"line{'s' if len(numbers) > 1 else ''} {shown}"
