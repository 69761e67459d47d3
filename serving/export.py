"""Exports a `Translator` as a versioned SavedModel for TensorFlow Serving (`rnnsearch export`).

`export` writes `exports/rnnsearch/<version>/` (integer versions, the newest is served) with the signatures of
`Translator.serving_signatures`: `serving_default` and `translate` (raw text), `translate_prefix` (raw
text and the start of its translation: the rest, and the `--num_alternatives` most probable next words),
`translate_ids`, `score` and `settings` (the search options fixed here); see
`rnnsearch_tf.inference.translator.Translator` for their inputs and outputs.
Each version holds TF Serving's warm-up requests (`ExportVersion.warmup_file`), which
`tensorflow_model_server` and `serving/local_server.py` replay before they serve it, and the base path
holds `ExportDir.batching_parameters_file` for `--enable_batching --batching_parameters_file=` of either server.
`data_pipeline/export_dir.py` names every file of the layout.
"""

import os
import shutil

import numpy as np
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

from data_pipeline.constants import RESERVED_TOKENS
from data_pipeline.export_dir import ExportDir
from data_pipeline.vocabulary import Vocabulary
from serving.batching import BatchingParameters


def next_version(export_dir):
    """One more than the newest complete version of `export_dir` (`ExportDir.versions`); 1 when it has none."""
    return max(ExportDir(export_dir).versions(), default=0) + 1


def new_version(export_dir, version=None):
    """`version` (default `next_version(export_dir)`), refused in one line if `export_dir` has it (a served
    version is never overwritten), or if `export_dir`, or the folder above it that exists, is a file."""
    folder = os.fspath(export_dir)
    while not tf.io.gfile.exists(folder) and os.path.dirname(folder) not in ("", folder):
        folder = os.path.dirname(folder)  # the nearest that exists: where the folders would be made
    if tf.io.gfile.exists(folder) and not tf.io.gfile.isdir(folder):
        where = folder if folder == os.fspath(export_dir) else f"{export_dir}: {folder}"
        raise NotADirectoryError(f"{where} is a file, not a folder (an export folder holds versions)")
    version = next_version(export_dir) if version is None else version
    if version < 0:
        raise ValueError(f"version {version}: versions are integers from 0 (TF Serving's version folders)")
    path = ExportDir(export_dir).version(version).path
    if tf.io.gfile.exists(path):
        raise FileExistsError(f"{path} exists: versions are never overwritten, pick another --version")
    return version


def export(translator, export_dir, version=None):
    """Saves `translator` as `export_dir/<version>/`, written aside and renamed into place when complete.

    The signatures are `translator.serving_signatures(version)`; the version folder also holds the
    recorded settings and the warm-up requests (batches of at most `translator.maximum_batch_size`), and the
    base path a `batching_parameters.txt` unless it has one (`ExportDir` names them), its batches no larger.

    Args:
        translator: the `Translator` to serve.
        export_dir: the model base path of TF Serving.
        version: int; default `next_version(export_dir)`.

    Returns:
        the path of the version folder.
    """
    version, export_dir = new_version(export_dir, version), ExportDir(export_dir)
    written = export_dir.incomplete_version(version)
    if tf.io.gfile.exists(written.path):
        shutil.rmtree(written.path)
    # A serving graph is never differentiated: the encoder's custom gradient is not saved with it.
    options = tf.saved_model.SaveOptions(experimental_custom_gradients=False)
    signatures = translator.serving_signatures(version)
    tf.saved_model.save(translator, written.path, signatures=signatures, options=options)
    written.write_settings(translator.recorded_settings(version))
    words = range(len(RESERVED_TOKENS), translator.model.config.source_vocab_size)[:4]  # any: the graph warms up
    sentences = warmup_sentences(translator)[: translator.maximum_batch_size]
    write_warmup_requests(written.warmup_file, sentences, list(words), signatures)
    final_path = export_dir.version(version).path
    tf.io.gfile.rename(written.path, final_path)
    if not tf.io.gfile.exists(export_dir.batching_parameters_file):  # a file the user tuned is kept
        with tf.io.gfile.GFile(export_dir.batching_parameters_file, "w") as stream:
            stream.write(BatchingParameters().capped(translator.maximum_batch_size).to_text())
    return final_path


def warmup_sentences(translator, words=12):
    """Two sentences of the source vocabulary's most frequent tokens (in any order), written as text by the
    source codec: one short, one long."""
    entries = Vocabulary.read_entries(translator.source_vocabulary.vocabulary_file)[len(RESERVED_TOKENS):]
    frequent = [token for token, _ in sorted(entries, key=lambda entry: -entry[1])[:words]]
    text = translator.source_codec.detokenize(tf.ragged.constant([frequent[: words // 3], frequent]))
    return [sentence.decode("utf-8") for sentence in text.numpy()]


def write_warmup_requests(path, sentences, source_ids, signature_names=None):
    """TF Serving's warm-up file: PredictionLog records of every signature that translates or scores (of
    `signature_names` only, where given: a sampling export has no `translate_constrained`), which a server runs
    once before it answers clients: a signature's first call instantiates its graph (0.4-3 s for the peer-size
    model), and two signature names of one method (`serving_default`, `translate`) are two graphs. `translate`
    gets one sentence, then all of them in one batch; the others one sentence (`translate_ids` the ids
    `source_ids`)."""
    one, every = np.array(sentences[:1], dtype=object), np.array(sentences, dtype=object)
    requests = [("translate", {"text": one}), ("translate", {"text": every}), ("serving_default", {"text": one}),
                ("translate_prefix", {"text": one, "prefix": np.array([""], dtype=object)}),
                ("translate_constrained", {"text": one, "constraints": np.array([[""]], dtype=object)}),
                ("translate_ids", {"source_ids": np.array([source_ids], dtype=np.int32)}),
                ("score", {"source": one, "target": one})]
    with tf.io.TFRecordWriter(path) as writer:
        for signature_name, inputs in requests:
            if signature_names is not None and signature_name not in signature_names:
                continue
            request = predict_pb2.PredictRequest()
            request.model_spec.signature_name = signature_name
            for name, values in inputs.items():
                request.inputs[name].CopyFrom(tf.make_tensor_proto(values))
            writer.write(prediction_log_pb2.PredictionLog(
                predict_log=prediction_log_pb2.PredictLog(request=request)).SerializeToString())
