r"""Lexically constrained decoding (Post & Vilar 2018) with constraints drawn from the reference, or from a
glossary; prints JSON.

    flock /tmp/cpu.lock env RNNSEARCH_DATA=../shared/data .venv/bin/python -m bench.constraints \
        --model_dir=work_dirs/sw/models/m30k_word --beam_size=5 --output=bench/results/constraints.json
    RNNSEARCH_DATA=../shared/data .venv/bin/python -m bench.constraints --model_dir=work_dirs/glossary_words \
        --glossary=unusual --sentences=500 --beam_size=5 --output=bench/results/constraints_glossary_words.json

(Run it with -m from the repository root: as a script, this file would shadow the package.)

The model's test split (`--split`, "test": Multi30k's test_2016 in a Multi30k data directory) is translated
without constraints (`translate`), and through `translate_constrained` with 0, 1, 2 and 3 constraints per
sentence (`--counts`). The constraints come from the reference, as Post & Vilar's experiments sample
reference phrases (`reference_phrases`): per sentence, a generator seeded with (`--seed`, line index) draws up
to 3 phrases of 1 or 2 consecutive reference tokens (Moses tokens: the target codec's, or its language's rules
for a subword codec), each token all letters and in the target vocabulary (a subword one spells every word), the phrases not overlapping and of different text; the setting of k
constraints takes the first k (the settings are nested; a short reference may give fewer). Per setting:
the constraints given, met (`constraints_met`: the best translation holds the phrase) and met among those
that fit the length bound (their tokens and `</s>` at most `maximum_target_length` of the source), sacrebleu
corpus BLEU of the detokenized translations against the raw references (as `rnnsearch evaluate`), and
beam decoding sentences/s (median and fastest of `--rounds` rounds, the settings alternating in each round,
after one untimed batch of each function that traces its graph); the cost of a constraint is the extra
milliseconds per sentence of the fastest round over the unconstrained `translate`'s fastest, divided by the
constraints per sentence (on a machine shared with other jobs the fastest round is the one least disturbed).
Each constrained setting also has its length ratio: the words of its translations over those of the free ones
(`translate`'s), on the lines with constraints, and how many of those lines lost a quarter of their words or
more (a search that lets a hypothesis end once its constraints are met writes short ones). `names` measures
the same on invented names: the rare-word probe of `bench.subwords` (100 caption-like sentences, each with an
invented name and a number) translated freely and with `translate --verbatim --model_dir`'s constraints
(`verbatim_terms_of`), word-level models with `<unk>` replaced; the share of names found verbatim in each.

With `--glossary` the settings are `none` and `glossary`: each line's constraints are the glossary's terms found
in it (`--glossary=unusual`: `UNUSUAL_RENDERINGS`, frequent caption words each as a valid but less common
French word, seven of them outside the Multi30k word-level vocabulary of 10,000) (`Glossary`, as `translate --terminology` finds them; a term outside a word-level target vocabulary
written over its `<unk>`, a capital kept where a term starts the translation), and `terms` gives the share of
those terms whose target term the translation holds (as a whole word, its first letter in either case), with
and without the constraints, for all of them and for those outside the target vocabulary and those found at a
sentence's start by their first letter's other case (the two kinds a glossary as translators write it needed:
case-sensitive matching missed the second, the first was skipped).
"""

import statistics
import time

import numpy as np
import sacrebleu
import tensorflow as tf
from absl import app, flags

from bench.provenance import provenance, run_report
from bench.rare_words import found_verbatim, probe_sentences
from bench.reference_phrases import reference_phrases
from data_pipeline import constants
from data_pipeline.data_dir import DataDir
from data_pipeline.text_codec import TextCodec
from data_pipeline.vocabulary import Vocabulary
from rnnsearch_tf.cli import search_flags
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.glossary import Glossary
from rnnsearch_tf.inference.unk_replacer import UnkReplacer
from rnnsearch_tf.inference.verbatim_terms import verbatim_terms_of
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.utils.text_files import read_lines

_MODEL_DIR = flags.DEFINE_string("model_dir", None, "The model directory measured.", required=True)
_SPLIT = flags.DEFINE_string("split", "test", "The test split of its data directory.")
_COUNTS = flags.DEFINE_list("counts", ["0", "1", "2", "3"], "Constraints per sentence of each setting.")
_ROUNDS = flags.DEFINE_integer("rounds", 3, "Timed rounds, the settings alternating.", lower_bound=1)
_SEED = flags.DEFINE_integer("seed", 2018, "Seed of the phrases drawn from each reference.")
_SENTENCES = flags.DEFINE_integer("sentences", 0, "The split's first lines only (0: all).", lower_bound=0)
_GLOSSARY = flags.DEFINE_string("glossary", None, "A glossary file whose terms are the constraints (--terminology's); "
                                "'unusual': UNUSUAL_RENDERINGS.")

UNCONSTRAINED = "none"  # the setting decoded by `translate`
GLOSSARY = "glossary"  # the setting of --glossary
SHORTER = 0.75  # a constrained translation with fewer words than this share of the free one's lost its end
# English caption words, frequent in Multi30k, each with a valid French rendering a model trained on it would not
# choose: in its word vocabulary ("monsieur") or outside it ("toutou"); lower case, as translators write them.
UNUSUAL_RENDERINGS = (
    ("man", "monsieur"), ("woman", "dame"), ("men", "messieurs"), ("people", "individus"), ("boy", "garçonnet"),
    ("child", "bambin"), ("kids", "gosses"), ("shirt", "chemisette"), ("street", "chaussée"),
    ("bicycle", "bicyclette"), ("jacket", "veston"), ("hat", "couvre-chef"), ("dog", "toutou"), ("dogs", "toutous"),
    ("girl", "gamine"), ("water", "onde"), ("beach", "grève"), ("shoes", "souliers"), ("building", "édifice"),
)


def _draw_constraints(translator, references, most):
    """`most` reference phrases (at most) per line, for every line of `references`: of its Moses words (a subword
    codec's pieces are not words: its language's Moses rules, every word spelled)."""
    codec = translator.module.target_codec
    words = TextCodec(codec.language) if codec.is_subword else codec
    tokens = [[token.decode("utf-8") for token in row] for row in words.tokenize(tf.constant(references)).to_list()]
    vocabulary = None if codec.is_subword else {
        token for token, _ in Vocabulary.read_entries(codec.vocabulary.vocabulary_file)}
    return [reference_phrases(row, set(row) if vocabulary is None else vocabulary, most,
                              np.random.default_rng([_SEED.value, index]))
            for index, row in enumerate(tokens)]


def _met_counts(translator, constraints, results):
    """{given, met, held (the phrase's words are a run of the translation's tokens, or words with a subword
    model: a check beside the search's own `constraints_met`), fitting (the line's constraint words and `</s>`
    within its length bound), met_fitting} over all lines."""
    counts = dict.fromkeys(("given", "met", "held", "fitting", "met_fitting"), 0)
    for phrases, result in zip(constraints, results):
        bound = translator.search_config.maximum_target_length(len(result["source_tokens"]))
        fits = bool(result["source_tokens"]) and sum(len(phrase.split()) for phrase in phrases) + 1 <= bound
        for phrase, was_met in zip(phrases, result["constraints_met"]):
            counts["given"] += 1
            counts["met"] += was_met
            counts["held"] += _holds(result.get("words", result["tokens"]), phrase.split())
            counts["fitting"] += fits
            counts["met_fitting"] += was_met and fits
    return counts


def _holds(tokens, phrase):
    """Whether `phrase` (list of tokens) is a run of `tokens`."""
    return any(tokens[start : start + len(phrase)] == phrase for start in range(len(tokens) - len(phrase) + 1))


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    config = search_flags.search_config()
    translator = BatchTranslator.from_model_dir(_MODEL_DIR.value, search_flags.CHECKPOINT.value,
                                                search_flags.BATCH_SIZE.value, search_config=config)
    data_dir = DataDir(ModelDir(_MODEL_DIR.value).read_data_info()["data_dir"])
    sources, references = (read_lines(data_dir.text_file(_SPLIT.value, side))[: _SENTENCES.value or None]
                           for side in ("source", "target"))
    glossary = None
    if _GLOSSARY.value:
        source_codec = translator.module.source_codec
        glossary = (Glossary(list(UNUSUAL_RENDERINGS), source_codec) if _GLOSSARY.value == "unusual"
                    else Glossary.from_file(_GLOSSARY.value, source_codec))
        settings = {UNCONSTRAINED: None, GLOSSARY: glossary.constraints(sources)}
    else:
        counts = [int(count) for count in _COUNTS.value]
        drawn = _draw_constraints(translator, references, max(counts))
        settings = {UNCONSTRAINED: None, **{str(count): [phrases[:count] for phrases in drawn] for count in counts}}
    report = {"provenance": provenance(), "model_dir": _MODEL_DIR.value, "checkpoint": translator.loaded_from,
              "split": _SPLIT.value, "sentences": len(sources), "search": translator.search_config.to_dict(),
              "batch_size": translator.batch_size, "workers": translator.workers, "seed": _SEED.value,
              "glossary": glossary and glossary.entries, "settings": {}}
    outputs, seconds = _time_settings(translator, sources, settings, glossary)
    base_ms = 1000 * min(seconds[UNCONSTRAINED]) / len(sources)
    for name, constraints in settings.items():
        results = outputs[name]
        entry = report["settings"][name] = {
            "constraints_per_sentence": 0 if constraints is None else (
                int(name) if name.isdigit() else round(sum(map(len, constraints)) / len(sources), 3)),
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
                         **_length_ratio(outputs[UNCONSTRAINED], results, constraints),
                         examples=_examples(sources, constraints, outputs[UNCONSTRAINED], results, references))
    if glossary is not None:
        report["settings"][GLOSSARY]["terms"] = _term_shares(glossary, translator, sources, outputs)
    else:
        report["names"] = _names(translator)
    return report


def _length_ratio(free, constrained, constraints):
    """{length_ratio: the words of the `constrained` translations over those of the `free` ones (results of the
    same lines) on the lines with `constraints`, lines_with_constraints, shorter_lines: those of them whose
    constrained translation has under `SHORTER` of the free one's words}."""
    lines = [index for index, phrases in enumerate(constraints) if phrases]
    words = [(len(free[index]["translation"].split()), len(constrained[index]["translation"].split()))
             for index in lines]
    free_words, constrained_words = sum(free for free, _ in words), sum(constrained for _, constrained in words)
    return dict(length_ratio=round(constrained_words / free_words, 4) if free_words else None,
                lines_with_constraints=len(lines),
                shorter_lines=sum(constrained < SHORTER * free for free, constrained in words))


def _examples(sources, constraints, free, results, references):
    """The first 3 lines with constraints, and the 3 whose constrained translation lost most words."""
    lines = [index for index, phrases in enumerate(constraints) if phrases]
    shortest = sorted(lines, key=lambda index: len(results[index]["translation"].split())
                      / max(len(free[index]["translation"].split()), 1))
    return [{"source": sources[index], "constraints": constraints[index], "free": free[index]["translation"],
             "translation": results[index]["translation"], "reference": references[index]}
            for index in list(dict.fromkeys(lines[:3] + shortest[:3]))]


def _names(translator):
    """The rare-word probe translated freely and with its `verbatim_terms_of` as constraints: {sentences,
    constraints, met, names_kept (share of the names found verbatim) free and constrained, the length ratio
    (`_length_ratio`), examples}. A word-level model's `<unk>`s are replaced, as `bench.verbatim` does."""
    translator.unk_replacer = UnkReplacer() if translator.target_codec is not None else None
    probes = probe_sentences()
    sentences = [sentence for sentence, _, _ in probes]
    constraints = verbatim_terms_of(sentences, translator.module.source_codec)
    free = translator.translate(sentences)
    constrained = translator.translate(sentences, constraints=constraints)

    def kept(results):
        return round(sum(found_verbatim(name, r["translation"]) for r, (_, name, _) in zip(results, probes))
                     / len(probes), 3)

    return dict(sentences=len(sentences), constraints=sum(map(len, constraints)),
                met=sum(sum(result["constraints_met"]) for result in constrained),
                names_kept_free=kept(free), names_kept=kept(constrained),
                **_length_ratio(free, constrained, constraints),
                examples=_examples(sentences, constraints, free, constrained, [""] * len(sentences)))


def _term_shares(glossary, translator, sources, outputs):
    """{kind: {terms, in_free, in_constrained}} of the glossary's terms found in `sources` (each once per line):
    how many, and the share whose target term the free and the glossary translations hold (`_holds_term`), for
    `all`, `outside_vocabulary` (a word of the target term is outside a word-level target vocabulary) and
    `sentence_start` (matched at a sentence's capitalised first word, by a source term written in lower case)."""
    targets = list(dict.fromkeys(target for _, target in glossary.entries))
    outside = set()
    if translator.target_codec is not None:
        codec = translator.module.target_codec
        ids = codec.lookup(codec.tokenize_prefix(tf.constant(targets))).to_list()
        outside = {target for target, row in zip(targets, ids) if constants.UNK_ID in row}
    lower = {target for source, target in glossary.entries if source[:1].islower()}
    kinds = {"all": [], "outside_vocabulary": [], "sentence_start": []}  # (line, target)
    for line, matches in enumerate(glossary.matches(sources)):
        for target, match in {match.target: match for match in reversed(matches)}.items():
            kinds["all"].append((line, target))
            if target in outside:
                kinds["outside_vocabulary"].append((line, target))
            if match.capitalised and target in lower:
                kinds["sentence_start"].append((line, target))

    def share(found, setting):
        held = sum(_holds_term(target, outputs[setting][line]["translation"]) for line, target in found)
        return round(held / len(found), 4) if found else None

    return {kind: {"terms": len(found), "in_free": share(found, UNCONSTRAINED), "in_constrained": share(found, GLOSSARY)}
            for kind, found in kinds.items()}


def _holds_term(target, translation):
    """Whether `translation` holds the target term as a whole word, its first letter in either case."""
    return found_verbatim(target, translation) or found_verbatim(target[:1].swapcase() + target[1:], translation)


def _translate(translator, sources, constraints, glossary):
    """`translator.translate(sources, constraints=constraints)` as `translate --terminology` does it with a
    `glossary` (None: as `translate --constraints_file`): a term outside a word-level vocabulary searched as
    `<unk>` and written over it, a capital kept where a term starts the translation."""
    terms = glossary if constraints is not None else None
    translator.unk_replacer = None
    if terms is not None and translator.target_codec is not None:
        translator.unk_replacer = terms.unk_replacer(translator.target_codec)
        constraints = terms.searched_as(constraints, translator.target_codec)
    results = translator.translate(sources, constraints=constraints)
    if terms is not None:
        terms.capitalise_sentence_starts(sources, results)
    return results


def _time_settings(translator, sources, settings, glossary=None):
    """({setting: results of its first round}, {setting: seconds of each round}), the settings alternating."""
    batch = slice(0, translator.batch_size)
    for constraints in (None, [[] for _ in sources]):  # traces `translate` and `translate_constrained`
        translator.translate(sources[batch], constraints=None if constraints is None else constraints[batch])
    outputs, seconds = {}, {name: [] for name in settings}
    for _ in range(_ROUNDS.value):
        for name, constraints in settings.items():
            start = time.perf_counter()
            results = _translate(translator, sources, constraints, glossary)
            seconds[name].append(time.perf_counter() - start)
            outputs.setdefault(name, results)
    return outputs, seconds


if __name__ == "__main__":
    run_report(main)
