"""What readers of an export (`serving/export.py`) rely on: its newest version folder and its settings.

Here, below every package, so that the server (`serving/servable.py`) starts without importing the model code.
"""

import os

import tensorflow as tf

from data_pipeline.constants import MODEL_FILE


def newest_version(model_base_path):
    """(version, path) of the largest integer subfolder holding a saved_model.pb, as TF Serving picks it.

    Folders being written (`.incomplete-<N>`), other names and integer folders without a saved_model.pb
    are not versions.

    Raises:
        FileNotFoundError: `model_base_path` is missing or holds no version.
    """
    model_base_path = os.fspath(model_base_path)
    versions = []
    if tf.io.gfile.isdir(model_base_path):
        for name in tf.io.gfile.listdir(model_base_path):
            name = name.strip("/")
            if name.isdigit() and tf.io.gfile.exists(os.path.join(model_base_path, name, "saved_model.pb")):
                versions.append(int(name))
    if not versions:
        model_dir = " (it holds model.json: a model directory, which --model_dir reads)" if tf.io.gfile.exists(
            os.path.join(model_base_path, MODEL_FILE)) else ""
        raise FileNotFoundError(
            f"no version folder (an integer name with a saved_model.pb) in {model_base_path}{model_dir}"
        )
    return max(versions), os.path.join(model_base_path, str(max(versions)))


def read_settings(loaded):
    """The `settings` signature of a loaded export (`Translator.serving_signatures`), by name, as Python
    values: str, int, float (float32 values widened) or bool."""
    return {
        name: value.numpy().decode("utf-8") if value.dtype == tf.string else value.numpy().item()
        for name, value in loaded.signatures["settings"]().items()
    }


# The TensorFlow Text ops that stock `tensorflow_model_server` links: tensorflow/serving's
# tensorflow_serving/model_servers/BUILD puts "@org_tensorflow_text//tensorflow_text:ops_lib" in
# SUPPORTED_TENSORFLOW_OPS (server_lib's deps) in every release 2.15-2.20 and on master, and ops_lib holds
# these (tensorflow/text's tensorflow_text/BUILD, v2.12.1 for TF Serving 2.15-2.19 and v2.20.0 for 2.20;
# the names registered by tensorflow_text/core/ops/*.cc and the shim kernels' kOpName). docs/serving.md.
MODEL_SERVER_TF_TEXT_OPS = frozenset({
    "TFText>OffsetsToBoiseTags", "TFText>BoiseTagsToOffsets", "TFText>ByteSplitWithOffsets",
    "TFText>ByteSplitByOffsets", "ConstrainedSequence", "FastBertNormalize", "TFText>FastSentencepieceTokenize",
    "TFText>FastSentencepieceDetokenize", "FastWordpieceTokenizeWithOffsets", "TFText>FastWordpieceDetokenize",
    "MaxSpanningTree", "TFText>NgramsStringJoin", "CaseFoldUTF8", "NormalizeUTF8", "NormalizeUTF8WithOffsetsMap",
    "FindSourceOffsets", "PhraseTokenize", "TFText>PhraseDetokenize", "RegexSplitWithOffsets", "SentenceFragments",
    "SentenceFragmentsV2", "SentencepieceOp", "SentencepieceTokenizeOp", "SentencepieceTokenizeWithOffsetsOp",
    "SentencepieceDetokenizeOp", "SentencepieceVocabSizeOp", "SentencepieceIdToStringOp",
    "SentencepieceStringToIdOp", "TokenizerFromLogits", "SplitMergeTokenizeWithOffsets", "RougeL",
    "UnicodeScriptTokenizeWithOffsets", "WhitespaceTokenizeWithOffsets", "TFText>WhitespaceTokenizeWithOffsetsV2",
    "WordpieceTokenizeWithOffsets",
})


def read_saved_model(version_path):
    """The `SavedModel` proto of a version folder's saved_model.pb (signature defs, graph, functions)."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved_model = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(os.path.join(version_path, "saved_model.pb"), "rb") as stream:
        saved_model.ParseFromString(stream.read())
    return saved_model


def graph_ops(saved_model):
    """The names of every op in a `SavedModel` proto's graphs and their functions."""
    ops = set()
    for meta_graph in saved_model.meta_graphs:
        ops.update(node.op for node in meta_graph.graph_def.node)
        for function in meta_graph.graph_def.library.function:
            ops.update(node.op for node in function.node_def)
    return ops


def load_export(version_path, saved_model=None):
    """`tf.saved_model.load` of a version folder (whose `read_saved_model` proto may be given); TensorFlow
    Text is imported first (its ops registered) only for an export whose graph uses them (a subword
    codec's SentencePiece ops)."""
    if graph_ops(saved_model or read_saved_model(version_path)) & MODEL_SERVER_TF_TEXT_OPS:
        import tensorflow_text  # noqa: F401  registers the ops

    return tf.saved_model.load(version_path)
