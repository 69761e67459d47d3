"""A trained model as it decodes: its weights in the form decoding stores them (bf16; int8 with scales), read through
`keras.StatelessScope`, widened once per call of the search."""

import contextlib
import threading

import keras
import tensorflow as tf

from rnnsearch_tf.models.ensemble import Ensemble
from rnnsearch_tf.utils.precision import DECODING_POLICIES
from rnnsearch_tf.utils.quantization import check_quantization, dequantize, quantize_int8

# The name `keras.layers.Embedding` gives its table `[vocab, m]`: quantized per word (row), a kernel `[in, out]` per
# output unit (column).
EMBEDDING_WEIGHT = "embeddings"
_READING = threading.local()  # .models: ids of the DecodingModels this thread's stored-weights scope maps


class DecodingModel(tf.Module):
    """An `EncoderDecoderModel` with its weights held in the form it decodes with, and the model's decoding interface.

    Two stored forms, alone or together:
    - bf16, where the model's dtype policy has a decoding policy (`precision.DECODING_POLICIES`: mixed_bfloat16):
      every weight held as a bf16 variable, rounded once from the checkpoint's float32 (the model computes in bf16
      already: its layers' compute dtype).
    - int8 (`quantize="int8"`): every matrix held as int8 values and float32 scales (`quantization.quantize_int8`:
      a kernel `[in, out]` per output column, an embedding table per row), widened to the decoding dtype, float32 or
      bf16; biases and v_a are not quantized.

    `reading_stored_weights(model)` maps each replaced weight of the Keras model to its stored form for the span of a
    call (`keras.StatelessScope`: every read of the variable, by a Keras layer or a raw TensorFlow op, gives the
    mapped tensor). The widening (Cast, Mul: core ops that stock TensorFlow Serving runs) is computed there, once,
    outside the search's `tf.while_loop`, whose steps capture the widened tensors; the methods below are used inside
    it only. The module tracks the stored variables and the weights read as they are (the float32 biases under
    int8), not the Keras model: a SavedModel of it holds the stored form only.

    Args:
        model: an `EncoderDecoderModel` with its trained weights (float32 variables, mixed_bfloat16 or float32 policy).
        quantize: one of `quantization.QUANTIZATIONS`: "none" or "int8".

    Attributes:
        model: the Keras model that computes (its own variables are replaced while it decodes).
        quantize: as given.
        dtype_policy: the policy its weights are read and computed in: "bfloat16" under mixed_bfloat16, else the
            model's.
        stored: {path below the model ("decoder/E/embeddings"): variable} of the replaced weights, int8 or bf16.
        scales: {path: float32 variable} of the int8 ones' scales.
        kept: {path: the model's variable} of the weights read as they are.

    Example:
    >>> decoding = DecodingModel(model, quantize="int8")
    >>> with reading_stored_weights(decoding):
    ...     result = BeamSearch(decoding.symbols_to_logits_fn).search(decoding.encode(source_ids), maximum_lengths)
    """

    def __init__(self, model, quantize="none", name=None):
        super().__init__(name=name or model.name)
        self.quantize = check_quantization(quantize)
        self.dtype_policy = keras.DTypePolicy(DECODING_POLICIES.get(model.dtype_policy.name, model.dtype_policy.name))
        self.stored, self.scales, self.kept = {}, {}, {}
        weights = {}
        for weight in model.weights:
            path = weight.path.split("/", 1)[1]  # below the model, whose name carries a counter
            weights[path] = weight
            if quantize == "int8" and len(weight.shape) == 2:
                values, scales = quantize_int8(weight.numpy(), 0 if weight.name == EMBEDDING_WEIGHT else 1)
                self.stored[path] = tf.Variable(values, trainable=False, name=f"{path}/int8")
                self.scales[path] = tf.Variable(scales, trainable=False, name=f"{path}/scales")
            elif weight.dtype != self.dtype_policy.variable_dtype:
                self.stored[path] = tf.Variable(tf.cast(weight, self.dtype_policy.variable_dtype), trainable=False,
                                                name=path)
            else:
                self.kept[path] = weight
        self._hold(model, weights)

    @tf.__internal__.tracking.no_automatic_dependency_tracking
    def _hold(self, model, weights):
        """Keeps the Keras model and its weights by path without tracking them (see the class)."""
        self.model = model
        self._weights = weights

    def stored_values(self):
        """`[(weight, tensor)]`: each replaced weight of the model and what it reads as, int8 widened here."""
        dtype = self.dtype_policy.compute_dtype
        return [
            (self._weights[path], dequantize(stored, self.scales[path], dtype) if path in self.scales
             else tf.convert_to_tensor(stored))
            for path, stored in self.stored.items()
        ]

    @property
    def config(self):
        return self.model.config

    @property
    def uses_attention(self):
        return self.model.uses_attention

    def encode(self, source_ids):
        return self._reading().encode(source_ids)

    def symbols_to_logits_fn(self, ids, step, state):
        return self._reading().symbols_to_logits_fn(ids, step, state)

    def restricted_symbols_to_logits_fn(self, candidate_ids):
        return self._reading().restricted_symbols_to_logits_fn(candidate_ids)

    def teacher_forcing(self, source_ids, target_ids, training=False):
        return self._reading().teacher_forcing(source_ids, target_ids, training)

    def token_log_probs(self, source_ids, target_ids):
        return self._reading().token_log_probs(source_ids, target_ids)

    def _reading(self):
        """The Keras model, where `reading_stored_weights` maps its weights: outside it, it would read its own."""
        if id(self) not in getattr(_READING, "models", ()):
            raise RuntimeError(f"{self.name} decodes inside `reading_stored_weights(model)` only, where its weights "
                               "read as stored")
        return self.model


@contextlib.contextmanager
def reading_stored_weights(model):
    """Inside: every weight of `model`'s `DecodingModel`s (`model` itself, or an `Ensemble`'s members) reads as its
    stored form, widened here (`DecodingModel.stored_values`); a plain model reads its own weights.

    Enter it once per call of a search or a scoring, outside its loops: the widening runs where it is entered. Not
    nested: an inner `keras.StatelessScope` hides the mapping of an outer one.
    """
    members = [member for member in (model.models if isinstance(model, Ensemble) else [model])
               if isinstance(member, DecodingModel)]
    if not members:
        yield
        return
    if getattr(_READING, "models", None):
        raise RuntimeError("reading_stored_weights is entered once per call, not nested")
    scope = keras.StatelessScope(initialize_variables=False)
    for member in members:
        for weight, value in member.stored_values():
            # As given: the constructor's `state_mapping` would cast a bf16 value back to the variable's float32.
            scope.add_update((weight, value))
    _READING.models = frozenset(id(member) for member in members)
    try:
        with scope:
            yield
    finally:
        _READING.models = frozenset()


def precision_and_quantization(model):
    """`(precision, quantize)` of one decoding model: the name of the policy it reads and computes its weights in
    ("float32", "bfloat16"; a `DecodingModel`'s, else the model's) and its quantization ("none" for a plain model)."""
    if isinstance(model, DecodingModel):
        return model.dtype_policy.name, model.quantize
    return model.dtype_policy.name, "none"
