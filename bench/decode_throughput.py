r"""Benchmarks translation of real test sets, from a checkpoint and from the exported SavedModel; prints JSON.

    RNNSEARCH_DATA=/work/shared/data python -m bench.decode_throughput --model_dir=MODEL_DIR \
        --export_dir=EXPORT_DIR --checkpoint=latest

(Run it with -m from the repository root: as a script, this file would shadow the package.)

For every beam size and test set: sentences/s and output tokens/s (EOS included) of `BatchTranslator`
(length-sorted batches of `--batch_size`, `--decode_workers` at once, each worker on its share of the
cores as in `rnnsearch translate`) through the `Translator` of the model directory's checkpoint
and through its SavedModel (`serving/export.py`; one export per beam size under `--export_dir`, whose
flags `--model_dir`, `--export_dir`, `--checkpoint`, `--batch_size`, `--precision`, `--quantize` and the search's
(`SearchConfig`'s, `--beam_sizes` for `--beam_size`) this benchmark shares: over the model directory's vocabulary
shortlist where it has one, as `translate`, `--noshortlist` the whole vocabulary; the report records the shortlist,
precision and quantization decoded with and each export's bytes), after one untimed
batch that traces the graph; then the same first `--single_sentences` sentences one at a time (one
worker, still on its share of the cores). The cost of
beam 12 over beam 1 per sentence is given both batched and one sentence at a time (a request's latency),
with the time of one decoder step alone (`model_step_ms`, no search) at one and at `--batch_size`
sentences: the part of the cost that grows with the beam whatever the search does. The
search stops when every sentence of a batch has ended, so an untrained model that never emits EOS
runs to the maximum length `2 * source_length + 10`: report the model's training with the numbers.
"""

import dataclasses
import gzip
import os
import time

import numpy as np
import tensorflow as tf
from absl import app
from absl import flags

from bench.provenance import provenance, run_report
from data_pipeline import data_files
from data_pipeline.export_dir import VARIABLES_INDEX_FILE, ExportVersion
from rnnsearch_tf.cli import folder_flags, search_flags
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.decoding_model import reading_stored_weights
from rnnsearch_tf.inference.translator import Translator
from serving.export import export, next_version

_MODEL_DIR = folder_flags.define_model_dir(required=True)
_EXPORT_DIR = flags.DEFINE_string("export_dir", None, "Base path of the exports measured (one per beam size).",
                                  required=True)
_TEST_SETS = flags.DEFINE_list(
    "test_sets", ["multi30k/test_2016_flickr", "wmt14/newstest2014"], "Files <data root>/<name>.en.gz to translate."
)
_SENTENCES = flags.DEFINE_integer("sentences", None, "Translate only the first N sentences of each test set.")
_BEAM_SIZES = flags.DEFINE_list("beam_sizes", ["1", "12"], "Beam sizes to measure.")
_SINGLE_SENTENCES = flags.DEFINE_integer("single_sentences", 50, "Sentences also translated one at a time.")


def _read_sentences(name):
    with gzip.open(os.path.join(data_files.data_root_from_environment(), f"{name}.en.gz"), "rt") as stream:
        sentences = [line.rstrip("\n") for line in stream]
    return sentences[: _SENTENCES.value] if _SENTENCES.value else sentences


def _throughput(batch_translator, sentences):
    batch_translator.translate(sentences[: batch_translator.batch_size])  # traces the graph
    start = time.perf_counter()
    results = batch_translator.translate(sentences)
    seconds = time.perf_counter() - start
    tokens = sum(len(result["tokens"]) + 1 for result in results)
    return {
        "sentences": len(sentences),
        "seconds": round(seconds, 2),
        "sentences_per_s": round(len(sentences) / seconds, 1),
        "tokens_per_s": round(tokens / seconds),
        "output_tokens_per_sentence": round(tokens / len(sentences), 1),
    }


def _variables_bytes(version_path):
    """Bytes of an export's weights: its variables folder (the data and the index)."""
    folder = os.path.dirname(ExportVersion(version_path).file(VARIABLES_INDEX_FILE))
    return sum(os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder))


def _model_step_ms(model, rows, source_length=16, repeats=20):
    """Median ms of one decoder step (`symbols_to_logits_fn`, no search) for `rows` hypotheses of
    `source_length`-token sources: the part of a search step no search strategy can save. Stored weights (bf16,
    int8) are widened once before the timed steps, as a search widens them once before its loop."""
    source_ids = tf.random.stateless_uniform([rows, source_length], [0, 0], 4, model.config.source_vocab_size, tf.int32)
    ids = tf.fill([rows], 4)
    times = []
    with reading_stored_weights(model):
        state = model.encode(source_ids)
        step = tf.function(lambda ids, state: model.symbols_to_logits_fn(ids, tf.constant(1), state)[0])
        step(ids, state).numpy()
        for _ in range(repeats):
            start = time.perf_counter()
            step(ids, state).numpy()
            times.append(time.perf_counter() - start)
    return round(1000 * float(np.median(times)), 2)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    workers = search_flags.decode_workers()
    test_sets = {name: _read_sentences(name) for name in _TEST_SETS.value}
    model_dir, export_dir = _MODEL_DIR.value, _EXPORT_DIR.value
    batch_size = search_flags.BATCH_SIZE.value
    report = {"provenance": provenance(), "model_dir": model_dir, "cpu_cores": os.cpu_count(), "batch_size": batch_size, "decode_workers": workers,
              "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads()}
    for beam_size in (int(beam) for beam in _BEAM_SIZES.value):
        translator = Translator.from_model_dir(
            model_dir, search_flags.CHECKPOINT.value, precision=search_flags.PRECISION.value,
            quantize=search_flags.QUANTIZE.value,
            search_config=dataclasses.replace(search_flags.search_config(), beam_size=beam_size),
        )
        report["checkpoint"] = translator.checkpoint_path
        report["shortlist"] = translator.shortlist is not None
        for name in ("precision", "quantize"):
            report[name] = translator.recorded_settings(0)[name]
        beam_export_dir = os.path.join(export_dir, f"beam{beam_size}")
        saved_model_path = export(translator, beam_export_dir, next_version(beam_export_dir))
        sources = {
            "checkpoint": BatchTranslator(translator, translator.settings(), batch_size, workers=workers),
            "saved_model": BatchTranslator.from_saved_model(saved_model_path, batch_size, workers=workers),
        }
        results = report.setdefault(f"beam_{beam_size}", {})
        results["export_variables_bytes"] = _variables_bytes(saved_model_path)
        results["model_step_ms"] = {
            f"{rows}_hypotheses": _model_step_ms(translator.model, rows) for rows in (beam_size, beam_size * batch_size)
        }
        for name, sentences in test_sets.items():
            results[name] = {source: _throughput(bt, sentences) for source, bt in sources.items()}
            single = _throughput(
                BatchTranslator(translator, translator.settings(), batch_size=1, workers=1),
                sentences[: _SINGLE_SENTENCES.value],
            )
            results[name]["checkpoint_one_sentence_at_a_time"] = single
            results[name]["batched_speedup_over_one_at_a_time"] = round(
                results[name]["checkpoint"]["sentences_per_s"] / single["sentences_per_s"], 1
            )
    for name in test_sets:
        if "beam_1" in report and "beam_12" in report:
            report.setdefault("beam_12_cost_per_sentence_over_beam_1", {})[name] = {
                mode: round(
                    report["beam_1"][name][mode]["sentences_per_s"] / report["beam_12"][name][mode]["sentences_per_s"],
                    2,
                )
                for mode in ("checkpoint", "checkpoint_one_sentence_at_a_time")
            }
    return report


if __name__ == "__main__":
    run_report(main)
