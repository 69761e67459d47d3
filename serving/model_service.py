"""TensorFlow Serving's gRPC ModelService GetModelStatus, and the same status as the REST API writes it."""

import grpc
from google.protobuf import json_format
from tensorflow_serving.apis import get_model_status_pb2, model_management_pb2

from serving.prediction_service import add_lenient_handlers, check_well_formed, requested_version
from serving.request_status import error_message, grpc_code


def model_status(model, version=None):
    """The `GetModelStatusResponse` of a `ServedModel` (every version it has known, or `version`): each
    version's state (LOADING, AVAILABLE, UNLOADING, END) and, for one that failed to load, its error and code."""
    response = get_model_status_pb2.GetModelStatusResponse()
    for number, state, error in model.version_status(version):
        status = response.model_version_status.add(version=number, state=state)
        status.status.SetInParent()  # TF Serving always sets it: error_code OK when there is no error
        status.status.MergeFrom(error)
    return response


def model_status_json(model, version=None):
    """`model_status` as TF Serving's REST API answers `GET /v1/models/<name>[/versions/<v>]`:
    `{"model_version_status": [{"version": "1", "state": "AVAILABLE", "status": {"error_code": "OK", ...}}]}`."""
    return json_format.MessageToDict(model_status(model, version), preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True)


class ModelService:
    """Answers ModelService.GetModelStatus as `tensorflow_model_server` does (NOT_FOUND for a model or version
    it never had); HandleReloadConfigRequest answers UNIMPLEMENTED (the config is read at start).

    Args:
        models: the `serving.model_manager.ModelManager` to answer for.
    """

    def __init__(self, models):
        self.models = models

    def add_to_server(self, server):
        add_lenient_handlers(server, "tensorflow.serving.ModelService", {
            "GetModelStatus": (self.GetModelStatus, get_model_status_pb2.GetModelStatusRequest,
                               get_model_status_pb2.GetModelStatusResponse),
            "HandleReloadConfigRequest": (self.HandleReloadConfigRequest, model_management_pb2.ReloadConfigRequest,
                                          model_management_pb2.ReloadConfigResponse),
        })

    def GetModelStatus(self, request, context):
        check_well_formed(request, context)
        try:
            return model_status(self.models.model(request.model_spec.name), requested_version(request.model_spec))
        except Exception as error:
            context.abort(grpc_code(error), error_message(error))

    def HandleReloadConfigRequest(self, request, context):
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "the local server reads its models at start: restart it with "
                                                     "the new --model_config_file")
