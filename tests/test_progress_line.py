"""The progress line: redrawn in place on a terminal, whole lines at an interval in a log."""

import io

from data_pipeline.progress_line import ProgressLine


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_log_files_get_whole_lines_at_the_interval_and_at_the_end():
    log = io.StringIO()
    progress = ProgressLine("translated", total=5, stream=log, interval=3600)
    for done in range(1, 6):
        progress(done)
    lines = log.getvalue().split("\n")
    assert "\r" not in log.getvalue()
    assert len(lines) == 2 and lines[1] == ""  # the final line only: the others fell inside the interval
    assert lines[0].startswith("translated [" + "#" * 30 + "] 5/5")


def test_every_call_past_the_interval_writes_a_line():
    log = io.StringIO()
    progress = ProgressLine("[train]", unit="pairs", stream=log, interval=0)
    progress(1000, ", 990 kept")
    progress(2000, ", 1,980 kept", final=True)
    lines = log.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[1].startswith("[train] 2,000 pairs  ") and lines[1].endswith("pairs/s, 1,980 kept")


def test_a_terminal_line_is_redrawn_and_ended_once():
    terminal = Terminal()
    progress = ProgressLine("scored", total=2, stream=terminal, interval=0)
    progress(1)
    progress(2)
    text = terminal.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
