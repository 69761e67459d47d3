"""serving/metrics.py: a real LocalServer's Prometheus page before and after requests over gRPC and REST, with
batching; read back with prometheus_client's own parser."""

import concurrent.futures
import json
import urllib.error
import urllib.request

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from serving.batching import BatchingParameters
from serving.grpc_client import GrpcClient
from serving.local_server import LocalServer
from serving.metrics import PROMETHEUS_PATH, REQUEST_LATENCY_BUCKETS, UNKNOWN, ServerMetrics, exponential_buckets
from serving.model_manager import ModelManager
from serving.rest_client import RestClient
from serving.served_model import ServedModel
from helpers.serving_test_utils import SENTENCES, exported_model


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    return exported_model(tmp_path_factory)[1]


@pytest.fixture(scope="module")
def served(export_dir):
    """A server with metrics at TF Serving's path, batching, and the models' loads counted in the same registry."""
    metrics = ServerMetrics()
    batching = BatchingParameters(max_batch_size=8, batch_timeout_micros=50_000, num_batch_threads=1)
    models = ModelManager([ServedModel("rnnsearch", export_dir, batching=batching, metrics=metrics)], 0).start()
    server = LocalServer(models, rest_api_port=0, metrics=metrics, metrics_path=PROMETHEUS_PATH).start()
    server.url = f"http://127.0.0.1:{server.rest_api_port}"
    yield server
    server.stop()
    models.close()


def scrape(server, path=PROMETHEUS_PATH):
    """{(sample name, frozenset of labels): value} of the server's metrics page."""
    with urllib.request.urlopen(server.url + path, timeout=60) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=")
        text = response.read().decode("utf-8")
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def value(samples, name, **labels):
    """The sum of the samples called `name` whose labels include `labels` (0 when there is none)."""
    wanted = set(labels.items())
    return sum(number for (sample, sample_labels), number in samples.items() if sample == name and wanted <= sample_labels)


def test_tf_servings_buckets_are_exponential():
    assert exponential_buckets(10, 1.8, 3) == pytest.approx([10, 18, 32.4])
    assert len(exponential_buckets(10, 1.8, 33)) == 33


def test_requests_batches_and_loads_move_the_counts_and_buckets(served, export_dir):
    before = scrape(served)
    assert value(before, ":tensorflow:cc:saved_model:load_attempt_count_total", status="success") == 1
    assert value(before, ":tensorflow:serving:model_warmup_latency_count", status="OK") == 1
    grpc_client = GrpcClient(f"127.0.0.1:{served.port}", "rnnsearch")
    rest_client = RestClient(served.url, "rnnsearch")
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda index: grpc_client.translate([SENTENCES[index % len(SENTENCES)]]), range(4)))
    rest_client.translate(SENTENCES[:2])
    with pytest.raises(grpc.RpcError):
        GrpcClient(f"127.0.0.1:{served.port}", "no_such_model").translate(["the cat"])
    with pytest.raises(RuntimeError, match="HTTP 404"):
        RestClient(served.url, "no_such_model").translate(["the cat"])
    with pytest.raises(grpc.RpcError):
        grpc_client.predict({}, "no_such_signature")
    after = scrape(served)

    def moved(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved(":tensorflow:serving:request_count_total", model_name="rnnsearch", status="OK") == 5
    assert moved(":tensorflow:serving:request_count_total", model_name="rnnsearch", status="INVALID_ARGUMENT") == 1
    assert moved(":tensorflow:serving:request_count_total", model_name=UNKNOWN, status="NOT_FOUND") == 2
    # TF Serving's labels; like it, only the answered requests are timed there (the failed ones: per signature).
    assert moved(":tensorflow:serving:request_latency_count", API="Predict", entrypoint="GRPC") == 4
    assert moved(":tensorflow:serving:request_latency_count", entrypoint="REST") == 1
    assert moved(":rnnsearch:serving:signature_request_latency_count", status="NOT_FOUND") == 2
    assert moved(":rnnsearch:serving:signature_request_latency_count", version="1", signature_name="translate") == 5
    # Each request falls in one bucket of each cumulative histogram: the +Inf bucket moved by all of them.
    assert moved(":tensorflow:serving:request_latency_bucket", model_name="rnnsearch", le="+Inf") == 5
    assert moved(":tensorflow:serving:request_latency_bucket", le="10.0") == 0  # none took 10 us
    rows = moved(":tensorflow:serving:batching_session:processed_batch_size_sum")
    batches = moved(":tensorflow:serving:batching_session:processed_batch_size_count")
    assert rows == 4 + 2 and 1 <= batches <= 5  # every sentence ran in a batch; 4 concurrent ones share some
    assert moved(":tensorflow:serving:batching_session:wrapped_run_count_total") == batches
    assert moved(":tensorflow:serving:batching_session:queuing_latency_count") == 5
    assert moved(":tensorflow:serving:batching_session:queuing_latency_sum") > 0
    grpc_client.close()


def test_made_up_signature_names_share_one_label_and_known_ones_keep_theirs(served):
    """A client naming signatures the model lacks cannot grow the server's memory and metrics page: every such
    request is counted under one label value; a failed request for a signature the model has keeps its name."""
    made_up = [f"made_up_{index}" for index in range(6)]
    rest_client = RestClient(served.url, "rnnsearch")
    grpc_client = GrpcClient(f"127.0.0.1:{served.port}", "rnnsearch")
    before = scrape(served)
    for name in made_up:
        with pytest.raises(RuntimeError, match="HTTP 400"):
            rest_client.translate(["the cat"], signature_name=name)
        with pytest.raises(grpc.RpcError):
            grpc_client.predict({}, name)
    with pytest.raises(RuntimeError, match="HTTP 400"):
        rest_client.predict({"no_such_input": ["the cat"]}, "translate")
    with pytest.raises(grpc.RpcError):
        grpc_client.predict({"no_such_input": [b"the cat"]}, "translate")
    after = scrape(served)
    grpc_client.close()

    def moved(**labels):
        return (value(after, ":rnnsearch:serving:signature_request_latency_count", **labels) -
                value(before, ":rnnsearch:serving:signature_request_latency_count", **labels))

    assert not [labels for _, labels in after if any(name in dict(labels).values() for name in made_up)]
    assert moved(signature_name=UNKNOWN, status="INVALID_ARGUMENT") == 2 * len(made_up)
    assert moved(signature_name="translate", status="INVALID_ARGUMENT", version="1") == 2  # REST and gRPC
    assert len(after) - len(before) <= 3 * (len(REQUEST_LATENCY_BUCKETS) + 4)  # a few new label sets, not one a name


def test_made_up_model_names_share_one_label_and_cannot_grow_the_page(served):
    """Requests naming models the server does not serve, over REST and gRPC (one name 60 KB long), are counted under
    one `model_name` value: the page is as long after 50 of them as after one (its counts aside)."""
    grpc_client = GrpcClient(f"127.0.0.1:{served.port}", "bogus0")

    def ask(index, name_length=10):
        name = f"bogus{index}".ljust(name_length, "x")
        with pytest.raises(RuntimeError, match="HTTP 404"):
            RestClient(served.url, name).translate(["the cat"])
        grpc_client.model_name = name
        with pytest.raises(grpc.RpcError) as missing:
            grpc_client.predict({"text": [b"the cat"]}, "translate")
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND

    ask(0)
    first = scrape(served)
    for index in range(1, 50):
        ask(index, name_length=60_000 if index == 1 else 10)
    after = scrape(served)
    grpc_client.close()
    assert set(after) == set(first)  # no new label set: only counts moved
    assert not [labels for _, labels in after if any("bogus" in label for label in dict(labels).values())]
    assert value(after, ":tensorflow:serving:request_count_total", model_name=UNKNOWN, status="NOT_FOUND") - value(
        first, ":tensorflow:serving:request_count_total", model_name=UNKNOWN, status="NOT_FOUND") == 2 * 49


def test_without_a_path_the_page_is_404_and_servers_count_apart(export_dir):
    from serving.servable import Servable

    servable = Servable(export_dir, "rnnsearch")
    server = LocalServer(ModelManager.serving(servable), rest_api_port=0).start()
    try:
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{server.rest_api_port}{PROMETHEUS_PATH}", timeout=60)
        assert missing.value.code == 404 and "unknown path" in json.loads(missing.value.read())["error"]
        GrpcClient(f"127.0.0.1:{server.port}", "rnnsearch").translate(["the cat"])
        counted = server.metrics.exposition().decode("utf-8")
        assert ':tensorflow:serving:request_count_total{model_name="rnnsearch",status="OK"} 1.0' in counted
    finally:
        server.stop()
    assert b"request_count_total{" not in ServerMetrics().exposition()  # another server's registry is its own
