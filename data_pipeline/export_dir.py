"""The layout of an exported SavedModel: what `rnnsearch export` writes and TensorFlow Serving, `rnnsearch serve`
and `rnnsearch translate --saved_model` read."""

import json
import os

import tensorflow as tf

from data_pipeline.constants import MODEL_FILE
from data_pipeline.text_codec import MOSES, TextCodec

BATCHING_PARAMETERS_FILE = "batching_parameters.txt"  # `ExportDir`: `--batching_parameters_file` of either server
INCOMPLETE_PREFIX = ".incomplete-"  # `ExportDir`: a version being written, renamed when complete
SAVED_MODEL_FILE = "saved_model.pb"  # `ExportVersion`: the graphs and their signatures
VARIABLES_INDEX_FILE = os.path.join("variables", "variables.index")  # `ExportVersion`: the weights' index
ASSETS_FOLDER = "assets"  # `ExportVersion`: the text codecs' files, which the graphs read
EXTRA_ASSETS_FOLDER = "assets.extra"  # `ExportVersion`: TF Serving's folder of files the graphs do not read
SETTINGS_FILE = os.path.join(EXTRA_ASSETS_FOLDER, "export_settings.json")
WARMUP_FILE = os.path.join(EXTRA_ASSETS_FOLDER, "tf_serving_warmup_requests")
# What makes a version folder complete: TF Serving's SavedModel loader reads both.
COMPLETE_VERSION_FILES = (SAVED_MODEL_FILE, VARIABLES_INDEX_FILE)
MAX_VERSION = 2**63 - 1  # TF Serving's versions are int64 (`ServableId.version`)
VERSION_FOLDER = f"an integer name holding {' and '.join(COMPLETE_VERSION_FILES)}"

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


class ExportDir:
    """An export: TF Serving's model base path, the `--export_dir` of `rnnsearch export`.

    It lives in `data_pipeline`, the lowest package, beside the other folders that carry a text codec, so that
    `serving/` reads exports without importing `rnnsearch_tf`, which imports `serving`.

        export_dir/
          batching_parameters.txt   `--enable_batching --batching_parameters_file=` of either server
          <N>/                      version N (`ExportVersion`); the newest complete one is served
          .incomplete-<N>/          version N being written, renamed to <N> when complete

    Args:
        path: the folder (local or any `tf.io.gfile` file system).
    """

    def __init__(self, path):
        self.path = os.fspath(path)

    @property
    def batching_parameters_file(self):
        return os.path.join(self.path, BATCHING_PARAMETERS_FILE)

    def version(self, number):
        """The `ExportVersion` of version `number` (which may not exist)."""
        return ExportVersion(os.path.join(self.path, str(number)))

    def incomplete_version(self, number):
        """The folder version `number` is written in before it is renamed into place: no server loads it."""
        return ExportVersion(os.path.join(self.path, f"{INCOMPLETE_PREFIX}{number}"))

    def exists(self):
        """Whether the folder is there (a server keeps its versions while its base path is not: `ServedModel.poll`)."""
        return tf.io.gfile.isdir(self.path)

    def versions(self):
        """{version: `ExportVersion`} of the complete version folders, as TF Serving finds them ({} when the
        folder is missing): names of ASCII digits that fit an int64, as TF Serving's `safe_strto64` reads them
        (`²` or `٣`, which Python's `int` would take, are not versions), holding `COMPLETE_VERSION_FILES` (a folder
        still being copied is not one yet)."""
        if not self.exists():
            return {}
        names = [name.strip("/") for name in tf.io.gfile.listdir(self.path)]
        versions = {int(name): ExportVersion(os.path.join(self.path, name)) for name in names if _is_version(name)}
        return {number: version for number, version in versions.items() if version.is_complete()}

    def newest_version(self):
        """The complete version with the largest number, as TF Serving picks it; FileNotFoundError when there is
        none (saying so where the folder is a model directory instead)."""
        versions = self.versions()
        if not versions:
            model_dir = " (it holds model.json: a model directory, which --model_dir reads)" if tf.io.gfile.exists(
                os.path.join(self.path, MODEL_FILE)) else ""
            raise FileNotFoundError(f"no version folder ({VERSION_FOLDER}) in {self.path}{model_dir}")
        return versions[max(versions)]


def _is_version(name):
    """Whether a folder name is a version number: ASCII digits only, at most int64's largest value."""
    return name.isascii() and name.isdigit() and int(name) <= MAX_VERSION


class ExportVersion:
    """One version folder of an `ExportDir`, as `serving/export.py` writes it.

        <N>/
          saved_model.pb                    the graphs and signatures (`Translator.serving_signatures`)
          variables/variables.index         the weights (and variables/variables.data-*)
          assets/                           the text codecs' files: source_vocab.tsv, target_vocab.tsv, spm.model
          assets.extra/export_settings.json the recorded settings (`Translator.recorded_settings`)
          assets.extra/tf_serving_warmup_requests   PredictionLog records a server replays before serving

    Args:
        path: the folder.
    """

    def __init__(self, path):
        self.path = os.fspath(path)

    def file(self, name):
        return os.path.join(self.path, name)

    @property
    def number(self):
        """The version: the folder's integer name."""
        return int(os.path.basename(self.path))

    @property
    def settings_file(self):
        return self.file(SETTINGS_FILE)

    @property
    def warmup_file(self):
        return self.file(WARMUP_FILE)

    def asset(self, name):
        """A file of assets/: a text codec's vocabulary or SentencePiece model."""
        return self.file(os.path.join(ASSETS_FOLDER, name))

    def is_complete(self):
        """Whether it holds every file of `COMPLETE_VERSION_FILES`: a server loads it."""
        return all(tf.io.gfile.exists(self.file(name)) for name in COMPLETE_VERSION_FILES)

    def write_settings(self, settings):
        """Writes `settings` (a dict) to assets.extra/export_settings.json."""
        tf.io.gfile.makedirs(os.path.dirname(self.settings_file))
        with tf.io.gfile.GFile(self.settings_file, "w") as stream:
            json.dump(settings, stream, indent=2, sort_keys=True)
            stream.write("\n")

    def read_saved_model(self):
        """The `SavedModel` proto of saved_model.pb (signature defs, graph, functions)."""
        from tensorflow.core.protobuf import saved_model_pb2

        saved_model = saved_model_pb2.SavedModel()
        with tf.io.gfile.GFile(self.file(SAVED_MODEL_FILE), "rb") as stream:
            saved_model.ParseFromString(stream.read())
        return saved_model

    def load(self, saved_model=None):
        """`tf.saved_model.load` of the folder (whose `read_saved_model` proto may be given); TensorFlow Text is
        imported first (its ops registered) only where the graph uses them (a subword codec's SentencePiece
        ops)."""
        register_text_ops(graph_ops(saved_model or self.read_saved_model()))
        return tf.saved_model.load(self.path)


class ExportSettings(dict):
    """What an export recorded (`Translator.recorded_settings`: languages, codec kinds and lower-casing, search
    options, whether the model attends, version), by name, each field an older export lacks given its value there
    (`OLDER_EXPORTS`).

    Args:
        values: the recorded settings by name (`read(loaded)` reads an export's).
    """

    # Exports older than codecs are word-level; older than lower-casing, cased; older than `uses_attention`, taken
    # to attend (an RNNencdec one among them copies the first source word for each `<unk>` it is asked to replace).
    OLDER_EXPORTS = {"source_codec": MOSES, "target_codec": MOSES, "source_lowercase": False, "target_lowercase": False,
                     "uses_attention": True}

    def __init__(self, values=()):
        super().__init__({**self.OLDER_EXPORTS, **dict(values)})

    @classmethod
    def read(cls, loaded):
        """The `settings` signature of a loaded export as Python values: str, int, float (float32 values
        widened) or bool; only `OLDER_EXPORTS` for an export without one."""
        signature = loaded.signatures.get("settings")
        values = {} if signature is None else signature()
        return cls({name: value.numpy().decode("utf-8") if value.dtype == tf.string else value.numpy().item()
                    for name, value in values.items()})

    def codec_is_moses(self, side):
        """Whether the codec of `side` ("source" or "target") is word-level (Moses rules, whole words, `<unk>`)."""
        return self[f"{side}_codec"] == MOSES

    def moses_codec(self, side):
        """The word-level `TextCodec` of `side` without its vocabulary: the export's language and lower-casing (its
        Moses rules, for matching terms or replacing `<unk>` outside the SavedModel); only where `codec_is_moses`."""
        if not self.codec_is_moses(side):
            raise ValueError(f"the export's {side} codec is {self[f'{side}_codec']}, not {MOSES}")
        return TextCodec(self[f"{side}_language"], lowercase=self[f"{side}_lowercase"])


def graph_ops(saved_model):
    """The names of every op in a `SavedModel` proto's graphs and their functions."""
    ops = set()
    for meta_graph in saved_model.meta_graphs:
        ops.update(node.op for node in meta_graph.graph_def.node)
        ops.update(library_ops(meta_graph.graph_def.library))
    return ops


def library_ops(library):
    """The names of every op in the functions of a `FunctionDefLibrary` proto."""
    return {node.op for function in library.function for node in function.node_def}


def register_text_ops(ops):
    """Imports TensorFlow Text, which registers its ops with TensorFlow, where `ops` (op names of a graph to run)
    hold some of them (a subword codec's SentencePiece ops); otherwise imports nothing."""
    if ops & MODEL_SERVER_TF_TEXT_OPS:
        import tensorflow_text  # noqa: F401  registers the ops
