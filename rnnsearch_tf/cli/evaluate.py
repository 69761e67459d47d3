r"""Evaluates one or several model directories on a test set as the paper does (Tables 1-2, Figures 2-3).

    python -m rnnsearch_tf.evaluate --model_dir=models/rnnsearch50,models/rnnencdec50 \
        --source=newstest2014.en --reference=newstest2014.fr --output_dir=eval/newstest2014

A model directory may be an ensemble, its members joined by "+" (`--model_dir=runs/a+runs/b,runs/c`
compares the ensemble of a and b with c). Writes `output_dir/report.md`, `output_dir/metrics.json`
(`{"source", "reference", "models": {name: metrics}}`), `output_dir/bleu_by_length.png`,
`output_dir/learning_curves.png` (dev BLEU against updates and hours of each trained model) and, per
model (named after its folder, and its --checkpoint where that is not "best": `NAME_averaged`, `NAME_ckpt-500`,
so that a run of another checkpoint into the same --output_dir keeps the best one's), `output_dir/NAME/`
with `metrics.json`, `translations.txt`, `translations_unk_replaced.txt` (not for a model without attention:
RNNencdec aligns nothing), `translations_no_unk.txt`, `no_unk_lines.txt` (1-based lines of the No-UNK subset) and
`alignment_LINE.png`, only this run's (`Evaluator` removes those an earlier run wrote there). With
`--checkpoint=averaged` each model's metrics hold what `rnnsearch average` recorded of it (`averaged`: which
checkpoints, by step). Every model (ensemble vocabularies, checkpoints: `Evaluator.check`) and every output folder
is checked before any is decoded, so a mistake in the last one costs no decoding and writes nothing.
See `Evaluator`. The n-best list is `translate`'s: --num_hypotheses is refused.

A model directory with a vocabulary shortlist (`rnnsearch shortlist`) is searched over it, as `translate`
searches (`--noshortlist`: the whole vocabulary, `SearchConfig.shortlist`); each model's line and metrics
name the choice (`shortlist`).
"""

import json
import os

from absl import app, flags

from data_pipeline import languages
from rnnsearch_tf.cli import folder_flags, search_flags
from rnnsearch_tf.evaluation.corpus_scores import scorers
from rnnsearch_tf.evaluation.plots import plot_bleu_by_length, plot_learning_curves
from rnnsearch_tf.evaluation.report import write_report
from rnnsearch_tf.evaluation.evaluator import Evaluator
from rnnsearch_tf.inference.model_loader import member_checkpoints
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.training.checkpoint_averaging import read_averaging
from rnnsearch_tf.utils.text_files import check_line_for_line, check_writable_folder, input_name, read_lines
from rnnsearch_tf.inference.unk_replacer import UnkReplacer

_MODEL_DIR = folder_flags.define_model_dir("each a line in Figure 2", ensemble=True, comma_list=True, required=True)
_SOURCE = flags.DEFINE_string("source", None, "Raw source sentences, one per line.")
_REFERENCE = flags.DEFINE_string("reference", None, "Raw references, line-aligned with --source.")
_OUTPUT_DIR = folder_flags.define_output_dir("report.md, metrics.json, the figures and a folder per model")
_NUM_HEATMAPS = flags.DEFINE_integer("num_heatmaps", 3, "Alignment figures per model.", lower_bound=0)
_NUM_LONGEST = flags.DEFINE_integer(
    "num_longest", 5, "Longest test sentences shown with every model's translation (Appendix C).", lower_bound=0
)
_PROGRESS = flags.DEFINE_boolean("progress", True, "Draw progress bars on stderr.")
flags.mark_flags_as_required(["source", "reference"])


def _model_names(model_dirs, checkpoint="best"):
    """A distinct folder name per model directory: its base name (an ensemble's joined by "+"), then the
    `checkpoint` unless it is "best" (a checkpoint path by its name: "_ckpt-500"), numbered when two share one."""
    suffix = ""
    if checkpoint != "best":
        suffix = "_" + "+".join(os.path.basename(os.path.normpath(part)) for part in checkpoint.split("+"))
    names = []
    for model_dir in model_dirs:
        name = ("+".join(os.path.basename(os.path.normpath(path)) for path in ModelDir.split(model_dir)) or "model"
                ) + suffix
        names.append(name if name not in names else f"{name}_{len(names) + 1}")
    return names


def _averaged(model_dir, checkpoint):
    """What `rnnsearch average` recorded of the averaged checkpoint `model_dir` reads (`read_averaging`): a dict,
    an ensemble's a list of its members' (None for a member of another checkpoint); None where none is averaged."""
    paths = ModelDir.split(model_dir)
    records = [read_averaging(ModelDir(path)) if name == "averaged" else None
               for path, name in zip(paths, member_checkpoints(checkpoint, len(paths)))]
    if not any(records):
        return None
    return records[0] if len(records) == 1 else records


def check_one_pair(model_dirs):
    """The (source, target) language codes of the first of `model_dirs`; raises ValueError in one line when two of
    them translate different language pairs (each model's data.json; an ensemble's first member speaks for it,
    `Translator` checks the others): one --source and --reference are the text of one pair."""
    pairs = {}
    for model_dir in model_dirs:
        data_info = ModelDir(ModelDir.split(model_dir)[0]).read_data_info()
        pairs[model_dir] = tuple(data_info.get(f"{side}_language") for side in ("source", "target"))
    first = next(iter(pairs.values()), ())
    if not all(languages.same_pair(first, pair) for pair in pairs.values()):  # "cmn" is "zh"
        described = "; ".join(f"{model_dir} {' -> '.join(_name(code) for code in pair)}"
                              for model_dir, pair in pairs.items())
        raise ValueError(f"--model_dir: the models translate different language pairs ({described}): --source and "
                         "--reference are one pair's text, evaluate each pair's models apart")
    return first


def _name(code):
    """A language's name and code ("German (de)"); the code alone where it names no language (None included)."""
    name = languages.name_or_code(code)
    return name if name == str(code) else f"{name} ({code})"


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    sources, references = read_lines(_SOURCE.value), read_lines(_REFERENCE.value)
    check_line_for_line(("--reference", _REFERENCE.value, references), ("--source", _SOURCE.value, sources),
                        "reference line")
    if not sources:
        raise app.UsageError(f"--source {input_name(_SOURCE.value)} has no lines: nothing to evaluate")
    search_flags.refuse_given([flags.FLAGS["num_hypotheses"]], "by evaluate: it scores each sentence's best "
                              "translation (rnnsearch translate --output_format=nbest writes the n-best lists)")
    _, target_language = check_one_pair(_MODEL_DIR.value)
    scorers(target_language)  # MeCab, before any decoding
    workers = search_flags.decode_workers()
    unk_dictionary = search_flags.UNK_DICTIONARY.value
    evaluator = Evaluator(
        sources,
        references,
        batch_size=search_flags.BATCH_SIZE.value,
        workers=workers,
        search_config=search_flags.search_config(),
        unk_replacer=UnkReplacer.from_file(unk_dictionary) if unk_dictionary else None,
        num_heatmaps=_NUM_HEATMAPS.value,
        num_longest=_NUM_LONGEST.value,
        progress=_PROGRESS.value,
        precision=search_flags.PRECISION.value,
        quantize=search_flags.QUANTIZE.value,
        function_cache=search_flags.function_cache(),
    )
    checkpoint = search_flags.CHECKPOINT.value
    names = _model_names(_MODEL_DIR.value, checkpoint)
    check_writable_folder(_OUTPUT_DIR.value, "--output_dir")
    for name, model_dir in zip(names, _MODEL_DIR.value):
        evaluator.check(model_dir, checkpoint)
        check_writable_folder(os.path.join(_OUTPUT_DIR.value, name), "--output_dir")
    metrics = {}
    for name, model_dir in zip(names, _MODEL_DIR.value):
        metrics[name] = evaluator.evaluate(model_dir, os.path.join(_OUTPUT_DIR.value, name), checkpoint,
                                           _averaged(model_dir, checkpoint))
        scores = metrics[name]
        print(f"{name}: BLEU {scores['bleu']:.2f} | chrF {scores['chrf']:.2f} | chrF++ {scores['chrf_plus_plus']:.2f} | "
              f"TER {scores['ter']:.2f} ({scores['signature']}) | shortlist: {scores['shortlist']}")
    plot_bleu_by_length(
        {name: values["bleu_by_length"] for name, values in metrics.items()},
        os.path.join(_OUTPUT_DIR.value, "bleu_by_length.png"),
        next(iter(metrics.values()))["source_length_unit"],  # one source language (`check_one_pair`)
    )
    plot_learning_curves(
        {name: (values["training"] or {}).get("history", []) for name, values in metrics.items()},
        os.path.join(_OUTPUT_DIR.value, "learning_curves.png"),
    )
    with open(os.path.join(_OUTPUT_DIR.value, "metrics.json"), "w", encoding="utf-8") as stream:
        json.dump(dict(source=_SOURCE.value, reference=_REFERENCE.value, models=metrics), stream, indent=2)
        stream.write("\n")
    write_report(
        os.path.join(_OUTPUT_DIR.value, "report.md"), metrics, _SOURCE.value, _REFERENCE.value, "bleu_by_length.png",
        "learning_curves.png",
    )
    print(f"report: {os.path.join(_OUTPUT_DIR.value, 'report.md')}")

