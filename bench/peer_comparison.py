"""Ours beside the peer (OpenNMT-py's RNN-attention model, ../shared/peer) on one machine in one sitting.

    RNNSEARCH_DATA=../shared/data python -m bench.peer_comparison --updates=300 --workdir=work_dirs/peer_comparison

(Install the peer first: `bash ../shared/peer/install.sh`. Run nothing else meanwhile: both are timed.)

1. The peer: `../shared/peer/multi30k.sh WORKDIR STEPS 256 512 10000` (embeddings 256, hidden 512, batch
   80, Adam 1e-3): its training target tokens/s (after its warm-up), beam-5 decoding of
   test_2016_flickr (1000 sentences, batches of 80) and detokenized BLEU.
2. Ours at the peer's decoder size (m = 256, n = 512, l = 256, n' = 512), batch 80, the CPU recipe of
   `configs/multi30k_rnnsearch.flags` in `--precision` (float32 unless named), STEPS updates of the same
   corpus: target tokens/s over the updates after the first `--log_every` window; its decoding (step 3): beam
   5 on the same 1000 sentences in batches of 80 with the peer's average length normalisation and length bound
   (1.25 x source + 5), `--decode_workers` batches at once (each on its share of the cores, as `rnnsearch
   translate` does; in a process of its own, whose threads are set before its first op), and BLEU; again
   with OpenNMT-py's stopping rule (`early_stopping`: a sentence ends once its best candidate ends with
   EOS) under `ours.early_stopping`.
3. `--decode_rounds` rounds of decoding once both are trained, the peer's (its checkpoint decoded again as
   its bench does, the decoding call timed) and our two alternating: this machine's speed drifts by tens
   of percent within minutes, so each decoding figure is the median of its rounds (all rounds are in the
   JSON, `*_rounds`; the peer's first decoding, right after its training, as `translate_sents_per_s_in_run`).
4. The ratios; the analytic FLOPs per target token of both models (matmuls of the forward pass x 3); and
   each one's achieved FLOP/s as a fraction of this machine's peak dense float32 matmul (2048^3).

Prints one JSON object.
"""

import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import sacrebleu
import tensorflow as tf
from absl import app, flags
from tensorboard.backend.event_processing import event_accumulator

# --precision (ours, in training and decoding) is train_throughput's flag, defined once per process.
from bench.peer import PEER, decode_peer, read_peer_report
from bench.matmul_timing import seconds_per_product
from bench.provenance import cpu_summary, provenance, run_report
from bench.model_sizes import PRESETS, forward_matmuls, matmul_flops
from bench.train_throughput import _PRECISION
from data_pipeline import data_files
from rnnsearch_tf.inference.batch_translator import DECODE_WORKERS, BatchTranslator
from rnnsearch_tf.utils.precision import dtype_policy
from rnnsearch_tf.utils.threads import share_cores

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
SIZES = {name: PRESETS["peer"][name] for name in ("embedding_dim", "hidden_dim", "maxout_dim", "alignment_dim",
                                                   "batch_size")}  # the trainer flags of train_throughput's preset

_UPDATES = flags.DEFINE_integer("updates", 300, "Updates of each system.")
_WORKDIR = flags.DEFINE_string("workdir", "work_dirs/peer_comparison", "Where both systems write.")
_DATA_DIR = flags.DEFINE_string("data_dir", "work_dirs/data/multi30k", "Our built Multi30k En-Fr.")
_LOG_EVERY = flags.DEFINE_integer("log_every", 50, "Our statistics window; the first one is the warm-up.")
_DECODE_WORKERS = flags.DEFINE_integer("decode_workers", DECODE_WORKERS, "Our batches decoded at once.")
_DECODE = flags.DEFINE_string("decode", None, "Only decode this model directory of ours and print the JSON (step 2's "
                              "decoding, run by the bench in a process of its own).")
_EARLY_STOPPING = flags.DEFINE_boolean("early_stopping", False, "With --decode: OpenNMT-py's stopping rule.")
_DECODE_ROUNDS = flags.DEFINE_integer(
    "decode_rounds", 3, "Rounds of decoding, the peer's and ours alternating.", lower_bound=1
)
_REUSE = flags.DEFINE_boolean(
    "reuse", False, "Keep a finished peer run and our finished training in --workdir (after an interrupted bench)."
)


def run_peer(workdir, steps):
    if not (_REUSE.value and (workdir / "report.txt").exists()):
        environment = dict(os.environ, RNNSEARCH_DATA=str(data_files.data_root_from_environment()))
        output = subprocess.run(
            ["bash", str(PEER / "multi30k.sh"), str(workdir), str(steps), "256", "512", "10000"],
            check=True, capture_output=True, text=True, env=environment,
        ).stdout
        (workdir / "report.txt").write_text(output)
    return read_peer_report(workdir)


def decoding_rounds(workdir, peer, rounds):
    """`rounds` of the peer's decoding, ours and ours with early stopping, alternating: their median dicts."""
    runs = {"peer": [], "ours": [], "early_stopping": []}
    for _ in range(rounds):
        runs["peer"].append(decode_peer(workdir / "peer", peer))
        runs["ours"].append(decode_ours(workdir / "ours"))
        runs["early_stopping"].append(decode_ours(workdir / "ours", early_stopping=True))
    medians = {}
    for name, results in runs.items():
        medians[name] = dict(results[-1])  # BLEU, worker settings: the same in every round
        for key in ("translate_sents_per_s", "translate_tgt_tok_per_s"):
            medians[name][key] = statistics.median(result[key] for result in results)
            medians[name][f"{key}_rounds"] = [result[key] for result in results]
    medians["peer"]["same_translations_as_in_run"] = all(run["same_translations_as_in_run"] for run in runs["peer"])
    return medians


def train_ours(model_dir, steps):
    command = [
        sys.executable, "-m", "rnnsearch_tf.train", "--flagfile=configs/multi30k_rnnsearch.flags",
        f"--data_dir={os.path.abspath(_DATA_DIR.value)}", f"--model_dir={model_dir}", f"--train_steps={steps}",
        "--max_hours=1000",
        "--validate_every=0", f"--log_every={_LOG_EVERY.value}", f"--checkpoint_every={steps}",
        f"--precision={_PRECISION.value}",
        *[f"--{name}={value}" for name, value in SIZES.items()],
    ]
    wall_file = pathlib.Path(model_dir) / "train_wall_seconds.txt"
    if not (_REUSE.value and wall_file.exists()):
        started = time.perf_counter()
        subprocess.run(command, check=True, cwd=REPO_ROOT, capture_output=True)
        wall_file.write_text(str(time.perf_counter() - started))
    wall_seconds = float(wall_file.read_text())
    accumulator = event_accumulator.EventAccumulator(
        str(pathlib.Path(model_dir) / "train"), size_guidance={"tensors": 0}
    )
    accumulator.Reload()

    def scalars(tag):
        return [float(tf.make_ndarray(event.tensor_proto)) for event in accumulator.Tensors(tag)]

    windows = list(zip(scalars("tokens_per_second"), scalars("sentences_per_second")))[1:]  # after the warm-up
    return {
        "train_wall_s": round(wall_seconds, 1),
        "train_tgt_tok_per_s": round(sum(tokens for tokens, _ in windows) / len(windows), 1),
        "train_sents_per_s": round(sum(sentences for _, sentences in windows) / len(windows), 2),
    }


def decode_ours(model_dir, early_stopping=False):
    """Step 2's decoding in a fresh process (`--decode`): its JSON dict."""
    command = [
        sys.executable, "-m", "bench.peer_comparison", f"--decode={model_dir}", f"--data_dir={_DATA_DIR.value}",
        f"--precision={_PRECISION.value}", f"--decode_workers={_DECODE_WORKERS.value}",
        f"--early_stopping={early_stopping}",
    ]
    output = subprocess.run(command, check=True, cwd=REPO_ROOT, capture_output=True, text=True).stdout
    return json.loads(output.splitlines()[-1])


def decode(model_dir, data_dir, workers, early_stopping):
    """Beam-5 decoding of test_2016_flickr with the peer's settings: speed and BLEU."""
    share_cores(workers)
    translator = BatchTranslator.from_model_dir(
        model_dir, "latest", batch_size=80, workers=workers, beam_size=5, length_normalization="length",
        maximum_length_a=1.25, maximum_length_b=5, early_stopping=early_stopping, precision=_PRECISION.value,
    )
    sources = (pathlib.Path(data_dir) / "test.source.txt").read_text(encoding="utf-8").splitlines()
    references = (pathlib.Path(data_dir) / "test.target.txt").read_text(encoding="utf-8").splitlines()
    translator.translate(sources[:80])  # traces the graphs
    started = time.perf_counter()
    results = translator.translate(sources)
    seconds = time.perf_counter() - started
    words = sum(len(result["tokens"]) for result in results)
    hypotheses = [result["translation"] for result in results]
    return {
        "translate_sents_per_s": round(len(sources) / seconds, 2),
        "translate_tgt_tok_per_s": round(words / seconds, 1),
        "detokenized_bleu": round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2),
        "decode_workers": workers,
        "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
    }


def peer_forward_matmuls(batch=80, source_length=14, target_length=16, embedding=256, hidden=512, vocab=10004):
    """OpenNMT-py's RNN (bidirectional GRU of hidden/2 per direction, GRU decoder with input feeding,
    "mlp" attention on the new state, tanh(W[c; h]), generator): `(name, M, K, N, count)` per update. Its
    attention projects the source annotations again at every target step (`GlobalAttention.score` is called
    once a step with the whole memory bank), hence the keys' `target_length` products."""
    half, source_tokens, target_tokens = hidden // 2, batch * source_length, batch * target_length
    return [
        ("encoder input", source_tokens, embedding, 3 * half, 2),
        ("encoder recurrent", batch, half, 3 * half, 2 * source_length),
        ("attention keys", source_tokens, hidden, hidden, target_length),
        ("decoder input (embedding + input feed)", target_tokens, embedding + hidden, 3 * hidden, 1),
        ("decoder recurrent", batch, hidden, 3 * hidden, target_length),
        ("attention query", batch, hidden, hidden, target_length),
        ("attention v", batch * source_length, hidden, 1, target_length),
        ("context", batch, source_length, hidden, target_length),
        ("output W[c; h]", target_tokens, 2 * hidden, hidden, 1),
        ("generator", target_tokens, hidden, vocab, 1),
    ]


def flops_per_target_token(matmuls, batch=80, target_length=16):
    return 3 * matmul_flops(matmuls) / (batch * target_length)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    if _DECODE.value:  # a helper process of decoding_rounds, which reads this one line: no report of its own
        print(json.dumps(decode(_DECODE.value, _DATA_DIR.value, _DECODE_WORKERS.value, _EARLY_STOPPING.value)))
        return None
    steps = _UPDATES.value
    if steps < 2 * _LOG_EVERY.value:
        raise app.UsageError(f"--updates={steps} leaves no statistics window after the warm-up window of --log_every="
                             f"{_LOG_EVERY.value} updates: give at least {2 * _LOG_EVERY.value} updates")
    workdir = pathlib.Path(_WORKDIR.value).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    peer = run_peer(workdir / "peer", steps)
    ours = train_ours(workdir / "ours", steps)
    decodings = decoding_rounds(workdir, peer, _DECODE_ROUNDS.value)
    peer["translate_sents_per_s_in_run"] = peer["translate_sents_per_s"]
    peer.update(decodings["peer"])
    ours.update(decodings["ours"])
    ours["early_stopping"] = decodings["early_stopping"]
    peak = 2 * 2048**3 / seconds_per_product(2048, 2048, 2048, rounds=3, seconds_per_sample=2.0 / 3) / 1e9
    our_flops = flops_per_target_token(forward_matmuls(PRESETS["peer"]))
    peer_flops = flops_per_target_token(peer_forward_matmuls())
    report = {
        "provenance": provenance(),
        "steps": steps,
        "date": time.strftime("%Y-%m-%d"),
        "cpu": cpu_summary(),
        "peak_dense_matmul_gflop_per_s": round(peak, 1),
        "peer": {name: peer[name] for name in (
            "train_tgt_tok_per_s", "train_sents_per_s", "translate_sents_per_s", "translate_tgt_tok_per_s",
            "translate_sents_per_s_rounds", "translate_tgt_tok_per_s_rounds", "translate_sents_per_s_in_run",
            "same_translations_as_in_run", "detokenized_bleu", "train_wall_s")},
        "decode_rounds": _DECODE_ROUNDS.value,
        "ours": dict(ours, precision=dtype_policy(_PRECISION.value)),
        "flops_per_target_token": {"peer": int(peer_flops), "ours": int(our_flops)},
    }
    for name, flops in (("peer", peer_flops), ("ours", our_flops)):
        report[name]["fraction_of_peak_matmul"] = round(
            report[name]["train_tgt_tok_per_s"] * flops / 1e9 / peak, 3
        )
    report["ratios_ours_over_peer"] = {
        name: round(ours[name] / peer[name], 2)
        for name in ("train_tgt_tok_per_s", "train_sents_per_s", "translate_sents_per_s", "translate_tgt_tok_per_s")
    }
    report["ratios_ours_over_peer"]["translate_sents_per_s_early_stopping"] = round(
        ours["early_stopping"]["translate_sents_per_s"] / peer["translate_sents_per_s"], 2
    )
    report["ratios_ours_over_peer"]["train_flop_per_s"] = round(
        ours["train_tgt_tok_per_s"] * our_flops / (peer["train_tgt_tok_per_s"] * peer_flops), 2
    )
    return report


if __name__ == "__main__":
    run_report(main)
