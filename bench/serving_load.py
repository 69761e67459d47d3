r"""The local server as its clients see it: first request, one client, 32 concurrent clients, with and
without batching, beside the offline decoding rate of the same export.

    RNNSEARCH_DATA=../shared/data python -m bench.serving_load --export_dir=work_dirs/peer_comparison/ours_export \
        --output=bench/results/serving_load.json

For each server setting (`rnnsearch serve` as a user starts it: warm-up replayed; batching off, or
`--enable_batching` with the export's `batching_parameters.txt` (what users get: batches of at most 16),
or with the same file but `max_batch_size` 32 (`batched_32`: what 32 waiting clients can form)), a fresh
server process:
- `first_request_ms`: the first one-sentence REST request after the server reports ready;
- `one_client`: `--requests` one-sentence requests one after the other: p50 and p99 in ms;
- `clients_32`: 32 threads sending 10 one-sentence REST requests each (320 different sentences of
  test_2016_flickr): sentences/s over the whole burst, p50 and p99 latency; `clients_32_grpc` the same
  over gRPC (Predict requests built as `serving.grpc_client` builds them, one channel shared by the
  threads); with each 32-client burst, what the server did meanwhile: the sizes of the batches it formed
  (`batch_sizes`, `mean_batch_size`) and the requests' mean time in its queue (`queuing_ms`), read from its
  own Prometheus metrics (TF Serving's `processed_batch_size` and `queuing_latency`), and `cpu_s`: the CPU
  seconds of the server's TensorFlow threads and of its Python front, of the clients (this process) and of
  every other process of the machine (others' jobs share the 2 cores: run it under `flock /tmp/cpu.lock`);
and once `cold_first_request_ms`: the first request of a server over a copy of the export without its
warm-up file. `offline_sents_per_s`: `BatchTranslator.from_saved_model` decoding the same 320 sentences
in batches of 32 (`offline_sents_per_s_80`: of 80), in a process of its own, the decoding call alone;
`of_offline` is a 32-client rate over the rate at batches of 32 (32 waiting clients form no larger
batch), `of_offline_80` over the rate at batches of 80; `offline_sents_per_s_arrival_order`: the signature
called on the same sentences in batches of 32 as they come (not sorted by length, as a server gets them),
two at a time, and `of_offline_arrival_order` against it; `offline_cpu_ms_per_sentence*`: their CPU cost.

`version_switch`: a `batched_32` server over a copy of the export in a scratch base path, polling it every
`--poll_wait_seconds`; 32 REST clients send the 320 sentences over and over, `--switch_after_seconds`
into that burst the version folder is copied in under the next version number (copied beside it, then
renamed, so the server never sees half a version), and the clients stop once the new version has answered
320 requests; then the same over gRPC, switching to the version after. Each burst reports its rate,
p50/p99, the requests that failed, the answers of the old and of the new version (REST `X-Model-Version`,
gRPC `model_spec.version`), when the copy landed and when the new version first answered (seconds into
the burst), and `loading`: the rate and latency of the requests answered in between.

The offline decoding and the settings run `--rounds` times, interleaved (this machine's rate moves by
~10% between runs a minute apart); every figure is the median of its rounds, `of_offline` the median of
each round's ratio, and the rates and p99s of every round are kept (`*_rounds`); `batch_sizes` counts the
batches of every round. `load_average_at_start` / `_at_end`: the machine's. Prints one JSON object.
"""

import collections
import concurrent.futures
import itertools
import json
import pathlib
import shutil
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from absl import app, flags

from bench.provenance import provenance, run_report
from bench.served_model import MONITORING_CONFIG, ServedModel
from data_pipeline.export_dir import ExportDir

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]

_EXPORT_DIR = flags.DEFINE_string("export_dir", None, "A model base path written by rnnsearch export.", required=True)
_DATA_DIR = flags.DEFINE_string("data_dir", "work_dirs/data/multi30k", "Our built Multi30k En-Fr.")
_REQUESTS = flags.DEFINE_integer("requests", 50, "Requests of the one-client case.")
_ROUNDS = flags.DEFINE_integer("rounds", 3, "Runs of the offline decoding and of each setting, interleaved.",
                               lower_bound=1)
_POLL_WAIT_SECONDS = flags.DEFINE_float("poll_wait_seconds", 0.2, "The version-switch server's "
                                        "--file_system_poll_wait_seconds.")
_SWITCH_AFTER_SECONDS = flags.DEFINE_float("switch_after_seconds", 1.0, "When the new version is copied in, "
                                           "seconds into the version-switch burst.")
_SWITCH_BURST_LIMIT_S = flags.DEFINE_float("switch_burst_limit_s", 120, "Longest version-switch burst, "
                                           "seconds.")
BATCHING_32 = "max_batch_size { value: 32 }"

OFFLINE = """
import concurrent.futures, json, sys, time
import tensorflow as tf
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.utils.threads import share_cores
share_cores(2)
sentences = json.load(open(sys.argv[2]))
batch_size, order = int(sys.argv[3]), sys.argv[4]
translator = BatchTranslator.from_saved_model(sys.argv[1], batch_size=batch_size)
translate = translator.module.signatures["translate"]
def arrival_order(batch):
    return {name: value.numpy() for name, value in translate(text=tf.constant(batch)).items()}
translator.translate(sentences[:batch_size])
started, cpu = time.perf_counter(), time.process_time()
if order == "sorted":
    translator.translate(sentences)
else:
    with concurrent.futures.ThreadPoolExecutor(translator.workers) as pool:
        list(pool.map(arrival_order, [sentences[i : i + batch_size] for i in range(0, len(sentences), batch_size)]))
wall, cpu = time.perf_counter() - started, time.process_time() - cpu
print(json.dumps({"sents_per_s": round(len(sentences) / wall, 1),
                  "cpu_ms_per_sentence": round(1000 * cpu / len(sentences), 2)}))
"""
# The offline decodings each round: (batch size, order) -> the key of their rate in the report.
OFFLINE_RUNS = {(32, "sorted"): "", (80, "sorted"): "_80", (32, "arrival"): "_arrival_order"}
# Batch sizes as the report groups them (TF Serving's processed_batch_size buckets are 1, 2, 4, ... rows).
BATCH_SIZE_GROUPS = ((1, "1"), (2, "2"), (4, "3-4"), (8, "5-8"), (16, "9-16"), (32, "17-32"), (float("inf"), "33+"))


def _machine_busy_seconds():
    """CPU seconds every process of this machine has used (Linux' /proc/stat: all but idle and iowait)."""
    with open("/proc/stat", encoding="ascii") as stream:
        ticks = [int(field) for field in stream.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def _load_average():
    return [round(load, 2) for load in os.getloadavg()]


def _percentiles(seconds):
    ordered = sorted(seconds)
    return dict(p50_ms=round(1000 * statistics.median(ordered), 1),
                p99_ms=round(1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 1))


def burst(server, translate, sentences):
    """32 client threads `translate` one sentence each of `sentences`: the rate, p50/p99, and what the
    server did meanwhile: the batches it formed (`batch_sizes`: how many of each size; `mean_batch_size`)
    and each request's mean wait in its queue, from its own Prometheus metrics; the CPU seconds of the
    server, of the clients (this process) and of every other process of the machine."""
    before, server_cpu, clients_cpu = server.batch_metrics(), server.cpu_seconds(), time.process_time()
    machine_cpu = _machine_busy_seconds()
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        started = time.perf_counter()
        seconds = list(pool.map(translate, sentences))
        wall = time.perf_counter() - started
    server_cpu = {part: used - server_cpu[part] for part, used in server.cpu_seconds().items()}
    clients_cpu = time.process_time() - clients_cpu
    machine_cpu, after = _machine_busy_seconds() - machine_cpu, server.batch_metrics()
    batches, rows = after["batches"] - before["batches"], after["rows"] - before["rows"]
    counts, below = {}, 0
    for limit, name in BATCH_SIZE_GROUPS:
        cumulative = after["batch_sizes"].get(limit, 0) - before["batch_sizes"].get(limit, 0)
        counts[name], below = int(cumulative - below), cumulative
    queued = after["queued_requests"] - before["queued_requests"]
    return dict(sents_per_s=round(len(sentences) / wall, 1), **_percentiles(seconds),
                batches=int(batches), mean_batch_size=round(rows / batches, 1) if batches else 0.0,
                batch_sizes=counts,
                queuing_ms=round(1000 * (after["queuing_s"] - before["queuing_s"]) / queued, 1) if queued else 0.0,
                cpu_s=dict(server_tensorflow=round(server_cpu["tensorflow"], 2),
                           server_python=round(server_cpu["python"], 2), clients=round(clients_cpu, 2), wall=round(wall, 2),
                           others=round(max(0.0, machine_cpu - sum(server_cpu.values()) - clients_cpu), 2)),
                server_cpu_ms_per_sentence=round(1000 * sum(server_cpu.values()) / len(sentences), 2))


def measure(export_dir, sentences, monitoring_file, *server_flags):
    server = ServedModel(export_dir, f"--monitoring_config_file={monitoring_file}", *server_flags)
    try:
        result = dict(first_request_ms=round(1000 * server.translate(sentences[0]), 1))
        result["one_client"] = _percentiles([server.translate(sentence) for sentence in sentences[:_REQUESTS.value]])
        for name, translate in (("clients_32", server.translate), ("clients_32_grpc", server.translate_grpc)):
            translate(sentences[0])
            result[name] = burst(server, translate, sentences)
    finally:
        server.stop()
    return result


def switch_burst(answer, base_path, new_version, sentences):
    """32 clients `answer` `sentences` over and over; `--switch_after_seconds` in, version
    `new_version - 1` of `base_path` is copied in as `new_version`; they stop once the new version has
    answered `len(sentences)` requests, or after `--switch_burst_limit_s`. Failed requests are counted,
    not raised. The whole burst's rate and latency, and those of the requests answered while the new
    version loaded and warmed up (`loading`: from the copy to its first answer)."""
    old_version = new_version - 1
    answers, errors, lock = [], [], threading.Lock()
    turns, new_version_answers = itertools.count(), collections.Counter()
    started = time.perf_counter()

    def client():
        while (time.perf_counter() - started < _SWITCH_BURST_LIMIT_S.value
               and new_version_answers[new_version] < len(sentences)):
            sentence = sentences[next(turns) % len(sentences)]
            try:
                seconds, version = answer(sentence)
            except Exception as error:  # a refused or failed request is what this burst counts
                with lock:
                    errors.append(f"{type(error).__name__}: {error}")
                continue
            with lock:
                answers.append((seconds, version, time.perf_counter() - started))
                new_version_answers[version] += 1

    def switch():
        partial = base_path / f".{new_version}.partial"  # not a version name: the poll skips it
        shutil.copytree(base_path / str(old_version), partial)
        os.rename(partial, base_path / str(new_version))
        switched.append(time.perf_counter() - started)

    switched = []
    timer = threading.Timer(_SWITCH_AFTER_SECONDS.value, switch)
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        timer.start()
        for done in [pool.submit(client) for _ in range(32)]:
            done.result()
        wall = time.perf_counter() - started
    timer.join()
    first_new = min((done for _, version, done in answers if version == new_version), default=wall)
    loading = [seconds for seconds, _, done in answers if switched[0] <= done < first_new]
    return dict(sents_per_s=round(len(answers) / wall, 1), **_percentiles([seconds for seconds, *_ in answers]),
                errors=len(errors), old_version_answers=sum(version == old_version for _, version, _ in answers),
                new_version_answers=sum(version == new_version for _, version, _ in answers),
                other_version_answers=sum(version not in (old_version, new_version) for _, version, _ in answers),
                copied_at_s=round(switched[0], 2), new_version_first_answer_s=round(first_new, 2),
                burst_s=round(wall, 2),
                loading=dict(seconds=round(first_new - switched[0], 2),
                             sents_per_s=round(len(loading) / (first_new - switched[0]), 1),
                             **_percentiles(loading or [float("nan")])),
                error_examples=sorted(set(errors))[:3])


def measure_switch(export_dir, sentences, batching_file, scratch):
    """`switch_burst` over REST (version 1 -> 2), then gRPC (2 -> 3), of one `batched_32` server over the
    newest version of `export_dir` copied in as version 1."""
    base_path = pathlib.Path(tempfile.mkdtemp(dir=scratch))
    newest = max((path for path in export_dir.iterdir() if path.name.isdigit()), key=lambda path: int(path.name))
    shutil.copytree(newest, base_path / "1")
    server = ServedModel(base_path, "--enable_batching", f"--batching_parameters_file={batching_file}",
                         f"--file_system_poll_wait_seconds={_POLL_WAIT_SECONDS.value}")
    try:
        server.translate(sentences[0])
        server.translate_grpc(sentences[0])
        return dict(clients_32=switch_burst(server.answer, base_path, 2, sentences),
                    clients_32_grpc=switch_burst(server.answer_grpc, base_path, 3, sentences))
    finally:
        server.stop()
        shutil.rmtree(base_path)


def _offline_rate(export_dir, sentences_file, batch_size, order):
    """{"sents_per_s", "cpu_ms_per_sentence"} of `OFFLINE` in a process of its own."""
    output = subprocess.run([sys.executable, "-c", OFFLINE, str(export_dir), str(sentences_file), str(batch_size),
                             order], cwd=REPO_ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(output.splitlines()[-1])


def _against(offline, result):
    """`result` with each 32-client rate also as a share of the offline rates of the same round (`offline`:
    report suffix -> sentences/s, as `OFFLINE_RUNS` names them)."""
    for clients in ("clients_32", "clients_32_grpc"):
        for suffix, rate in offline.items():
            result[clients][f"of_offline{suffix}"] = round(result[clients]["sents_per_s"] / rate, 2)
    return result


def _medians(rounds):
    """Rounds of one setting's `measure` -> the same dict of medians; rates keep every round."""
    merged = {}
    for key, value in rounds[0].items():
        values = [result[key] for result in rounds]
        if key == "batch_sizes":  # the batches of every round, counted together
            merged[key] = {size: sum(counts[size] for counts in values) for size in value}
        elif isinstance(value, dict):
            merged[key] = _medians(values)
        elif isinstance(value, list):
            merged[key] = sorted({item for result in values for item in result})
        else:
            merged[key] = round(statistics.median(values), 2 if key.startswith("of_offline") else 1)
            if key in ("sents_per_s", "of_offline", "of_offline_80", "of_offline_arrival_order", "p99_ms", "errors",
                       "new_version_answers", "new_version_first_answer_s", "mean_batch_size"):
                merged[f"{key}_rounds"] = values
    return merged


def _settings(export_dir, scratch):
    """{setting: server flags} and {setting: its batching file's text} of the settings measured."""
    default_file = pathlib.Path(ExportDir(export_dir).batching_parameters_file)
    batching_32 = scratch / "batching_parameters_32.txt"
    batching_32.write_text("".join(BATCHING_32 + "\n" if line.startswith("max_batch_size") else line
                                   for line in default_file.read_text().splitlines(keepends=True)))
    settings = {"unbatched": (), "batched": ("--enable_batching", f"--batching_parameters_file={default_file}"),
                "batched_32": ("--enable_batching", f"--batching_parameters_file={batching_32}")}
    return settings, dict(batched=default_file.read_text(), batched_32=batching_32.read_text())


def _cold_first_request_ms(export_dir, scratch, sentence):
    """The first request of a server over a copy of the export without its warm-up file."""
    cold = scratch / "export"
    shutil.copytree(export_dir, cold)
    for version in ExportDir(cold).versions().values():
        pathlib.Path(version.warmup_file).unlink(missing_ok=True)
    server = ServedModel(cold)
    try:
        return round(1000 * server.translate(sentence), 1)
    finally:
        server.stop()


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    export_dir = pathlib.Path(_EXPORT_DIR.value).resolve()
    sentences = (pathlib.Path(_DATA_DIR.value) / "test.source.txt").read_text(encoding="utf-8").splitlines()[:320]
    report = dict(provenance=provenance(), export_dir=str(export_dir), rounds=_ROUNDS.value,
                  load_average_at_start=_load_average())
    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        settings, report["batching_parameters"] = _settings(export_dir, scratch)
        monitoring_file = scratch / "monitoring.config"
        monitoring_file.write_text(MONITORING_CONFIG)
        offline, rounds = {run: [] for run in OFFLINE_RUNS}, {name: [] for name in [*settings, "version_switch"]}
        report["cold_first_request_ms"] = _cold_first_request_ms(export_dir, scratch, sentences[0])
        sentences_file = scratch / "sentences.json"
        sentences_file.write_text(json.dumps(sentences))
        for _ in range(_ROUNDS.value):
            for run, results in offline.items():
                results.append(_offline_rate(export_dir, sentences_file, *run))
            this_round = {OFFLINE_RUNS[run]: results[-1]["sents_per_s"] for run, results in offline.items()}
            for name, server_flags in settings.items():
                rounds[name].append(_against(this_round, measure(export_dir, sentences, monitoring_file,
                                                                 *server_flags)))
            rounds["version_switch"].append(_against(this_round, measure_switch(
                export_dir, sentences, scratch / "batching_parameters_32.txt", scratch)))
    for run, results in offline.items():
        report[f"offline_sents_per_s{OFFLINE_RUNS[run]}"] = statistics.median(r["sents_per_s"] for r in results)
        report[f"offline_sents_per_s{OFFLINE_RUNS[run]}_rounds"] = [r["sents_per_s"] for r in results]
        report[f"offline_cpu_ms_per_sentence{OFFLINE_RUNS[run]}"] = statistics.median(
            r["cpu_ms_per_sentence"] for r in results)
    report.update(poll_wait_seconds=_POLL_WAIT_SECONDS.value, switch_after_seconds=_SWITCH_AFTER_SECONDS.value,
                  load_average_at_end=_load_average())
    report.update({name: _medians(results) for name, results in rounds.items()})
    return report


if __name__ == "__main__":
    run_report(main)
