"""The local server as its clients see it: first request, one client, 32 concurrent clients, with and
without batching, beside the offline decoding rate of the same export.

    RNNSEARCH_DATA=../shared/data python -m bench.serving_load --export_dir=work_dirs/peer_comparison/ours_export \
        > bench/results/serving_load.json

For each server setting (`rnnsearch serve` as a user starts it: warm-up replayed, batching off or
`--enable_batching` with the export's `batching_parameters.txt`), a fresh server process:
- `first_request_ms`: the first one-sentence REST request after the server reports ready;
- `one_client`: `--requests` one-sentence requests one after the other: p50 and p99 in ms;
- `clients_32`: 32 threads sending 10 one-sentence REST requests each (320 different sentences of
  test_2016_flickr): sentences/s over the whole burst, p50 and p99 latency; `clients_32_grpc` the same
  over gRPC (`serving.grpc_client`, one channel shared by the threads);
and once `cold_first_request_ms`: the first request of a server over a copy of the export without its
warm-up file. `offline_sents_per_s`: `BatchTranslator.from_saved_model` decoding the same 320 sentences
in batches of 80, in a process of its own, the decoding call alone. The offline decoding and the two
settings run `--rounds` times, interleaved (this machine's rate moves by ~10% between runs a minute
apart); every figure is the median of its rounds, `of_offline` the median of each round's ratio, and the
rates of every round are kept (`*_rounds`). Prints one JSON object.
"""

import concurrent.futures
import json
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app, flags

from bench.provenance import provenance
from bench.served_model import ServedModel

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
WARMUP_FILE = pathlib.Path("assets.extra") / "tf_serving_warmup_requests"  # serving.servable.WARMUP_FILE

_EXPORT_DIR = flags.DEFINE_string("export_dir", None, "A model base path written by rnnsearch export.", required=True)
_DATA_DIR = flags.DEFINE_string("data_dir", "work_dirs/data/multi30k", "Our built Multi30k En-Fr.")
_REQUESTS = flags.DEFINE_integer("requests", 50, "Requests of the one-client case.")
_ROUNDS = flags.DEFINE_integer("rounds", 3, "Runs of the offline decoding and of each setting, interleaved.",
                               lower_bound=1)

OFFLINE = """
import json, sys, time
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.utils.threads import share_cores
share_cores(2)
sentences = json.load(open(sys.argv[2]))
translator = BatchTranslator.from_saved_model(sys.argv[1], batch_size=80)
translator.translate(sentences[:80])
started = time.perf_counter()
translator.translate(sentences)
print(json.dumps({"offline_sents_per_s": round(len(sentences) / (time.perf_counter() - started), 1)}))
"""


def _percentiles(seconds):
    ordered = sorted(seconds)
    return dict(p50_ms=round(1000 * statistics.median(ordered), 1),
                p99_ms=round(1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 1))


def measure(export_dir, sentences, *server_flags):
    server = ServedModel(export_dir, *server_flags)
    try:
        result = dict(first_request_ms=round(1000 * server.translate(sentences[0]), 1))
        result["one_client"] = _percentiles([server.translate(sentence) for sentence in sentences[:_REQUESTS.value]])
        for name, translate in (("clients_32", server.translate), ("clients_32_grpc", server.translate_grpc)):
            translate(sentences[0])
            with concurrent.futures.ThreadPoolExecutor(32) as pool:
                started = time.perf_counter()
                seconds = list(pool.map(translate, sentences))
                wall = time.perf_counter() - started
            result[name] = dict(sents_per_s=round(len(sentences) / wall, 1), **_percentiles(seconds))
    finally:
        server.stop()
    return result


def _offline_rate(export_dir, sentences_file):
    output = subprocess.run([sys.executable, "-c", OFFLINE, str(export_dir), str(sentences_file)],
                            cwd=REPO_ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(output.splitlines()[-1])["offline_sents_per_s"]


def _measure_against(offline_rate, export_dir, sentences, *server_flags):
    """`measure`, each 32-client rate also as a share of the offline rate of the same round."""
    result = measure(export_dir, sentences, *server_flags)
    for clients in ("clients_32", "clients_32_grpc"):
        result[clients]["of_offline"] = round(result[clients]["sents_per_s"] / offline_rate, 2)
    return result


def _medians(rounds):
    """Rounds of one setting's `measure` -> the same dict of medians; rates keep every round."""
    merged = {}
    for key, value in rounds[0].items():
        values = [result[key] for result in rounds]
        if isinstance(value, dict):
            merged[key] = _medians(values)
        else:
            merged[key] = round(statistics.median(values), 2 if key == "of_offline" else 1)
            if key in ("sents_per_s", "of_offline"):
                merged[f"{key}_rounds"] = values
    return merged


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    export_dir = pathlib.Path(_EXPORT_DIR.value).resolve()
    sentences = (pathlib.Path(_DATA_DIR.value) / "test.source.txt").read_text(encoding="utf-8").splitlines()[:320]
    report = dict(provenance=provenance(), export_dir=str(export_dir), rounds=_ROUNDS.value)
    settings = {"unbatched": (), "batched": ("--enable_batching",
                                             f"--batching_parameters_file={export_dir / 'batching_parameters.txt'}")}
    offline, rounds = [], {name: [] for name in settings}
    with tempfile.TemporaryDirectory() as scratch:
        cold = pathlib.Path(scratch) / "export"
        shutil.copytree(export_dir, cold)
        for warmup in cold.glob(f"*/{WARMUP_FILE}"):
            warmup.unlink()
        server = ServedModel(cold)
        report["cold_first_request_ms"] = round(1000 * server.translate(sentences[0]), 1)
        server.stop()
        sentences_file = pathlib.Path(scratch) / "sentences.json"
        sentences_file.write_text(json.dumps(sentences))
        for _ in range(_ROUNDS.value):
            offline.append(_offline_rate(export_dir, sentences_file))
            for name, server_flags in settings.items():
                rounds[name].append(_measure_against(offline[-1], export_dir, sentences, *server_flags))
    report["offline_sents_per_s"] = round(statistics.median(offline), 1)
    report["offline_sents_per_s_rounds"] = offline
    report.update({name: _medians(results) for name, results in rounds.items()})
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    app.run(main)
