"""The one progress line of every command: redrawn in place on a terminal, plain lines in a log file."""

import sys
import time


class ProgressLine:
    """`label [#####     ] done/total  rate unit/s  detail` on stderr.

    On a terminal the line is redrawn in place (at most every `interval` seconds, 0.5 by default) and
    ended when done; when the stream is a file or pipe (a log), a plain line is written every
    `interval` seconds (30 by default) and at the end, as tqdm and Keras' Progbar do, so a log never
    holds thousands of carriage returns. Without `total` the bar is left out.

    Args:
        label: what is counted, e.g. "translated".
        total: number of items, or None when unknown.
        unit: the name of an item, for the rate.
        stream: where to write (stderr by default, so it never mixes with output on stdout).
        interval: seconds between two lines (see above).
        width: characters of the bar.

    Call arguments:
        done: items done so far.
        detail: text appended to the line.
        final: whether this is the last call (default: `done >= total`).

    Example:
    >>> progress = ProgressLine("translated", total=3003)
    >>> batch_translator.translate(sentences, progress=progress)
    """

    def __init__(self, label, total=None, unit="sentences", stream=None, interval=None, width=30):
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = stream or sys.stderr
        self.is_terminal = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.interval = interval if interval is not None else (0.5 if self.is_terminal else 30.0)
        self.width = width
        self.start = self.shown = time.monotonic()

    def __call__(self, done, detail="", final=None):
        if final is None:
            final = self.total is not None and done >= self.total
        now = time.monotonic()
        if not final and now - self.shown < self.interval:
            return
        self.shown = now
        text = self.label
        if self.total is not None:
            filled = self.width * done // max(self.total, 1)
            text += f" [{'#' * filled}{' ' * (self.width - filled)}] {done}/{self.total}"
        else:
            text += f" {done:,} {self.unit}"
        text += f"  {done / max(now - self.start, 1e-9):,.1f} {self.unit}/s{detail}"
        if self.is_terminal:
            self.stream.write("\r" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
