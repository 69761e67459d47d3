"""A command run with a pseudo-terminal for its standard input, as a person typing lines at it."""

import contextlib
import os
import pty
import select
import subprocess


@contextlib.contextmanager
def terminal_stdin():
    """`(stdin, type_text)`: the end of a pseudo-terminal a process reads as its standard input, and a function
    typing text into it (a line with "\\n", Ctrl-D as "\\x04")."""
    terminal, other_end = pty.openpty()
    try:
        yield other_end, lambda text: os.write(terminal, text.encode())
    finally:
        os.close(terminal)
        os.close(other_end)


def typed(command, lines, environment, cwd, timeout=120):
    """Runs `command` with a terminal for standard input, types each of `lines` and reads one line of its output
    before typing the next (failing if none comes in `timeout` seconds), then Ctrl-D: `(the output lines without
    their "\\n", stderr, exit code)`."""
    with terminal_stdin() as (stdin, type_text):
        process = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=environment, cwd=cwd)
        try:
            answers = []
            for line in lines:
                type_text(line + "\n")
                assert select.select([process.stdout], [], [], timeout)[0], f"no output for {line!r} before the next"
                answer = process.stdout.readline().decode()
                assert answer.endswith("\n"), f"{answer!r}: not a whole line"
                answers.append(answer.removesuffix("\n"))
            type_text("\x04")  # Ctrl-D at the start of a line: the end of the input
            returncode = process.wait(timeout=timeout)
            return answers, process.stderr.read().decode(), returncode
        finally:
            process.kill()
