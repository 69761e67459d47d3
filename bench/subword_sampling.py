r"""Subword sampling against fixed pieces, trained alike: the updates reached and BLEU / chrF; prints JSON.

    RNNSEARCH_DATA=../shared/data .venv/bin/python -m bench.subword_sampling \
        --models=dropout0.1=work_dirs/sampling/m30k_bpe8k_dropout0.1,fixed=work_dirs/sampling/m30k_bpe8k_fixed \
        --checkpoint=best --beam_size=5 --output=bench/results/subword_sampling.json

(Run it with -m from the repository root: as a script, this file would shadow the package.)

Per model directory (each trained with `rnnsearch train --flagfile=configs/quickstart.flags` on the same
SentencePiece data, with or without `--subword_sampling_alpha`, one after the other): the
`subword_sampling_alpha` of its flags.txt, its training (updates, epochs, hours, best dev BLEU from
training_state.json, with the dev BLEU of each validation), and sacrebleu BLEU and chrF of every test split of
its data directory (`{split}.source.txt` translated with `BatchTranslator` at `--checkpoint`, and with
`--equal_updates_checkpoint` also at that checkpoint of every model).
"""


import sacrebleu
from absl import app, flags

from bench.bench_flags import define_named_list
from bench.provenance import provenance, run_report
from bench.training_flags import sampling_alpha
from data_pipeline.data_dir import DataDir
from rnnsearch_tf.cli import search_flags
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.utils.text_files import read_lines

_MODELS = define_named_list("models", None, "NAME=MODEL_DIR of each model compared.",
                            value_name="MODEL_DIR", required=True)
_SPLITS = flags.DEFINE_list("splits", None, "Test splits of each model's data directory (default: those it has "
                            "besides train and dev).")
_EQUAL_UPDATES = flags.DEFINE_string(
    "equal_updates_checkpoint", None, "A checkpoint name every model has (e.g. ckpt-500): the scores there too, at "
    "equal updates beside --checkpoint's equal time.")


def _training(model_dir):
    state = model_dir.read_training_state()
    last = state["history"][-1]
    return {"updates": last["step"], "epochs": round(last["epoch"], 2), "hours": round(last["hours"], 3),
            "best_step": state["best_step"], "best_dev_bleu": round(state["best_dev_bleu"], 2),
            "dev_bleu_by_step": {entry["step"]: round(entry["dev_bleu"], 2) for entry in state["history"]}}


def _scores(translator, data_dir, splits):
    """{split: {"bleu", "chrf"}} of `translator` on each split's raw text."""
    scores = {}
    for split in splits:
        sources, references = (read_lines(data_dir.text_file(split, side)) for side in ("source", "target"))
        translations = [result["translation"] for result in translator.translate(sources)]
        scores[split] = {"bleu": round(sacrebleu.corpus_bleu(translations, [references]).score, 2),
                         "chrf": round(sacrebleu.corpus_chrf(translations, [references]).score, 2)}
    return scores


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    config = search_flags.search_config()
    report = {"provenance": provenance(), "checkpoint": search_flags.CHECKPOINT.value, "search": config.to_dict(),
              "runs": {}}
    for name, path in _MODELS.value:
        model_dir = ModelDir(path)
        data_dir = DataDir(model_dir.read_data_info()["data_dir"])
        splits = _SPLITS.value or data_dir.test_splits()
        with open(model_dir.flags_file, encoding="utf-8") as stream:
            alpha = sampling_alpha(stream.read().splitlines())
        translator = BatchTranslator.from_model_dir(path, search_flags.CHECKPOINT.value, search_flags.BATCH_SIZE.value,
                                                    search_config=config)
        report["runs"][name] = {"model_dir": path, "subword_sampling_alpha": alpha, "training": _training(model_dir),
                                "checkpoint": translator.loaded_from, "scores": _scores(translator, data_dir, splits)}
        if _EQUAL_UPDATES.value:
            at_updates = BatchTranslator.from_model_dir(path, _EQUAL_UPDATES.value, search_flags.BATCH_SIZE.value,
                                                        search_config=config)
            report["runs"][name]["equal_updates"] = {"checkpoint": at_updates.loaded_from,
                                                     "scores": _scores(at_updates, data_dir, splits)}
    return report


if __name__ == "__main__":
    run_report(main)
