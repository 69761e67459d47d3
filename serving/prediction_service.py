"""TensorFlow Serving's gRPC PredictionService (Predict, GetModelMetadata) over one `Servable`."""

import grpc
import tensorflow as tf
from tensorflow_serving.apis import get_model_metadata_pb2, predict_pb2, prediction_service_pb2_grpc

# tf.errors codes are the gRPC status codes, by number.
_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}


class PredictionService(prediction_service_pb2_grpc.PredictionServiceServicer):
    """Answers Predict and GetModelMetadata as `tensorflow_model_server` does; never raises.

    A request for another model or version answers NOT_FOUND; a bad signature, input name, dtype or
    shape, a malformed TensorProto, or an input the graph refuses answers INVALID_ARGUMENT with the
    reason; any other failure answers its TensorFlow status (INTERNAL when it has none). Classify,
    Regress and MultiInference answer UNIMPLEMENTED (the servicer's default).

    Args:
        servable: the `Servable` to answer for.
        max_input_elements: the most elements an input tensor may declare; a TensorProto can declare a
            huge shape in a few bytes (its values are then repeated), so this bounds the memory one
            request can make the server allocate.
    """

    def __init__(self, servable, max_input_elements=1 << 22):
        self.servable = servable
        self.max_input_elements = max_input_elements

    def _check_model_spec(self, model_spec, context):
        if model_spec.name != self.servable.model_name:
            context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"Servable not found for request: model {model_spec.name!r}; this server has "
                f"{self.servable.model_name!r}",
            )
        if model_spec.HasField("version") and model_spec.version.value != self.servable.version:
            context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"version {model_spec.version.value} of {model_spec.name!r} is not served (serving "
                f"{self.servable.version})",
            )

    def Predict(self, request, context):
        self._check_model_spec(request.model_spec, context)
        for name, proto in request.inputs.items():
            elements = 1
            for dimension in proto.tensor_shape.dim:
                elements *= max(dimension.size, 0)
            if elements > self.max_input_elements:
                context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"input {name!r} declares {elements} elements; at most {self.max_input_elements} are accepted",
                )
        try:
            inputs = {name: tf.make_ndarray(proto) for name, proto in request.inputs.items()}
        except Exception as error:  # a malformed TensorProto of any kind is the caller's mistake
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed input tensor: {error}")
        try:
            outputs = self.servable.predict(
                request.model_spec.signature_name, inputs, tuple(request.output_filter)
            )
        except ValueError as error:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except tf.errors.OpError as error:
            context.abort(_STATUS_CODES.get(error.error_code, grpc.StatusCode.INTERNAL), error.message)
        except Exception as error:  # the server outlives any failure of one request
            context.abort(grpc.StatusCode.INTERNAL, f"{type(error).__name__}: {error}")
        response = predict_pb2.PredictResponse()
        response.model_spec.name = self.servable.model_name
        response.model_spec.version.value = self.servable.version
        response.model_spec.signature_name = (
            request.model_spec.signature_name or tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY
        )
        for name, value in outputs.items():
            response.outputs[name].CopyFrom(tf.make_tensor_proto(value))
        return response

    def GetModelMetadata(self, request, context):
        self._check_model_spec(request.model_spec, context)
        unknown = sorted(set(request.metadata_field) - {"signature_def"})
        if unknown or not request.metadata_field:
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"metadata_field must be ['signature_def'], got {list(request.metadata_field)}",
            )
        signature_defs = get_model_metadata_pb2.SignatureDefMap()
        for name, signature_def in self.servable.signature_defs.items():
            signature_defs.signature_def[name].CopyFrom(signature_def)
        response = get_model_metadata_pb2.GetModelMetadataResponse()
        response.model_spec.name = self.servable.model_name
        response.model_spec.version.value = self.servable.version
        response.metadata["signature_def"].Pack(signature_defs)
        return response
