"""Lexically constrained decoding (Post & Vilar 2018) with constraints drawn from the reference; prints JSON.

    flock /tmp/cpu.lock env RNNSEARCH_DATA=../shared/data .venv/bin/python -m bench.constraints \
        --model_dir=work_dirs/sw/models/m30k_word --beam_size=5 > bench/results/constraints.json

(Run it with -m from the repository root: as a script, this file would shadow the package.)

The model's test split (`--split`, "test": Multi30k's test_2016 in a Multi30k data directory) is translated
without constraints (`translate`), and through `translate_constrained` with 0, 1, 2 and 3 constraints per
sentence (`--counts`). The constraints come from the reference, as Post & Vilar's experiments sample
reference phrases (`reference_phrases`): per sentence, a generator seeded with (`--seed`, line index) draws up
to 3 phrases of 1 or 2 consecutive reference tokens (the target codec's Moses tokens), each token all letters
and in the target vocabulary, the phrases not overlapping and of different text; the setting of k
constraints takes the first k (the settings are nested; a short reference may give fewer). Per setting:
the constraints given, met (`constraints_met`: the best translation holds the phrase) and met among those
that fit the length bound (their tokens and `</s>` at most `maximum_target_length` of the source), sacrebleu
corpus BLEU of the detokenized translations against the raw references (as `rnnsearch evaluate`), and
beam decoding sentences/s (median and fastest of `--rounds` rounds, the settings alternating in each round,
after one untimed batch of each function that traces its graph); the cost of a constraint is the extra
milliseconds per sentence of the fastest round over the unconstrained `translate`'s fastest, divided by the
constraints per sentence (on a machine shared with other jobs the fastest round is the one least disturbed).
"""

import json
import statistics
import time

import numpy as np
import sacrebleu
import tensorflow as tf
from absl import app, flags

from bench.provenance import provenance
from bench.reference_phrases import reference_phrases
from data_pipeline.data_dir import DataDir
from data_pipeline.vocabulary import Vocabulary
from rnnsearch_tf.cli import search_flags
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.utils.text_files import read_lines

_MODEL_DIR = flags.DEFINE_string("model_dir", None, "The model directory measured.", required=True)
_SPLIT = flags.DEFINE_string("split", "test", "The test split of its data directory.")
_COUNTS = flags.DEFINE_list("counts", ["0", "1", "2", "3"], "Constraints per sentence of each setting.")
_ROUNDS = flags.DEFINE_integer("rounds", 3, "Timed rounds, the settings alternating.", lower_bound=1)
_SEED = flags.DEFINE_integer("seed", 2018, "Seed of the phrases drawn from each reference.")

UNCONSTRAINED = "none"  # the setting decoded by `translate`


def _draw_constraints(translator, references, most):
    """`most` reference phrases (at most) per line, for every line of `references`."""
    codec = translator.module.target_codec
    vocabulary = {token for token, _ in Vocabulary.read_entries(codec.vocabulary.vocabulary_file)}
    tokens = codec.tokenize(tf.constant(references)).to_list()
    return [reference_phrases([token.decode("utf-8") for token in row], vocabulary, most,
                              np.random.default_rng([_SEED.value, index]))
            for index, row in enumerate(tokens)]


def _met_counts(translator, constraints, results):
    """{given, met, held (the phrase's tokens are a run of the translation's tokens: a check beside the
    search's own `constraints_met`), fitting (the line's constraint tokens and `</s>` within its length bound),
    met_fitting} over all lines."""
    counts = dict.fromkeys(("given", "met", "held", "fitting", "met_fitting"), 0)
    for phrases, result in zip(constraints, results):
        bound = translator.search_config.maximum_target_length(len(result["source_tokens"]))
        fits = bool(result["source_tokens"]) and sum(len(phrase.split()) for phrase in phrases) + 1 <= bound
        for phrase, was_met in zip(phrases, result["constraints_met"]):
            counts["given"] += 1
            counts["met"] += was_met
            counts["held"] += _holds(result["tokens"], phrase.split())
            counts["fitting"] += fits
            counts["met_fitting"] += was_met and fits
    return counts


def _holds(tokens, phrase):
    """Whether `phrase` (list of tokens) is a run of `tokens`."""
    return any(tokens[start : start + len(phrase)] == phrase for start in range(len(tokens) - len(phrase) + 1))


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    config = search_flags.search_config(_MODEL_DIR.value)
    translator = BatchTranslator.from_model_dir(_MODEL_DIR.value, search_flags.CHECKPOINT.value,
                                                search_flags.BATCH_SIZE.value, search_config=config)
    data_dir = DataDir(ModelDir(_MODEL_DIR.value).read_data_info()["data_dir"])
    sources, references = (read_lines(data_dir.text_file(_SPLIT.value, side)) for side in ("source", "target"))
    counts = [int(count) for count in _COUNTS.value]
    drawn = _draw_constraints(translator, references, max(counts))
    settings = {UNCONSTRAINED: None, **{str(count): [phrases[:count] for phrases in drawn] for count in counts}}
    report = {"provenance": provenance(), "model_dir": _MODEL_DIR.value, "checkpoint": translator.loaded_from,
              "split": _SPLIT.value, "sentences": len(sources), "search": config.to_dict(),
              "batch_size": translator.batch_size, "workers": translator.workers, "seed": _SEED.value,
              "settings": {}}
    outputs, seconds = _time_settings(translator, sources, settings)
    base_ms = 1000 * min(seconds[UNCONSTRAINED]) / len(sources)
    for name, constraints in settings.items():
        results = outputs[name]
        entry = report["settings"][name] = {
            "constraints_per_sentence": 0 if constraints is None else int(name),
            "bleu": round(sacrebleu.corpus_bleu([r["translation"] for r in results], [references]).score, 2),
            "sentences_per_s": round(len(sources) / statistics.median(seconds[name]), 1),
            "fastest_sentences_per_s": round(len(sources) / min(seconds[name]), 1),
            "decode_seconds": [round(value, 2) for value in seconds[name]],
        }
        if constraints is not None:
            counts = _met_counts(translator, constraints, results)
            given, fitting = counts["given"], counts["fitting"]
            extra_ms = 1000 * min(seconds[name]) / len(sources) - base_ms
            entry.update(constraints=given, met=counts["met"], held=counts["held"], fitting=fitting,
                         met_share=round(counts["met"] / given, 4) if given else None,
                         met_of_fitting=round(counts["met_fitting"] / fitting, 4) if fitting else None,
                         ms_per_sentence_over_none=round(extra_ms, 2),
                         ms_per_constraint=round(extra_ms * len(sources) / given, 2) if given else None,
                         examples=[{"source": sources[i], "constraints": constraints[i],
                                    "translation": results[i]["translation"], "reference": references[i]}
                                   for i in range(3)])
    print(json.dumps(report, indent=2, ensure_ascii=False))


def _time_settings(translator, sources, settings):
    """({setting: results of its first round}, {setting: seconds of each round}), the settings alternating."""
    batch = slice(0, translator.batch_size)
    for constraints in (None, [[] for _ in sources]):  # traces `translate` and `translate_constrained`
        translator.translate(sources[batch], constraints=None if constraints is None else constraints[batch])
    outputs, seconds = {}, {name: [] for name in settings}
    for _ in range(_ROUNDS.value):
        for name, constraints in settings.items():
            start = time.perf_counter()
            results = translator.translate(sources, constraints=constraints)
            seconds[name].append(time.perf_counter() - start)
            outputs.setdefault(name, results)
    return outputs, seconds


if __name__ == "__main__":
    app.run(main)
