"""The paper's data selection against a random sample of the same size, on what we have; prints JSON.

    RNNSEARCH_DATA=../shared/data .venv/bin/python -m bench.data_selection --output=bench/results/data_selection.json

In domain: the first `IN_DOMAIN_PAIRS` pairs of Multi30k's train split (captions). General: all of Tatoeba,
the WMT news test sets 2012-2014 and the other Multi30k train pairs (held-out captions), shuffled together
(seeded). `rnnsearch select-data` keeps `--max_words` words of the general corpus by cross-entropy difference
(`--side`), and `--ranking=random` a random sample of the same number of words. Each is built with
`rnnsearch build-data --corpus=text_files` (dev: Multi30k val, test: test_2016) and trained with the
quickstart recipe for a fixed `--train_steps` (not hours: the machine is shared, and BLEU must not depend
on its load); BLEU (sacrebleu) of the last checkpoint on test_2016. Reports both BLEUs, the share of each
general source in each selection, and the time the selection took. Work files go to `--work_dir`; a step
whose output is already there is not run again.
"""

import collections
import json
import pathlib
import random
import subprocess
import sys
import time

import sacrebleu
from absl import app, flags

from bench.provenance import provenance, run_report
from data_pipeline import corpus_registry, data_files, pair_reader
from data_pipeline.data_dir import DataDir
from rnnsearch_tf.models.model_dir import ModelDir

_WORK_DIR = flags.DEFINE_string("work_dir", "work_dirs/data_selection", "Folder of the corpora, data and models.")
_IN_DOMAIN_PAIRS = flags.DEFINE_integer(
    "in_domain_pairs", 14_500, "Multi30k train pairs in domain; the rest are mixed into the general corpus.")
_MAX_WORDS = flags.DEFINE_integer("max_words", None, "Words selected (both sides); default: the in-domain corpus's.")
_SIDE = flags.DEFINE_enum("side", "both", ["both", "source"], "select-data's --side.")
_TRAIN_STEPS = flags.DEFINE_integer("train_steps", 1200, "Updates of each training.")
_SEED = flags.DEFINE_integer("seed", 1234, "Seed of the general corpus's shuffle and of the samples.")

_SOURCES = {"multi30k_heldout": None, "tatoeba": ("tatoeba_enfr", ("train", "dev", "test")),
            "newstest": ("wmt14_enfr", ("dev", "test"))}
_MULTI30K = "/multi30k/"


def _pairs(corpus_name, splits):
    corpus, root = corpus_registry.get_corpus(corpus_name), data_files.data_root_from_environment()
    pairs = []
    for split in splits:
        for part in corpus.splits[split]:
            pairs.extend(pair_reader.PairReader.of_part(part, root, 2000))
    return pairs


def _write(path_stem, pairs):
    for side, language in enumerate(("en", "fr")):
        text = "".join(pair[side] + "\n" for pair in pairs)
        pathlib.Path(f"{path_stem}.{language}").write_text(text, encoding="utf-8")


def prepare(work_dir):
    """Writes in_domain.{en,fr}, general.{en,fr} and general.origin; returns {(source, target): origin}."""
    captions = _pairs("multi30k_enfr", ("train",))
    general = [(pair, "multi30k_heldout") for pair in captions[_IN_DOMAIN_PAIRS.value :]]
    for name, (corpus_name, splits) in ((n, s) for n, s in _SOURCES.items() if s):
        general += [(pair, name) for pair in _pairs(corpus_name, splits)]
    random.Random(_SEED.value).shuffle(general)
    if not (work_dir / "general.origin").exists():
        _write(work_dir / "in_domain", captions[: _IN_DOMAIN_PAIRS.value])
        _write(work_dir / "general", [pair for pair, _ in general])
        (work_dir / "general.origin").write_text("".join(origin + "\n" for _, origin in general))
    return dict(general), collections.Counter(origin for _, origin in general)


def _run(*command):
    """Runs an `rnnsearch` command (this interpreter's), stopping the bench if it fails; returns seconds."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rnnsearch_tf.cli.main", *command], check=True, stdout=sys.stderr)
    return round(time.perf_counter() - started, 1)


def select(work_dir, ranking, max_words):
    output_dir = work_dir / ranking
    if not (output_dir / "selection.json").exists():
        _run("select-data", f"--in_domain_source={work_dir}/in_domain.en",
             f"--in_domain_target={work_dir}/in_domain.fr",
             f"--general_source={work_dir}/general.en", f"--general_target={work_dir}/general.fr",
             f"--max_words={max_words}", f"--side={_SIDE.value}", f"--ranking={ranking}", f"--seed={_SEED.value}",
             "--source_language=en", "--target_language=fr", f"--output_dir={output_dir}")
    return output_dir, json.loads((output_dir / "selection.json").read_text())


def build_and_train(work_dir, ranking, selected_dir):
    data_dir, model_dir = work_dir / f"data_{ranking}", work_dir / f"model_{ranking}"
    multi30k = data_files.data_root_from_environment() / "multi30k"
    seconds = {}
    if not pathlib.Path(DataDir(str(data_dir)).metadata_file).exists():
        seconds["build"] = _run(
            "build-data", "--corpus=text_files", "--source_language=en", "--target_language=fr",
            f"--train_source={selected_dir}/train.en",
            f"--train_target={selected_dir}/train.fr", f"--dev_source={multi30k}/val.en.gz",
            f"--dev_target={multi30k}/val.fr.gz", f"--test_source={multi30k}/test_2016_flickr.en.gz",
            f"--test_target={multi30k}/test_2016_flickr.fr.gz", f"--output_dir={data_dir}")
    state = ModelDir(str(model_dir)).read_training_state() if model_dir.exists() else None
    if state is None or state["history"][-1]["step"] < _TRAIN_STEPS.value:
        seconds["train"] = _run("train", "--flagfile=configs/quickstart.flags", f"--data_dir={data_dir}",
                                f"--model_dir={model_dir}", f"--train_steps={_TRAIN_STEPS.value}", "--max_hours=10")
    return data_dir, model_dir, seconds


def test_bleu(data_dir, model_dir):
    """sacrebleu BLEU of the last checkpoint on the data directory's test split (test_2016)."""
    folder = DataDir(str(data_dir))
    sources = pathlib.Path(folder.text_file("test", "source")).read_text(encoding="utf-8")
    references = pathlib.Path(folder.text_file("test", "target")).read_text(encoding="utf-8").splitlines()
    translated = subprocess.run(
        [sys.executable, "-m", "rnnsearch_tf.cli.main", "translate", f"--model_dir={model_dir}", "--checkpoint=latest"],
        input=sources, capture_output=True, text=True, check=True).stdout.splitlines()
    return round(sacrebleu.corpus_bleu(translated, [references]).score, 2)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    work_dir = pathlib.Path(_WORK_DIR.value)
    work_dir.mkdir(parents=True, exist_ok=True)
    origins, general_counts = prepare(work_dir)
    max_words = _MAX_WORDS.value or _in_domain_words(work_dir)
    report = {"provenance": provenance(), "in_domain": f"multi30k train pairs 1-{_IN_DOMAIN_PAIRS.value}",
              "general_pairs": dict(general_counts), "max_words": max_words, "train_steps": _TRAIN_STEPS.value,
              "side": _SIDE.value, "checkpoint": "latest", "test": "multi30k test_2016_flickr", "runs": {}}
    for ranking in ("cross_entropy_difference", "random"):
        selected_dir, selection = select(work_dir, ranking, max_words)
        kept = zip(*((selected_dir / f"train.{language}").read_text(encoding="utf-8").splitlines()
                     for language in ("en", "fr")))
        shares = collections.Counter(origins.get(pair, "unknown") for pair in kept)
        data_dir, model_dir, seconds = build_and_train(work_dir, ranking, selected_dir)
        report["runs"][ranking] = {
            "kept_pairs": selection["kept_pairs"], "kept_words": selection["kept_words"],
            "kept_pairs_by_source": dict(shares),
            "kept_share_of_each_source": {name: round(shares[name] / general_counts[name], 4)
                                          for name in general_counts},
            "selection_timings": selection["timings"], "seconds_this_run": seconds,
            "training": _training(model_dir),
            "test_2016_bleu": test_bleu(data_dir, model_dir)}
        print(json.dumps(report["runs"][ranking]), file=sys.stderr, flush=True)
    return report


def _training(model_dir):
    """Updates, hours and dev BLEU of the last validation, and the best dev BLEU, from training_state.json."""
    state = ModelDir(str(model_dir)).read_training_state()
    last = state["history"][-1]
    return {"updates": last["step"], "hours": round(last["hours"], 3), "best_dev_bleu": round(state["best_dev_bleu"], 2)}


def _in_domain_words(work_dir):
    """Moses tokens of both sides of the in-domain pairs: the words the selections keep by default."""
    from data_pipeline.data_selection import tokenize  # TensorFlow, only when --max_words is not given

    return sum(len(tokens) for language in ("en", "fr") for tokens in tokenize(
        (work_dir / f"in_domain.{language}").read_text(encoding="utf-8").splitlines(), language))


if __name__ == "__main__":
    run_report(main)
