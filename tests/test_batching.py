"""serving/batching.py: TF Serving's batching parameters and the request batcher."""

import concurrent.futures
import threading
import time

import numpy as np
import pytest
import tensorflow as tf

from serving.batching import BatchingParameters, RequestBatcher


class RecordingRun:
    """A signature that upper-cases its `text` rows and records the batch sizes it was called with."""

    def __init__(self, blocked=None):
        self.batch_rows = []
        self.entered = threading.Event()
        self.blocked = blocked

    def __call__(self, signature_name, inputs):
        self.batch_rows.append(len(inputs["text"]))
        self.entered.set()
        if self.blocked is not None:
            self.blocked.wait(10)
        text = inputs["text"]
        return {
            "upper": np.array([value.upper() for value in text], dtype=object),
            "length": np.array([[len(value)] * 3 for value in text]),  # [rows, 3]: split by rows too
            "signature": np.array([signature_name.encode()] * len(text), dtype=object),
        }


def test_parameters_round_trip_through_tf_servings_text_format():
    parameters = BatchingParameters(max_batch_size=8, batch_timeout_micros=0, num_batch_threads=3,
                                    max_enqueued_batches=5)
    assert BatchingParameters.from_text(parameters.to_text()) == parameters
    text = "# comment\nmax_batch_size { value: 64 }\n\npad_variable_length_inputs: true\nnum_batch_threads { value: 4 }\n"
    assert BatchingParameters.from_text(text) == BatchingParameters(max_batch_size=64, num_batch_threads=4)


@pytest.mark.parametrize("text, message", [
    ("max_batch_size { value: 8 }\nmax_batch_sise { value: 8 }\n", "f.txt:2: unknown batching parameter 'max_batch_sise'"),
    ("max_batch_size { value: eight }\n", "f.txt:1: max_batch_size must be an integer, got 'eight'"),
    ("max_batch_size 8\n", "f.txt:1: expected 'name { value: N }'"),
    ("num_batch_threads { value: 0 }\n", "f.txt: BatchingParameters.num_batch_threads must be at least 1"),
])
def test_a_bad_parameters_file_names_its_line(text, message):
    with pytest.raises(ValueError, match=message.replace("{", r"\{").replace("}", r"\}")):
        BatchingParameters.from_text(text, "f.txt")


def test_concurrent_requests_run_together_and_each_gets_its_own_rows():
    run = RecordingRun()
    batcher = RequestBatcher(run, BatchingParameters(max_batch_size=16, batch_timeout_micros=200_000,
                                                     num_batch_threads=1))
    requests = [[f"request {index} row {row}".encode() for row in range(1 + index % 3)] for index in range(12)]
    with concurrent.futures.ThreadPoolExecutor(12) as pool:
        answers = list(pool.map(
            lambda rows: batcher("translate", {"text": np.array(rows, dtype=object)}), requests))
    batcher.close()
    for rows, answer in zip(requests, answers):
        assert answer["upper"].tolist() == [row.upper() for row in rows]
        np.testing.assert_array_equal(answer["length"], [[len(row)] * 3 for row in rows])
    assert sum(run.batch_rows) == sum(len(rows) for rows in requests)
    assert max(run.batch_rows) <= 16
    assert len(run.batch_rows) < len(requests)  # some requests shared a batch


def test_signatures_are_never_mixed_in_one_batch():
    run = RecordingRun()
    batcher = RequestBatcher(run, BatchingParameters(batch_timeout_micros=100_000, num_batch_threads=1))
    calls = [("translate" if index % 2 else "score", [f"{index}".encode()]) for index in range(8)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda call: batcher(call[0], {"text": np.array(call[1], dtype=object)}), calls))
    batcher.close()
    for (signature_name, _), answer in zip(calls, answers):
        assert answer["signature"].tolist() == [signature_name.encode()]


def test_a_request_larger_than_a_batch_runs_alone():
    run = RecordingRun()
    batcher = RequestBatcher(run, BatchingParameters(max_batch_size=2, batch_timeout_micros=0))
    answer = batcher("translate", {"text": np.array([b"a", b"b", b"c"], dtype=object)})
    batcher.close()
    assert answer["upper"].tolist() == [b"A", b"B", b"C"]
    assert run.batch_rows == [3]


def test_inputs_of_different_row_counts_are_refused_before_they_join_a_batch():
    run = RecordingRun()
    batcher = RequestBatcher(run, BatchingParameters(batch_timeout_micros=0, num_batch_threads=1))
    uneven = {"text": np.array([b"a", b"b"], dtype=object), "prefix": np.array([b"x"], dtype=object)}
    with pytest.raises(ValueError, match="must have equal 0th-dimension size; got 'prefix' 1, 'text' 2"):
        batcher("translate_prefix", uneven)  # joined by position, its rows would pair with another request's
    batcher.close()
    assert run.batch_rows == []


def test_parameters_are_capped_at_an_exports_maximum_batch_size():
    parameters = BatchingParameters(max_batch_size=16, num_batch_threads=3)
    assert parameters.capped(2) == BatchingParameters(max_batch_size=2, num_batch_threads=3)
    assert parameters.capped(1000) is parameters and parameters.capped(None) is parameters


def test_a_full_queue_answers_unavailable_instead_of_waiting():
    release = threading.Event()
    run = RecordingRun(blocked=release)
    batcher = RequestBatcher(run, BatchingParameters(max_batch_size=1, batch_timeout_micros=0,
                                                     num_batch_threads=1, max_enqueued_batches=1))
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        running = pool.submit(batcher, "translate", {"text": np.array([b"first"], dtype=object)})
        assert run.entered.wait(10)  # the batch thread is busy with the first request
        waiting = pool.submit(batcher, "translate", {"text": np.array([b"second"], dtype=object)})
        while batcher.waiting_batches == 0:  # the second request is queued
            time.sleep(0.01)
        with pytest.raises(tf.errors.UnavailableError, match="the batch queue is full"):
            batcher("translate", {"text": np.array([b"third"], dtype=object)})
        release.set()
        assert running.result()["upper"].tolist() == [b"FIRST"]
        assert waiting.result()["upper"].tolist() == [b"SECOND"]
    batcher.close()
    with pytest.raises(tf.errors.UnavailableError, match="shutting down"):
        batcher("translate", {"text": np.array([b"late"], dtype=object)})


def test_an_error_reaches_every_request_of_its_batch():
    def failing(signature_name, inputs):
        raise tf.errors.InvalidArgumentError(None, None, f"refused {len(inputs['text'])} rows")

    batcher = RequestBatcher(failing, BatchingParameters(batch_timeout_micros=100_000, num_batch_threads=1))
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(batcher, "translate", {"text": np.array([b"x"], dtype=object)}) for _ in range(4)]
        for future in futures:
            with pytest.raises(tf.errors.InvalidArgumentError, match="refused"):
                future.result()
    batcher.close()


def test_each_batch_reports_its_rows_and_each_requests_time_in_the_queue():
    reported = []
    run = RecordingRun()
    timeout = 0.05
    batcher = RequestBatcher(run, BatchingParameters(max_batch_size=16, batch_timeout_micros=int(timeout * 1e6),
                                                     num_batch_threads=1),
                             on_batch=lambda *report: reported.append(report))
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        list(pool.map(lambda rows: batcher("translate", {"text": np.array([b"a"] * rows, object)}), (1, 2, 3)))
    batcher.close()
    assert [rows for _, rows, _ in reported] == run.batch_rows and sum(run.batch_rows) == 6
    assert {signature for signature, _, _ in reported} == {"translate"}
    waits = [seconds for _, _, queued in reported for seconds in queued]
    assert len(waits) == 3 and all(0 <= seconds < 10 for seconds in waits)
    assert max(waits) >= timeout * 0.9  # the first of a batch waited for the others the timeout long
