"""StopRequest: the first SIGINT or SIGTERM is noted, a second one interrupts, the handlers come back after."""

import logging
import os
import signal
import threading
import time

import pytest

from rnnsearch_tf.training.stop_request import StopRequest


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_the_first_signal_is_noted_and_the_second_interrupts(number):
    before = signal.getsignal(number)
    with StopRequest() as stop_request:
        os.kill(os.getpid(), number)
        assert stop_request.signal_name == signal.Signals(number).name
        with pytest.raises(KeyboardInterrupt) as interrupt:
            os.kill(os.getpid(), number)
        assert interrupt.value.signal_number == number  # the command's exit status: 128 + it
    assert signal.getsignal(number) is before


def test_disabled_or_outside_the_main_thread_the_handlers_stay():
    before = signal.getsignal(signal.SIGINT)
    with StopRequest(enabled=False) as stop_request:
        assert signal.getsignal(signal.SIGINT) is before and stop_request.signal_name is None
    found = []
    thread = threading.Thread(target=lambda: found.append(StopRequest().enabled))
    thread.start()
    thread.join()
    assert found == [False]


def test_an_ignored_signal_stays_ignored():
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with StopRequest() as stop_request:
            os.kill(os.getpid(), signal.SIGINT)
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN and stop_request.signal_name is None
            assert signal.getsignal(signal.SIGTERM) == stop_request._note
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_the_warning_waits_for_the_log_record_the_signal_came_during():
    # A signal that came while the main thread wrote a log record to stderr: a warning written from the handler
    # re-entered that write (Python's buffered stderr raises RuntimeError, and the warning was lost).
    class Stream:
        lines, depth, deepest, signalled = [], 0, 0, False

        def write(self, text):
            self.depth += 1
            self.deepest = max(self.deepest, self.depth)
            if not self.signalled:
                self.signalled = True
                os.kill(os.getpid(), signal.SIGTERM)  # the handler runs at the next line, inside this write
            self.lines.append(text)
            self.depth -= 1

        def flush(self):
            pass

    stream = Stream()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("absl")
    logger.addHandler(handler)
    try:
        with StopRequest() as stop_request:
            logger.warning("step 1 | a record being written")
            deadline = time.time() + 10
            while len(stream.lines) < 2 and time.time() < deadline:
                time.sleep(0.01)
    finally:
        logger.removeHandler(handler)
    assert stop_request.signal_name == "SIGTERM" and stream.deepest == 1
    assert stream.lines[0].startswith("step 1 |") and "SIGTERM: training stops after this update" in stream.lines[1]
