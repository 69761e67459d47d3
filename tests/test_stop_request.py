"""StopRequest: the first SIGINT or SIGTERM is noted, a second one interrupts, the handlers come back after."""

import os
import signal
import threading

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
