r"""Benchmarks `rnnsearch build-data` (or `select-data`) on corpora of millions of pairs and the training input
read from them.

    RNNSEARCH_DATA=../shared/data flock /tmp/cpu.lock .venv/bin/python -m bench.scale \
        --sizes=1000000,3000000,10000000 --output=bench/results/scale.json

(Run it with -m from the repository root: as a script, this file would shadow the package.)

The corpora: every real sentence pair of Multi30k (all four splits), Tatoeba (all of it) and the WMT news test
sets (newstest2012, 2013, 2014), read through the corpus registry from `RNNSEARCH_DATA` (~210,000 pairs),
recombined: pair i of a scale corpus is 1 to 3 of them (how many and which drawn uniformly with `--seed`), the
sources joined by a space and the targets joined the same way. Draws go in blocks of 100,000 pairs, so the
corpus of n pairs is the first n pairs of any larger one. Each corpus is written as plain text to
`--work_dir` (under the git-ignored work_dirs/) and removed after its measurement with its build (unless
`--keep`); nothing of it is committed.

For each size, `rnnsearch build-data --corpus=text_files` runs as a whole process (the paper's 30,000-word
vocabularies, max_length 50, 8 shards): its wall and CPU seconds, its peak RSS (`os.wait4`'s `ru_maxrss` of
that process alone), the disk of the folder it wrote, and the machine's load average before and after (a job
running beside it shows there; the CPU seconds are the figure it disturbs least). Then the paper's input
pipeline on that folder (`TrainingInput`: batches of 80, sorted windows of 20 batches, its shuffle buffer):
sentences/s over `--input_batches` batches after the first (which fills the shuffle buffer).
`model` is what training consumes on this machine (bench/results/train_throughput.json, the
rnnsearch50 preset). `--code_root` runs another checkout's command (a copy of an earlier commit) on the
same corpora, for a before and after.

`--command=select-data` runs `rnnsearch select-data` instead on each corpus as the general one (in domain:
Multi30k train; `--ranking`; `--max_words` = `--kept_words_per_pair` times the pairs, about the paper's 348M
of 850M words): the same wall and CPU seconds, peak RSS and load, the disk of its output folder, and the
pairs and words kept; no training input is read. Its JSON is not a results file (docs/data.md,
"Data selection", has the numbers), so give `--output` a path under work_dirs/.
"""

import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
from absl import app
from absl import flags

from bench.provenance import REPO_ROOT, provenance, run_report
from data_pipeline import corpus_registry
from data_pipeline import data_files
from data_pipeline import pair_reader
from data_pipeline.data_dir import DataDir

_SIZES = flags.DEFINE_list("sizes", ["1000000", "3000000", "10000000"], "Corpus sizes in pairs.")
_WORK_DIR = flags.DEFINE_string("work_dir", str(REPO_ROOT / "work_dirs" / "scale"), "Folder for corpora and builds.")
_SEED = flags.DEFINE_integer("seed", 20141, "Seed of the recombination of real pairs.")
_VOCABULARY_SIZE = flags.DEFINE_integer("vocabulary_size", 30000, "build-data --vocabulary_size (the paper's).")
_NUM_SHARDS = flags.DEFINE_integer("num_shards", 8, "build-data --num_shards.")
_INPUT_BATCHES = flags.DEFINE_integer("input_batches", 1000, "Training batches timed per folder.")
_CODE_ROOT = flags.DEFINE_string("code_root", str(REPO_ROOT), "Checkout whose command runs (e.g. an earlier commit).")
_KEEP = flags.DEFINE_bool("keep", False, "Keep the corpora and built folders in --work_dir.")
_COMMAND = flags.DEFINE_enum("command", "build-data", ["build-data", "select-data"], "The command measured.")
_RANKING = flags.DEFINE_enum("ranking", "cross_entropy_difference", ["cross_entropy_difference", "random"],
                             "select-data --ranking.")
_KEPT_WORDS_PER_PAIR = flags.DEFINE_integer(
    "kept_words_per_pair", 15, "select-data --max_words per general pair (the recombined pairs hold ~38 words).")

_BLOCK_PAIRS = 100_000  # pairs drawn at a time
_MOST_JOINED = 3  # real pairs joined into one scale pair, at most
_BATCH_SIZE, _SORT_WINDOW = 80, 20  # Bahdanau et al. 2014, Appendix B.2
_MIB = 1 << 20


def real_pairs(data_root):
    """The real (source, target) pairs recombined, and the files they come from with their sha256."""
    parts = [part for corpus in (corpus_registry.MULTI30K_ENFR, corpus_registry.TATOEBA_ENFR)
             for parts in corpus.splits.values() for part in parts]
    parts += [part for split in ("dev", "test") for part in corpus_registry.WMT14_ENFR.splits[split]]
    pairs, inputs = [], {}
    for part in parts:  # Tatoeba's three parts (hash buckets of its splits) together are all of it, once
        reader = pair_reader.PairReader.of_part(part, data_root, max_line_chars=2000)
        pairs += list(reader)
        for path in reader.paths:
            inputs.setdefault(str(path.relative_to(data_root)), pair_reader.sha256(path))
    return pairs, inputs


def write_corpus(pairs, count, seed, folder):
    """Writes `count` recombined pairs to folder/train.{en,fr}; returns the two paths."""
    sources = np.array([source for source, _ in pairs], dtype=object)
    targets = np.array([target for _, target in pairs], dtype=object)
    random = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / "train.en", folder / "train.fr"
    with open(paths[0], "w", encoding="utf-8") as source_file, open(paths[1], "w", encoding="utf-8") as target_file:
        for start in range(0, count, _BLOCK_PAIRS):
            joined = random.integers(1, _MOST_JOINED + 1, size=_BLOCK_PAIRS)  # [block]
            chosen = random.integers(len(pairs), size=(_BLOCK_PAIRS, _MOST_JOINED))  # [block, 3]
            size = min(_BLOCK_PAIRS, count - start)
            for texts, stream in ((sources, source_file), (targets, target_file)):
                lines = texts[chosen[:size, 0]]
                for position in range(1, _MOST_JOINED):
                    more = joined[:size] > position
                    lines[more] = lines[more] + " " + texts[chosen[:size, position][more]]
                stream.write("\n".join(lines) + "\n")
    return paths


def command_arguments(paths, count, output_dir):
    """The arguments of `--command` on the corpus `paths` of `count` pairs, writing to `output_dir`."""
    if _COMMAND.value == "select-data":
        return ["select-data", "--in_domain_corpus=multi30k_enfr:train", f"--general_source={paths[0]}",
                f"--general_target={paths[1]}", "--source_language=en", "--target_language=fr",
                f"--ranking={_RANKING.value}", f"--max_words={_KEPT_WORDS_PER_PAIR.value * count}",
                f"--output_dir={output_dir}"]
    return ["build-data", "--corpus=text_files", "--source_language=en", "--target_language=fr",
            f"--train_source={paths[0]}", f"--train_target={paths[1]}", f"--output_dir={output_dir}",
            f"--vocabulary_size={_VOCABULARY_SIZE.value}", f"--num_shards={_NUM_SHARDS.value}"]


def run_command(arguments, log_path):
    """Runs `rnnsearch` with `arguments` as a whole process: {wall seconds, CPU seconds, peak RSS in MiB, the
    1-minute load average of the machine before and after (other jobs show there)}."""
    command = [sys.executable, "-m", "rnnsearch_tf.cli.main", *arguments]
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=_CODE_ROOT.value)
    load_before = os.getloadavg()[0]
    with open(log_path, "w") as log:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=_CODE_ROOT.value, env=environment, stdout=log, stderr=log)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"{arguments[0]} failed ({process.returncode}): {log_path}:\n{log_path.read_text()[-3000:]}")
    return {"seconds": round(seconds, 1), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
            "peak_mib": round(usage.ru_maxrss / 1024),  # ru_maxrss is in KiB on Linux
            "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)]}


def input_sentences_per_s(data_dir, batches):
    """Sentences/s of the paper's training input (batches of 80, sorted windows of 20) over `batches` batches
    after the first, and the seconds to the first (the shuffle buffer filled)."""
    from data_pipeline.training_input import TrainingInput

    start = time.perf_counter()
    dataset = TrainingInput(data_dir.shard_pattern("train"), batch_size=_BATCH_SIZE, sort_window=_SORT_WINDOW,
                            pairs=data_dir.records("train"))()
    iterator = iter(dataset)
    next(iterator)
    first_batch_seconds = time.perf_counter() - start
    start, sentences = time.perf_counter(), 0
    for _ in range(batches):
        sentences += int(next(iterator)["source_ids"].shape[0])
    return sentences / (time.perf_counter() - start), first_batch_seconds


def folder_mib(folder):
    return sum(path.stat().st_size for path in pathlib.Path(folder).rglob("*") if path.is_file()) / _MIB


def measure(pairs, count):
    """One size: the corpus written, and built and read (or selected from); returns its row of the JSON."""
    work_dir = pathlib.Path(_WORK_DIR.value).resolve() / f"{count}"
    start = time.perf_counter()
    paths = write_corpus(pairs, count, _SEED.value, work_dir / "corpus")
    corpus_seconds = time.perf_counter() - start
    output_dir = work_dir / ("selected" if _COMMAND.value == "select-data" else "data")
    log_path = work_dir / f"{_COMMAND.value}.log"
    run = run_command(command_arguments(paths, count, output_dir), log_path)
    row = {"pairs": count, **_outcome(output_dir), **run, "pairs_per_s": round(count / run["seconds"]),
           "disk_mib": round(folder_mib(output_dir), 1), "corpus_mib": round(folder_mib(work_dir / "corpus"), 1),
           "corpus_seconds": round(corpus_seconds, 1)}
    if _COMMAND.value == "build-data":
        rate, first_batch_seconds = input_sentences_per_s(DataDir(str(output_dir)), _INPUT_BATCHES.value)
        row.update(input_sentences_per_s=round(rate), input_first_batch_seconds=round(first_batch_seconds, 1))
    row["last_progress_lines"] = log_path.read_text().splitlines()[-3:]
    if not _KEEP.value:
        for path in sorted(work_dir.rglob("*"), key=lambda path: -len(path.parts)):
            path.rmdir() if path.is_dir() else path.unlink()
        work_dir.rmdir()
    return row


def _outcome(output_dir):
    """What the command kept: build-data's kept and dropped pairs, or select-data's kept pairs and words."""
    if _COMMAND.value == "select-data":
        selection = json.loads((output_dir / "selection.json").read_text())
        return {key: selection[key] for key in ("kept_pairs", "kept_words", "general_words", "timings")}
    train = DataDir(str(output_dir)).read_metadata()["splits"]["train"]
    return {"kept": train["kept"], "dropped": train["dropped"]}


def model_sentences_per_s():
    """Training sentences/s of the paper's model on this machine, from bench/results/train_throughput.json."""
    path = REPO_ROOT / "bench" / "results" / "train_throughput.json"
    report = json.loads(path.read_text())
    return {"sentences_per_s": report["sentences_per_s"], "preset": report["preset"],
            "from": str(path.relative_to(REPO_ROOT)), "measured": report["provenance"]["date"]}


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    data_root = data_files.data_root_from_environment()
    if data_root is None:
        raise app.UsageError(f"set {data_files.DATA_ENVIRONMENT_VARIABLE} to the folder of the real corpora")
    pairs, inputs = real_pairs(data_root)
    rows = [measure(pairs, int(size)) for size in _SIZES.value]
    report = {
        "provenance": provenance(),
        "corpus": {"real_pairs": len(pairs), "inputs": inputs, "seed": _SEED.value,
                   "recombination": f"1-{_MOST_JOINED} real pairs per pair, uniform, joined by a space"},
    }
    if _COMMAND.value == "select-data":
        report["select"] = {"in_domain_corpus": "multi30k_enfr:train", "ranking": _RANKING.value,
                            "max_words_per_pair": _KEPT_WORDS_PER_PAIR.value, "code_root": _CODE_ROOT.value}
    else:
        report["build"] = {"vocabulary_size": _VOCABULARY_SIZE.value, "max_length": 50,
                           "num_shards": _NUM_SHARDS.value, "code_root": _CODE_ROOT.value}
        report["input"] = {"batch_size": _BATCH_SIZE, "sort_window": _SORT_WINDOW,
                           "timed_batches": _INPUT_BATCHES.value}
    report.update(
        sizes=rows, peak_mib_largest_over_smallest=round(rows[-1]["peak_mib"] / rows[0]["peak_mib"], 2),
        seconds_per_million_pairs=[round(row["seconds"] / row["pairs"] * 1e6, 1) for row in rows])
    if _COMMAND.value == "build-data":
        report["model"] = model_sentences_per_s()
    return report


if __name__ == "__main__":
    run_report(main)
