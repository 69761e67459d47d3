"""The peer (OpenNMT-py's RNN-attention model, ../shared/peer): where it is and how its runs are read.

Light on purpose (no TensorFlow): `bench.command_latency` times whole processes from a parent that imports
only this, so that a child's peak memory is not inflated by what the parent had loaded before it forked.
"""

import json
import os
import pathlib

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
