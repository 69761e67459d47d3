"""A command's user error as one `error: ...` line and exit code 1, for `rnnsearch <command>` and its
`python -m rnnsearch_tf.COMMAND` forms (`cli.main.run_command`).

A user error is one whose message says what to fix (a missing file, a bad value, a bad flag, training that
diverged, a lost training worker); `--verbosity=1` (absl's flag) raises it with its traceback instead.
Anything else is a bug and keeps its traceback.
"""

import signal
import sys

from absl import app
from absl import flags


def user_errors():
    """Exceptions that report a user's mistake (their message says what to fix), not a bug."""
    errors = (app.UsageError, OSError, ValueError)
    if "tensorflow" in sys.modules:
        import tensorflow as tf

        errors += (tf.errors.NotFoundError, tf.errors.DataLossError, tf.errors.PermissionDeniedError)
    diverged = sys.modules.get("rnnsearch_tf.training.training_diverged_error")  # imported by what trains
    workers = sys.modules.get("rnnsearch_tf.training.workers")
    errors += (diverged.TrainingDivergedError,) if diverged else ()
    return errors + ((workers.LostWorkerError,) if workers else ())


def with_one_line_errors(main):
    """`main(argv)` for `absl.app.run`, a user error ending it in one `error: ...` line and exit code 1, an
    interrupt in `interrupted` and exit code 130 (143 for a second SIGTERM in training)."""

    def main_with_one_line_errors(argv):
        try:
            return main(argv)
        except KeyboardInterrupt as interrupt:  # Ctrl-C, or a second signal in training (`StopRequest`: its number)
            print("interrupted", file=sys.stderr)
            sys.exit(128 + getattr(interrupt, "signal_number", signal.SIGINT))
        except user_errors() as error:
            if flags.FLAGS.verbosity > 0:
                raise
            message = getattr(error, "message", None) or str(error) or type(error).__name__
            hint = " (--help lists the flags)" if isinstance(error, app.UsageError) else ""
            print(f"error: {message}{hint}", file=sys.stderr)
            sys.exit(1)

    return main_with_one_line_errors


def parse_flags(argv):
    """absl's parsing of the command line (`app.run`'s `flags_parser`), a bad flag value ending the command in
    one `error: ...` line and exit code 1, as the commands' other mistakes (absl writes "FATAL Flags parsing
    error: ..." and a second line)."""
    try:
        return flags.FLAGS(argv)
    except flags.Error as error:
        message = " ".join(str(error).split("\n"))
        print(f"error: {message} (--help lists the flags)", file=sys.stderr)
        sys.exit(1)
