"""Exports a `Translator` as a versioned SavedModel for TensorFlow Serving (`rnnsearch export`).

`export` writes `exports/rnnsearch/<version>/` (integer versions, the newest is served) with the signatures of
`Translator.serving_signatures`: `serving_default` and `translate` (raw text), `translate_prefix` (raw
text and the start of its translation: the rest, and the `--num_alternatives` most probable next words),
`translate_ids`, `score` and `settings` (the search options fixed here); see
`rnnsearch_tf.inference.translator.Translator` for their inputs and outputs.
Each version holds TF Serving's warm-up requests (`assets.extra/tf_serving_warmup_requests`), which
`tensorflow_model_server` and `serving/local_server.py` replay before they serve it, and the base path
holds `batching_parameters.txt` for `--enable_batching --batching_parameters_file=` of either server.
"""

import json
import os
import shutil

import numpy as np
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

from data_pipeline.constants import RESERVED_TOKENS
from data_pipeline.vocabulary import Vocabulary
from rnnsearch_tf.utils.exports import newest_version
from serving.batching import BatchingParameters
from serving.servable import WARMUP_FILE

SETTINGS_FILE = os.path.join("assets.extra", "export_settings.json")
BATCHING_PARAMETERS_FILE = "batching_parameters.txt"

def next_version(export_dir):
    """One more than the newest version of `export_dir` (`newest_version`'s rule); 1 when it has none."""
    try:
        return newest_version(export_dir)[0] + 1
    except FileNotFoundError:
        return 1


def new_version(export_dir, version=None):
    """`version` (default `next_version(export_dir)`), refused in one line if `export_dir` has it: a served
    version is never overwritten."""
    version = next_version(export_dir) if version is None else version
    path = os.path.join(export_dir, str(version))
    if tf.io.gfile.exists(path):
        raise FileExistsError(f"{path} exists: versions are never overwritten, pick another --version")
    return version


def export(translator, export_dir, version=None):
    """Saves `translator` as `export_dir/<version>/`, written aside and renamed into place when complete.

    The signatures are `translator.serving_signatures(version)`; the version folder also holds the
    recorded settings (`SETTINGS_FILE`) and the warm-up requests, and the base path a
    `batching_parameters.txt` unless it has one.

    Args:
        translator: the `Translator` to serve.
        export_dir: the model base path of TF Serving.
        version: int; default `next_version(export_dir)`.

    Returns:
        the path of the version folder.
    """
    version = new_version(export_dir, version)
    final_path = os.path.join(export_dir, str(version))
    temporary_path = os.path.join(export_dir, f".incomplete-{version}")
    if tf.io.gfile.exists(temporary_path):
        shutil.rmtree(temporary_path)
    # A serving graph is never differentiated: the encoder's custom gradient is not saved with it.
    options = tf.saved_model.SaveOptions(experimental_custom_gradients=False)
    tf.saved_model.save(translator, temporary_path, signatures=translator.serving_signatures(version), options=options)
    tf.io.gfile.makedirs(os.path.join(temporary_path, os.path.dirname(SETTINGS_FILE)))
    with tf.io.gfile.GFile(os.path.join(temporary_path, SETTINGS_FILE), "w") as stream:
        json.dump(translator.recorded_settings(version), stream, indent=2, sort_keys=True)
        stream.write("\n")
    write_warmup_requests(os.path.join(temporary_path, WARMUP_FILE), warmup_sentences(translator))
    tf.io.gfile.rename(temporary_path, final_path)
    batching_file = os.path.join(export_dir, BATCHING_PARAMETERS_FILE)
    if not tf.io.gfile.exists(batching_file):  # a file the user tuned is kept
        with tf.io.gfile.GFile(batching_file, "w") as stream:
            stream.write(BatchingParameters().to_text())
    return final_path


def warmup_sentences(translator, words=12):
    """Two sentences of the source vocabulary's most frequent tokens (in any order), written as text by the
    source codec: one short, one long."""
    entries = Vocabulary.read_entries(translator.source_vocabulary.vocabulary_file)[len(RESERVED_TOKENS):]
    frequent = [token for token, _ in sorted(entries, key=lambda entry: -entry[1])[:words]]
    text = translator.source_codec.detokenize(tf.ragged.constant([frequent[: words // 3], frequent]))
    return [sentence.decode("utf-8") for sentence in text.numpy()]


def write_warmup_requests(path, sentences):
    """TF Serving's warm-up file: PredictionLog records of `translate` (one sentence, then all of them
    in one batch), `score` and `translate_prefix`, which a server runs once before it answers clients."""
    requests = [("translate", {"text": sentences[:1]}), ("translate", {"text": sentences}),
                ("score", {"source": sentences[:1], "target": sentences[:1]}),
                ("translate_prefix", {"text": sentences[:1], "prefix": [""]})]
    with tf.io.TFRecordWriter(path) as writer:
        for signature_name, inputs in requests:
            request = predict_pb2.PredictRequest()
            request.model_spec.signature_name = signature_name
            for name, texts in inputs.items():
                request.inputs[name].CopyFrom(tf.make_tensor_proto(np.array(texts, dtype=object)))
            writer.write(prediction_log_pb2.PredictionLog(
                predict_log=prediction_log_pb2.PredictLog(request=request)).SerializeToString())
