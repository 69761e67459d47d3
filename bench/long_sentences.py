r"""Figure 2 of Bahdanau et al. 2014 to 60+ words, on long sentences made of real ones; prints JSON.

    RNNSEARCH_DATA=../shared/data python -m bench.long_sentences \
        --model_dirs=runs/rnnsearch50,runs/rnnsearch30,runs/rnnencdec50,runs/rnnencdec30 \
        --workdir=work_dirs/long_sentences --output=bench/results/long_sentences.json

(Run it with -m from the repository root: as a script, this file would shadow the package.)

Two commands a user can run themselves, then arithmetic on their files:
1. `rnnsearch join-sentences --corpus=multi30k_enfr --split=test --sizes=1,2,3,4,5`: test_2016 as it is
   and joined 2 to 5 consecutive pairs at a time (both sides the same way), hundreds of lines in every
   10-token bin to 60+ (`WORKDIR/test_joined`, with `lines.txt` saying which sentences each line holds).
2. `rnnsearch evaluate --model_dir=M1,M2,...` on them (`WORKDIR/evaluation`): BLEU by source length, the
   figure with the sentence count of each bin (`bleu_by_length.png`), each model's translations.
The JSON has, per model (named by its directory's base name), the bins `{"0-10": {"bleu", "sentences"},
..., "60+": ...}`, the BLEU of the single sentences (the lines of one sentence) and of the lines of four
joined sentences (the issue's "joined four at a time") from the same translations, and the paper's
comparisons where the models are there: RNNsearch-50's 50-60 bin over its 10-20 bin, RNNsearch against
RNNencdec in every bin of 30 or more sentences, RNNencdec-50 against RNNsearch-30 on the long bins.
"""

import json
import pathlib
import subprocess
import sys

import sacrebleu
from absl import app, flags

from bench.provenance import REPO_ROOT, provenance, run_report
from data_pipeline.sentence_joiner import run_lines
from rnnsearch_tf.utils.text_files import read_lines

RNNSEARCH = [sys.executable, "-m", "rnnsearch_tf.cli.main"]
LONG_BINS = ("30-40", "40-50", "50-60", "60+")
MINIMUM_SENTENCES = 30  # a bin with fewer sentences is not compared

_MODEL_DIRS = flags.DEFINE_list("model_dirs", None, "Model directories; each named by its base name.", required=True)
_WORKDIR = flags.DEFINE_string("workdir", "work_dirs/long_sentences", "Where the joined test set and evaluation go.")
_CHECKPOINT = flags.DEFINE_string("checkpoint", "latest", "Checkpoint of every model (equal updates: latest).")
_SEARCH = flags.DEFINE_list("search", ["--beam_size=5"], "Search flags given to `rnnsearch evaluate`.")


def run(*arguments):
    print("+ rnnsearch " + " ".join(arguments), file=sys.stderr, flush=True)
    subprocess.run([*RNNSEARCH, *arguments], cwd=REPO_ROOT, check=True, stdout=sys.stderr)  # stdout: the JSON only


def subset_bleu(hypotheses, references, sizes, size):
    """Corpus BLEU of the lines that join `size` sentences, and their number."""
    members = [i for i, line_size in enumerate(sizes) if line_size == size]
    score = sacrebleu.corpus_bleu([hypotheses[i] for i in members], [[references[i] for i in members]]).score
    return dict(bleu=round(score, 2), lines=len(members))


def line_sizes(lines_file):
    """Sentences per joined line from `lines.txt` (`sentence_joiner.run_lines`)."""
    return [len(run_lines(line)) for line in read_lines(lines_file)]


def comparisons(models):
    """The paper's observations, where the models they name were evaluated."""
    checks = {}
    search50 = models.get("rnnsearch50")
    if search50:
        long, short = search50["bins"]["50-60"]["bleu"], search50["bins"]["10-20"]["bleu"]
        checks["rnnsearch50_50_60_over_10_20"] = round(long / short, 3) if long is not None and short else None
    for size in ("30", "50"):
        search, encdec = models.get(f"rnnsearch{size}"), models.get(f"rnnencdec{size}")
        if search and encdec:
            compared = [label for label, item in search["bins"].items() if item["sentences"] >= MINIMUM_SENTENCES]
            checks[f"rnnsearch{size}_ahead_of_rnnencdec{size}_in_bins"] = {
                label: search["bins"][label]["bleu"] > encdec["bins"][label]["bleu"] for label in compared
            }
    if "rnnencdec50" in models and "rnnsearch30" in models:
        checks["rnnencdec50_minus_rnnsearch30_long_bins"] = {
            label: round(models["rnnencdec50"]["bins"][label]["bleu"] - models["rnnsearch30"]["bins"][label]["bleu"], 2)
            for label in LONG_BINS
        }
    for name, model in models.items():
        single, four = model["single_sentences"]["bleu"], model["joined_four"]["bleu"]
        checks[f"{name}_joined_four_over_single"] = round(four / single, 3) if single else None
    return checks


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    workdir = pathlib.Path(_WORKDIR.value)
    joined, evaluation = workdir / "test_joined", workdir / "evaluation"
    run("join-sentences", "--corpus=multi30k_enfr", "--split=test", "--sizes=1,2,3,4,5", f"--output_dir={joined}")
    run("evaluate", f"--model_dir={','.join(_MODEL_DIRS.value)}", f"--source={joined / 'source.txt'}",
        f"--reference={joined / 'target.txt'}", f"--output_dir={evaluation}", f"--checkpoint={_CHECKPOINT.value}",
        "--noprogress", *_SEARCH.value)
    metrics = json.loads((evaluation / "metrics.json").read_text(encoding="utf-8"))["models"]
    references, sizes = read_lines(joined / "target.txt"), line_sizes(joined / "lines.txt")
    models = {}
    for name, values in metrics.items():
        hypotheses = read_lines(evaluation / name / "translations.txt")
        models[name] = dict(
            bleu=round(values["bleu"], 2),
            checkpoint=values.get("checkpoint"),
            bins={item["bin"]: dict(bleu=None if item["bleu"] is None else round(item["bleu"], 2),
                                    sentences=item["sentences"]) for item in values["bleu_by_length"]},
            single_sentences=subset_bleu(hypotheses, references, sizes, 1),
            joined_four=subset_bleu(hypotheses, references, sizes, 4),
            truncated_sentences=values.get("truncated_sentences"),
        )
    return dict(
        provenance=provenance(),
        test_set="multi30k test_2016, lines of 1 to 5 consecutive pairs (rnnsearch join-sentences --sizes=1,2,3,4,5)",
        source_length="Moses tokens of the source line",
        search=_SEARCH.value,
        figure=str(evaluation / "bleu_by_length.png"),
        models=models,
        comparisons=comparisons(models),
    )


if __name__ == "__main__":
    run_report(main)
