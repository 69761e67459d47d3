"""The peer (OpenNMT-py's RNN-attention model, ../shared/peer): where it is and how its runs are read.

Light on purpose (no TensorFlow): `bench.command_latency` times whole processes from a parent that imports
only this, so that a child's peak memory is not inflated by what the parent had loaded before it forked.
"""

import json
import os
import pathlib
import subprocess

PEER = pathlib.Path(__file__).resolve().parents[2] / "shared" / "peer"
PEER_VENV = pathlib.Path(os.environ.get("PEER_VENV", pathlib.Path.home() / ".cache" / "rnnsearch-peer"))  # install.sh's


def peer_translate_argv(workdir, report, source, output):
    """`onmt_translate` arguments decoding `source` into `output` with the peer's trained model
    (`workdir`: a `multi30k.sh` WORKDIR) and its bench's settings (`report`: its JSON)."""
    config = report["config"]
    return [
        "-model", str(workdir / "onmt" / f"model_step_{config['steps']}.pt"), "-src", str(source),
        "-output", str(output), "-beam_size", str(config["beam"]), "-n_best", "1", "-batch_type", "sents",
        "-batch_size", str(config["translate_batch"]), "-max_length", str(config["max_length"]),
        "-max_length_ratio", str(config["max_length_ratio"]), "-length_penalty", config["length_penalty"],
        "-seed", str(config["seed"]), "-gpu", "-1", "-log_file", str(workdir / "onmt" / "translate.again.log"),
        *config["extra_translate"].split(),
    ]


def peer_environment(report):
    """The environment the peer's bench runs torch in (its thread count)."""
    threads = str(report["torch_threads"])
    return dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)


def read_peer_report(workdir):
    """The JSON of a finished peer run in `workdir`, with its detokenized BLEU."""
    output = (workdir / "report.txt").read_text().splitlines()
    report = json.loads(next(line for line in output if line.startswith("{")))
    report["detokenized_bleu"] = float(next(line for line in output if "BLEU" in line).split()[-1])
    return report


# The peer's decoding again, as its bench (../shared/peer/onmt_bench.py) times it: the decoding call only.
PEER_DECODE = """
import json, os, sys, time
os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
import torch
threads, argv = int(sys.argv[1]), sys.argv[2:]
torch.set_num_threads(threads)
torch.set_num_interop_threads(threads)
import onmt.bin.translate as onmt_translate
from onmt.inference_engine import InferenceEnginePY
seconds, infer_file = [], InferenceEnginePY.infer_file
def timed(self):
    started = time.perf_counter()
    output = infer_file(self)
    seconds.append(time.perf_counter() - started)
    return output
InferenceEnginePY.infer_file = timed
onmt_translate.translate(onmt_translate._get_parser().parse_args(argv))
print(json.dumps({"seconds": seconds[0]}))
"""


def decode_peer(workdir, report):
    """The peer's trained model decoding test_2016_flickr again with its bench's settings: its JSON dict."""
    hypotheses = workdir / "onmt" / "test.again.hyp"
    argv = peer_translate_argv(workdir, report, report["config"]["src_test"], hypotheses)
    output = subprocess.run(
        [str(PEER_VENV / "bin" / "python"), "-c", PEER_DECODE, str(report["torch_threads"]), *argv], check=True,
        capture_output=True, text=True, env=peer_environment(report),
    ).stdout
    seconds = json.loads(output.splitlines()[-1])["seconds"]
    lines = hypotheses.read_text(encoding="utf-8").splitlines()
    in_run = (workdir / "onmt" / "test.hyp").read_text(encoding="utf-8").splitlines()
    return {
        "translate_sents_per_s": round(len(lines) / seconds, 2),
        "translate_tgt_tok_per_s": round(sum(len(line.split()) for line in lines) / seconds, 1),
        "same_translations_as_in_run": lines == in_run,
    }
