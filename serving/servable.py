"""The newest version of a SavedModel base path, called the way TensorFlow Serving's Predict calls it."""

import os

import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2


def newest_version(model_base_path):
    """(version, path) of the largest integer subfolder holding a saved_model.pb, as TF Serving picks it."""
    versions = []
    for name in tf.io.gfile.listdir(model_base_path):
        name = name.strip("/")
        if name.isdigit() and tf.io.gfile.exists(os.path.join(model_base_path, name, "saved_model.pb")):
            versions.append(int(name))
    if not versions:
        raise FileNotFoundError(f"no version folder (an integer name with a saved_model.pb) in {model_base_path}")
    return max(versions), os.path.join(model_base_path, str(max(versions)))


class Servable:
    """A loaded SavedModel version whose signatures are called with NumPy inputs checked like TF Serving.

    Args:
        model_base_path: folder of integer version subfolders (`serving/export.py` writes them).
        model_name: the name requests must use.

    Example:
    >>> servable = Servable("exports/rnnsearch", "rnnsearch")
    >>> servable.predict("translate", {"text": np.array([b"A sentence."], object)})["translation"]
    """

    def __init__(self, model_base_path, model_name):
        self.model_name = model_name
        self.version, self.path = newest_version(model_base_path)
        self.loaded = tf.saved_model.load(self.path)
        saved_model = saved_model_pb2.SavedModel()
        with tf.io.gfile.GFile(os.path.join(self.path, "saved_model.pb"), "rb") as stream:
            saved_model.ParseFromString(stream.read())
        self.signature_defs = saved_model.meta_graphs[0].signature_def
        self.maximum_batch_size = None
        if "settings" in self.loaded.signatures:  # written by serving/export.py
            self.maximum_batch_size = int(self.loaded.signatures["settings"]()["maximum_batch_size"].numpy())

    def input_specs(self, signature_name):
        """{input name: TensorSpec} of a signature; ValueError naming the known ones if it is unknown."""
        if signature_name not in self.loaded.signatures:
            raise ValueError(
                f"signature {signature_name!r} not found; this model has {sorted(self.loaded.signatures)}"
            )
        return self.loaded.signatures[signature_name].structured_input_signature[1]

    def predict(self, signature_name, inputs, output_filter=()):
        """Runs one signature.

        Args:
            signature_name: e.g. "serving_default"; "" means "serving_default".
            inputs: {input name: NumPy array}, exactly the signature's inputs.
            output_filter: names of the outputs to return; empty for all.

        Returns:
            {output name: NumPy array}.

        Raises:
            ValueError: unknown signature or output, missing or unknown inputs, wrong dtype or shape.
            tf.errors.OpError: the graph refused the input (e.g. `InvalidArgumentError` from an assertion).
        """
        signature_name = signature_name or tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY
        specs = self.input_specs(signature_name)
        if set(inputs) != set(specs):
            raise ValueError(
                f"signature {signature_name!r} takes inputs {sorted(specs)}, got {sorted(inputs)}"
            )
        tensors = {}
        for name, value in inputs.items():
            spec = specs[name]
            tensor = tf.convert_to_tensor(value)
            if tensor.dtype != spec.dtype or not spec.shape.is_compatible_with(tensor.shape):
                raise ValueError(
                    f"input {name!r} of signature {signature_name!r} must be {spec.dtype.name} of shape "
                    f"{spec.shape}, got {tensor.dtype.name} of shape {tensor.shape}"
                )
            tensors[name] = tensor
        outputs = self.loaded.signatures[signature_name](**tensors)
        unknown = sorted(set(output_filter) - set(outputs))
        if unknown:
            raise ValueError(f"signature {signature_name!r} has no outputs {unknown}; it has {sorted(outputs)}")
        names = output_filter or outputs
        return {name: outputs[name].numpy() for name in names}
