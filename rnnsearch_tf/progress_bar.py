"""A one-line progress bar on stderr for the command-line tools."""

import sys
import time


class ProgressBar:
    """Redraws `label [#####     ] done/total  rate items/s` in place; ends the line when done == total.

    Args:
        total: number of items.
        label: what is counted, e.g. "translated".
        stream: where to draw (stderr by default, so it never mixes with output on stdout).
        width: characters of the bar.

    Example:
    >>> progress = ProgressBar(3003, "translated")
    >>> batch_translator.translate(sentences, progress=progress)
    """

    def __init__(self, total, label, stream=None, width=30):
        self.total = total
        self.label = label
        self.stream = stream or sys.stderr
        self.width = width
        self.start = time.monotonic()

    def __call__(self, done):
        filled = self.width * done // max(self.total, 1)
        rate = done / max(time.monotonic() - self.start, 1e-9)
        self.stream.write(
            f"\r{self.label} [{'#' * filled}{' ' * (self.width - filled)}] {done}/{self.total}  {rate:.1f} sentences/s"
        )
        if done >= self.total:
            self.stream.write("\n")
        self.stream.flush()
