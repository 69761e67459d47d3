"""Ctrl-C (SIGINT) or SIGTERM during training: stop after the running update, with a checkpoint."""

import signal
import threading

from absl import logging

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A second signal during training, which stops it at once: `signal_number` gives the command its exit status
    (128 + the number, as the first signal's stop: 130 for SIGINT, 143 for SIGTERM; `cli.errors`)."""

    def __init__(self, signal_number):
        super().__init__(signal.Signals(signal_number).name)
        self.signal_number = signal_number


class StopRequest:
    """While active (`with StopRequest():`), SIGINT and SIGTERM ask training to stop between two updates.

    The first signal is noted (`signal_name`) and the trainer, seeing it before its next update (or between two
    batches of a validation, which it abandons), stops and saves a checkpoint, as at any limit: the same command
    resumes exactly there, instead of losing the updates since the last checkpoint (the quickstart keeps one every
    500). A second signal stops at once (`Interrupted`, a KeyboardInterrupt). As Marian's `--sigterm save-and-exit`,
    for Ctrl-C too. Signal handlers can only be set in the main thread, and a worker of several cannot stop alone
    (its collective ops would wait for the others): elsewhere, or with `enabled=False`, signals keep their usual
    effect. A signal ignored when training starts stays ignored (a shell starts `cmd &` with SIGINT ignored, so that
    Ctrl-C meant for the foreground leaves background jobs alone; Python keeps that too).

    Example:
    >>> with StopRequest() as stop_request:
    ...     while not stop_request.signal_name:
    ...         update()
    """

    def __init__(self, enabled=True):
        self.enabled = enabled and threading.current_thread() is threading.main_thread()
        self.signal_name = None
        self._previous = {}

    def __enter__(self):
        if self.enabled:
            self._previous = {number: signal.signal(number, self._note) for number in SIGNALS
                              if signal.getsignal(number) is not signal.SIG_IGN}
        return self

    def __exit__(self, *exception):
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous = {}

    @staticmethod
    def restore_sigterm():
        """Gives SIGTERM back its usual effect, the process ending at once, in a run that does not stop between
        updates (a worker of several): TensorFlow's coordination service of a multi-worker run sets a handler of
        its own that only records the signal, so a worker sent SIGTERM (`docker stop`, Slurm's `scancel`) trained
        on until the SIGKILL that follows. Main thread only; a SIGTERM ignored when training starts stays so."""
        main_thread = threading.current_thread() is threading.main_thread()
        if main_thread and signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def _note(self, number, frame):
        if self.signal_name is not None:
            raise Interrupted(number)
        self.signal_name = signal.Signals(number).name
        # From a thread of its own: a handler runs inside whatever the main thread is doing, a log record's write to
        # stderr included, which a write from the handler would re-enter (a RuntimeError, and no warning); the thread
        # waits for that write to end.
        threading.Thread(target=_warn, args=(self.signal_name,), name="stop-request").start()


def _warn(signal_name):
    """The first signal's warning (`StopRequest._note`'s thread), logged from this file's line."""
    logging.warning("%s: training stops after this update (abandoning its validation, if one runs) and saves a "
                    "checkpoint (again: at once)", signal_name)
