"""serving/model_service.py: GetModelStatus over gRPC and the REST status of the same versions."""

import grpc
import pytest
from tensorflow_serving.apis import get_model_status_pb2, model_management_pb2, model_service_pb2_grpc

from serving.model_manager import ModelManager
from serving.model_service import ModelService, model_status_json
from serving.served_model import ServedModel
from helpers.serving_test_utils import grpc_server
from helpers.versioned_exports import copy_version, staged_versions


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """Version 1 served, version 2 broken (END with its error)."""
    staged = staged_versions(tmp_path_factory)
    base_path = tmp_path_factory.mktemp("status") / "rnnsearch"
    copy_version(staged, 1, base_path)
    served = ServedModel("rnnsearch", base_path)
    served.poll()
    copy_version(staged, 2, base_path)
    (base_path / "2" / "saved_model.pb").write_bytes(b"\xff")
    assert served.poll() == [1]
    yield served
    served.close()


@pytest.fixture(scope="module")
def stub(model):
    with grpc_server(ModelService(ModelManager([model], 0)).add_to_server) as address:
        with grpc.insecure_channel(address) as channel:
            yield model_service_pb2_grpc.ModelServiceStub(channel)


def _request(name, version=None):
    request = get_model_status_pb2.GetModelStatusRequest()
    request.model_spec.name = name
    if version is not None:
        request.model_spec.version.value = version
    return request


def test_get_model_status_lists_each_version_with_its_state(stub):
    response = stub.GetModelStatus(_request("rnnsearch"), timeout=60)
    states = [(status.version, get_model_status_pb2.ModelVersionStatus.State.Name(status.state),
               status.status.error_code, bool(status.status.error_message)) for status in response.model_version_status]
    assert states == [(1, "AVAILABLE", 0, False), (2, "END", grpc.StatusCode.UNKNOWN.value[0], True)]
    one = stub.GetModelStatus(_request("rnnsearch", 1), timeout=60)
    assert [status.version for status in one.model_version_status] == [1]


def test_a_model_or_version_never_known_is_not_found(stub):
    for request, pattern in ((_request("other"), "Latest(other)"), (_request("rnnsearch", 7), "Specific(rnnsearch, 7)")):
        with pytest.raises(grpc.RpcError) as raised:
            stub.GetModelStatus(request, timeout=60)
        assert raised.value.code() == grpc.StatusCode.NOT_FOUND and pattern in raised.value.details()
    with pytest.raises(grpc.RpcError) as raised:
        stub.HandleReloadConfigRequest(model_management_pb2.ReloadConfigRequest(), timeout=60)
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_the_rest_status_is_tf_servings_json(model):
    status = model_status_json(model)["model_version_status"]
    assert status[0] == {"version": "1", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}
    assert status[1]["state"] == "END" and status[1]["status"]["error_code"] == "UNKNOWN"
    assert "DecodeError" in status[1]["status"]["error_message"]
