r"""Word-level against subword models trained alike: BLEU, decoding speed, size and a rare-word probe; prints JSON.

    RNNSEARCH_DATA=../shared/data .venv/bin/python -m bench.subwords \
        --models=words=work_dirs/sw/models/m30k_word,bpe8k=work_dirs/sw/models/m30k_bpe8k \
        --checkpoint=best --beam_size=5 --output=bench/results/subwords_multi30k.json

(Run it with -m from the repository root: as a script, this file would shadow the package.)

Per model (a model directory; its text codec is its own): its training (updates, hours, best dev BLEU from
training_state.json), sacrebleu BLEU of every test split of its data directory (at `--checkpoint`, and with
`--equal_updates_checkpoint` also at that checkpoint of every model) (`{split}.source.txt`
translated with `BatchTranslator`, word-level models also with `<unk>` replaced by the aligned source word),
the beam decoding rate of the first test split (median of `--rounds` rounds that alternate the models,
after one untimed batch that traces the graph), parameters and the vocabulary sizes, and the rare-word
probe: `PROBE_SIZE` caption-like sentences, each with an invented name and a number (`probe_sentences`,
deterministic), translated; the share of names and of numbers found verbatim in the translation (after
`<unk>` replacement for a word-level model: the paper's open problem and its usual remedy, against
subwords that spell any word).
"""

import statistics
import time

import numpy as np
import sacrebleu
from absl import app, flags

from bench.bench_flags import define_named_list
from bench.provenance import provenance, run_report
from bench.rare_words import found_verbatim, probe_sentences
from bench.seed_groups import parse_groups, summarize_groups
from bench.training_flags import training_seed
from data_pipeline.data_dir import DataDir
from rnnsearch_tf.cli import search_flags
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.unk_replacer import UnkReplacer
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.utils.text_files import read_lines

_MODELS = define_named_list("models", None, "NAME=MODEL_DIR of each model compared.",
                            value_name="MODEL_DIR", required=True)
_SPLITS = flags.DEFINE_list("splits", None, "Test splits of each model's data directory (default: those it has "
                            "besides train and dev).")
_ROUNDS = flags.DEFINE_integer("rounds", 3, "Timed decoding rounds per model.", lower_bound=1)
_EQUAL_UPDATES = flags.DEFINE_string(
    "equal_updates_checkpoint", None, "A checkpoint name every model has (e.g. ckpt-1000): BLEU there too, at equal "
    "updates beside --checkpoint's equal time.")
_GROUPS = flags.DEFINE_list(
    "groups", None, "NAME=MODEL+MODEL+... runs of one recipe with different seeds: their BLEU's mean and range "
    "(bench/seed_groups.py).")


def _probe(translator, probes):
    """The share of probe names and of numbers found verbatim in the translations."""
    results = translator.translate([sentence for sentence, _, _ in probes])
    names = sum(found_verbatim(name, result["translation"]) for result, (_, name, _) in zip(results, probes))
    numbers = sum(found_verbatim(number, result["translation"]) for result, (_, _, number) in zip(results, probes))
    examples = [{"source": sentence, "translation": result["translation"]}
                for result, (sentence, _, _) in list(zip(results, probes))[:3]]
    return {"names_unchanged": names / len(probes), "numbers_unchanged": numbers / len(probes), "examples": examples}


def _bleu(translator, data_dir, splits):
    """{split: BLEU as searched, with `<unk>` replaced, chrF} of `translator` on each split's raw text."""
    scores = {}
    for split in splits:
        sources, references = (read_lines(data_dir.text_file(split, side)) for side in ("source", "target"))
        results = translator.translate(sources)
        searched, replaced = [r["searched_translation"] for r in results], [r["translation"] for r in results]
        scores[split] = {"searched": round(sacrebleu.corpus_bleu(searched, [references]).score, 2),
                         "unk_replaced": round(sacrebleu.corpus_bleu(replaced, [references]).score, 2),
                         "chrf": round(sacrebleu.corpus_chrf(searched, [references]).score, 2)}
    return scores


def _training(model_dir):
    state = model_dir.read_training_state()
    last = state["history"][-1]
    return {"updates": last["step"], "epochs": round(last["epoch"], 2), "hours": round(last["hours"], 3),
            "best_step": state["best_step"], "best_dev_bleu": round(state["best_dev_bleu"], 2),
            "seed": training_seed(read_lines(model_dir.flags_file))}


def _size(translator):
    model = translator.module.model
    config = model.config
    return {"parameters": int(sum(np.prod(variable.shape) for variable in model.weights)),
            "source_vocab_size": config.source_vocab_size, "target_vocab_size": config.target_vocab_size}


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    config = search_flags.search_config()
    models = dict(_MODELS.value)
    try:  # before minutes of decoding: a typo fails at once
        groups = parse_groups(_GROUPS.value or [], models)
    except ValueError as error:
        raise app.UsageError(str(error)) from error
    report = {"provenance": provenance(), "checkpoint": search_flags.CHECKPOINT.value, "search": config.to_dict(),
              "batch_size": search_flags.BATCH_SIZE.value, "models": {}}
    translators, replacing = {}, {}
    for name, path in models.items():
        translators[name] = BatchTranslator.from_model_dir(path, search_flags.CHECKPOINT.value,
                                                           search_flags.BATCH_SIZE.value, search_config=config)
        replacing[name] = BatchTranslator.from_model_dir(path, search_flags.CHECKPOINT.value,
                                                         search_flags.BATCH_SIZE.value, UnkReplacer(), search_config=config)
    probes = probe_sentences()
    for name, path in models.items():
        model_dir = ModelDir(path)
        data_dir = DataDir(model_dir.read_data_info()["data_dir"])
        splits = _SPLITS.value or data_dir.test_splits()
        entry = report["models"][name] = {
            "model_dir": path, "codec": model_dir.codec_descriptions()["target"]["kind"],
            "subwords": data_dir.read_metadata().get("subwords"), "training": _training(model_dir),
            "size": _size(translators[name]), "bleu": {}, "checkpoint": translators[name].loaded_from,
        }
        entry["bleu"] = _bleu(replacing[name], data_dir, splits)
        if _EQUAL_UPDATES.value:
            at_updates = BatchTranslator.from_model_dir(path, _EQUAL_UPDATES.value, search_flags.BATCH_SIZE.value,
                                                        UnkReplacer(), search_config=config)
            entry["equal_updates"] = {"checkpoint": at_updates.loaded_from,
                                      "bleu": _bleu(at_updates, data_dir, splits)}
        entry["probe"] = _probe(replacing[name], probes)
        entry["timed_split"] = splits[0]
    _time_decoding(report, translators, models)
    if groups:
        report["groups"] = summarize_groups(report["models"], groups)
    return report


def _time_decoding(report, translators, models):
    """Sentences/s of each model on its first test split, rounds alternating the models."""
    sentences = {name: read_lines(DataDir(ModelDir(path).read_data_info()["data_dir"]).text_file(
        report["models"][name]["timed_split"], "source")) for name, path in models.items()}
    seconds = {name: [] for name in models}
    for name, translator in translators.items():
        translator.translate(sentences[name][: translator.batch_size])  # traces the graph
    for _ in range(_ROUNDS.value):
        for name, translator in translators.items():
            start = time.perf_counter()
            translator.translate(sentences[name])
            seconds[name].append(time.perf_counter() - start)
    for name in models:
        report["models"][name]["sentences_per_s"] = round(len(sentences[name]) / statistics.median(seconds[name]), 1)
        report["models"][name]["decode_seconds"] = [round(value, 2) for value in seconds[name]]


if __name__ == "__main__":
    run_report(main)
