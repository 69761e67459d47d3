r"""Benchmarks the vocabulary shortlist: BLEU and decoding sentences/s with and without it; prints JSON.

    RNNSEARCH_DATA=/work/shared/data python -m bench.shortlist --model_dir=MODEL_DIR \
        --shortlists=k20n500=DIR/shortlist.npz,k50n1000=OTHER/shortlist.npz --beam_size=5 \
        --length_normalization=length --maximum_length_a=1.25 --maximum_length_b=5

(Run it with -m from the repository root: as a script, this file would shadow the package.)

One process, one model: the full vocabulary and each shortlist (files written by `rnnsearch shortlist`)
decode each test set of the model's data directory (`{split}.source.txt`) with `BatchTranslator`
(`--batch_size`, `--decode_workers` as in `rnnsearch translate`) after one untimed batch that traces the
graph, in `--rounds` rounds that alternate the decoders (so that other work on the machine slows them
alike); the median sentences/s per decoder and test set, and sacrebleu's BLEU of the detokenized output
against `{split}.target.txt`, with the mean candidate ids per batch (V') of each shortlist.

With `--peer_workdir` (a finished `../shared/peer/multi30k.sh DIR` run: the peer's model at the size of
ours), every round of the `test` split (test_2016) also runs the peer's decoding call on the same sentences
with its bench's settings (`bench.peer.decode_peer`, its own process, the call alone timed), and each of
our decoders gets its sentences/s over the peer's median (`over_peer`). Give ours the peer's batch of 80
(`--batch_size=80`) and its length normalisation and bound, as above.
"""

import dataclasses
import os
import pathlib
import statistics
import time

import sacrebleu
import tensorflow as tf
from absl import app, flags

from bench.bench_flags import define_named_list
from bench.peer import decode_peer, read_peer_report
from bench.provenance import provenance, run_report
from data_pipeline.data_dir import DataDir
from rnnsearch_tf.cli import search_flags
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.shortlist import Shortlist
from rnnsearch_tf.inference.translator import Translator
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.utils.text_files import read_lines

_MODEL_DIR = flags.DEFINE_string("model_dir", None, "Model directory written by training.", required=True)
_SHORTLISTS = define_named_list("shortlists", [], "NAME=FILE of shortlist.npz files to compare with the whole "
                                "vocabulary.", value_name="FILE")
_SPLITS = flags.DEFINE_list("splits", ["test", "test2017"], "Splits of the model's data directory to translate.")
_ROUNDS = flags.DEFINE_integer("rounds", 3, "Timed rounds per decoder and split.", lower_bound=1)
_PEER_WORKDIR = flags.DEFINE_string(
    "peer_workdir", None, "A finished peer run (`multi30k.sh DIR`): its decoding call of test_2016 in every round."
)


def _mean_candidates(translator, sentences, batch_size):
    """Mean V' of the batches of `sentences` (in input order, as a rough guide to the sorted batches)."""
    source_ids = translator.source_codec.encode(tf.constant(sentences))
    sizes = [
        int(tf.size(translator.shortlist.candidate_ids(source_ids[start:start + batch_size].flat_values)))
        for start in range(0, len(sentences), batch_size)
    ]
    return round(statistics.mean(sizes), 1)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    workers = search_flags.decode_workers()
    batch_size = search_flags.BATCH_SIZE.value
    base = Translator.from_model_dir(_MODEL_DIR.value, search_flags.CHECKPOINT.value,  # the whole vocabulary
                                     search_config=dataclasses.replace(search_flags.search_config(), shortlist=False))
    translators = {"full vocabulary": base}
    for name, path in _SHORTLISTS.value:
        translators[name] = Translator(
            base.model, base.source_codec, base.target_codec, dataclasses.replace(base.search_config, shortlist=True), shortlist=Shortlist.from_file(path),
        )
    data_dir = DataDir(ModelDir(_MODEL_DIR.value).read_data_info()["data_dir"])
    decoders = {name: BatchTranslator(t, t.settings(), batch_size, workers=workers) for name, t in translators.items()}
    report = {"provenance": provenance(), "model_dir": _MODEL_DIR.value, "checkpoint": base.checkpoint_path, "cpu_cores": os.cpu_count(),
              "batch_size": batch_size, "decode_workers": workers, "rounds": _ROUNDS.value,
              "search": base.search_config.to_dict(), "splits": {}}
    peer_workdir = pathlib.Path(_PEER_WORKDIR.value).resolve() if _PEER_WORKDIR.value else None
    peer = read_peer_report(peer_workdir) if peer_workdir else None
    if peer is not None:
        report["peer_workdir"] = str(peer_workdir)
    for split in _SPLITS.value:
        sentences = read_lines(data_dir.text_file(split, "source"))
        references = read_lines(data_dir.text_file(split, "target"))
        seconds = {name: [] for name in decoders}
        outputs, peer_rates = {}, []
        for decoder in decoders.values():
            decoder.translate(sentences[:batch_size])  # traces the graph
        for _ in range(_ROUNDS.value):
            if peer is not None and split == "test":
                peer_rates.append(decode_peer(peer_workdir, peer)["translate_sents_per_s"])
            for name, decoder in decoders.items():
                start = time.perf_counter()
                outputs[name] = decoder.translate(sentences)
                seconds[name].append(time.perf_counter() - start)
        results = report["splits"][split] = {}
        if peer_rates:
            results["peer"] = {"bleu": peer["detokenized_bleu"], "sentences_per_s": statistics.median(peer_rates),
                               "sentences_per_s_rounds": peer_rates}
        for name, decoder in decoders.items():
            translations = [result["translation"] for result in outputs[name]]
            results[name] = {
                "bleu": round(sacrebleu.corpus_bleu(translations, [references]).score, 2),
                "sentences_per_s": round(len(sentences) / statistics.median(seconds[name]), 1),
                "seconds": [round(value, 2) for value in seconds[name]],
            }
            if peer_rates:
                results[name]["over_peer"] = round(results[name]["sentences_per_s"] / statistics.median(peer_rates), 2)
            if translators[name].shortlist is not None:
                results[name]["mean_candidate_ids_per_batch"] = _mean_candidates(
                    translators[name], sentences, batch_size
                )
                results[name]["speedup"] = round(
                    results[name]["sentences_per_s"] / results["full vocabulary"]["sentences_per_s"], 2
                )
                results[name]["bleu_change"] = round(results[name]["bleu"] - results["full vocabulary"]["bleu"], 2)
    return report


if __name__ == "__main__":
    run_report(main)
