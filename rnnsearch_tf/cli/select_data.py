r"""Selects the pairs of a general corpus most like an in-domain corpus (the paper's data selection).

    rnnsearch select-data --in_domain_corpus=multi30k_enfr:train \
        --general_source=general.en --general_target=general.fr --source_language=en --target_language=fr \
        --max_words=400000 --output_dir=/tmp/selected
    rnnsearch build-data --corpus=text_files --train_source=/tmp/selected/train.en \
        --train_target=/tmp/selected/train.fr --output_dir=/tmp/selected_data

Ranks the general pairs by Axelrod et al. (2011)'s cross-entropy difference H_in(s) - H_general(s) of two
language models per language (`data_pipeline.data_selection`), summed over both sides (`--side=both`, the
paper's bilingual selection) or of the source side only, and keeps the best-ranked pairs up to `--max_words`
words (Moses tokens of both sides; the paper kept 348M). `--ranking=random` keeps a random sample of the same
kind instead, the baseline. Writes `train.<source language>` and `train.<target language>` (the kept pairs,
line-aligned, best first), `scores.tsv` (every general pair, best first, with its score and cross-entropies:
plain tab-separated text, the sentences as `train.*` holds them, unquoted) and `selection.json` (counts, options,
timings), each through a temporary name renamed when all are written (`text_files.replaced_files`), so that a
run killed or failing leaves an earlier selection as it was (but for a kill between the renames, which leaves no
selection.json).

The general corpus is read from its files again for each pass and never held (a few numbers per pair are):
its words, the pairs of the general sample the models learn from, the scores, then the outputs in ranking
order through temporary files in `--output_dir` about the corpus's size (`data_selection.ranked_pairs`).
"""

import json
import pathlib
import time

from absl import app, flags

from data_pipeline import corpus_registry, data_files, pair_reader
from data_pipeline.data_selection import SIDES, DataSelection, keep_best, pair_words, random_ranking, ranked_pairs
from data_pipeline.languages import same_pair
from rnnsearch_tf.cli import folder_flags, language_flags
from rnnsearch_tf.utils.text_files import check_not_inputs, check_writable_folder, replaced_files

_CORPORA = {
    role: (
        flags.DEFINE_string(f"{role}_corpus", None, f"The {role} corpus as CORPUS:SPLIT of the registry "
                            f"({', '.join(corpus_registry.CORPORA)}), or give --{role}_source and --{role}_target."),
        flags.DEFINE_string(f"{role}_source", None,
                            f"Source sentences of the {role} corpus, one per line (plain or gzip)."),
        flags.DEFINE_string(f"{role}_target", None, f"Their translations, line-aligned with --{role}_source."),
    )
    for role in ("in_domain", "general")
}
_LANGUAGES = language_flags.define_language_flags("text files")
_MAX_WORDS = flags.DEFINE_integer("max_words", None, "Words kept (Moses tokens of both sides of the kept pairs).",
                                  lower_bound=1, required=True)
_SIDE = flags.DEFINE_enum("side", "both", SIDES, "Score both sides of a pair (summed) or the source side only.")
_RANKING = flags.DEFINE_enum("ranking", "cross_entropy_difference", ["cross_entropy_difference", "random"],
                             "How the kept pairs are chosen: by score, or a random sample (the baseline).")
_ORDER = flags.DEFINE_integer("order", 3, "n-gram order of the language models.", lower_bound=1)
_UNK_CUTOFF = flags.DEFINE_integer("unk_cutoff", 2, "Fewest in-domain occurrences of a vocabulary word.", lower_bound=1)
_SEED = flags.DEFINE_integer(
    "seed", 1234, "Seed of the general sample the general models learn from (and of --ranking=random).")
_MAX_LINE_CHARS = flags.DEFINE_integer(
    "max_line_chars", 2000, "Longest line read, in characters (longer pairs are dropped).")
_DATA_DIR = folder_flags.define_corpus_folder()
_OUTPUT_DIR = folder_flags.define_output_dir("the kept pairs, scores.tsv and selection.json")
_SCORES_FILE, _SUMMARY_FILE = "scores.tsv", "selection.json"


def check_given(role):
    """app.UsageError unless the --{role}_* flags name a registered corpus or both text files."""
    corpus_flag, source, target = _CORPORA[role]
    if (corpus_flag.value is None) == (source.value is None and target.value is None):
        raise app.UsageError(f"give either --{role}_corpus or --{role}_source and --{role}_target")
    if corpus_flag.value is None and (source.value is None or target.value is None):
        raise app.UsageError(f"--{role}_source and --{role}_target go together")


def corpus_and_split(role):
    """(ParallelCorpus, split name) of the --{role}_* flags: a registered corpus's split or two text files."""
    corpus_flag, source, target = _CORPORA[role]
    if corpus_flag.value is None:
        files = corpus_registry.text_file_corpus(*language_flags.required_languages(_LANGUAGES, f"--{role}_source"),
                                                 {role: (source.value, target.value)})
        return files, role
    name, _, split = corpus_flag.value.partition(":")
    corpus = corpus_registry.get_corpus(name)
    language_flags.check_agree(_LANGUAGES, corpus)
    if split not in corpus.splits:
        raise ValueError(f"--{role}_corpus={corpus_flag.value}: corpus {name} has no split {split!r}; "
                         f"it has {sorted(corpus.splits)}")
    return corpus, split


def split_pairs(corpus, split, data_root, max_line_chars):
    """The clean pairs of a corpus split as `pair_reader.SplitPairs`: read from the files on each pass, never
    held. Refuses parts whose source and target files have unequal line counts."""
    return pair_reader.SplitPairs(pair_reader.PairReader.of_part(part, data_root, max_line_chars)
                                  for part in corpus.splits[split])


def output_files(languages):
    """The names of the files select-data writes in --output_dir, for the pair `languages`."""
    return [f"train.{languages[0]}", f"train.{languages[1]}", _SCORES_FILE, _SUMMARY_FILE]


def write_outputs(paths, general_pairs, ranking, kept, scores):
    """The first `kept` pairs of `ranking` in the files `paths` (source, target), and every pair, best first, in the
    file `paths[2]` (scores.tsv: tab-separated, unquoted; no scores for a random ranking); one pass over
    `general_pairs` puts them in that order (`ranked_pairs`, its temporary files beside `paths`)."""
    source_path, target_path, scores_path = paths
    with (open(source_path, "w", encoding="utf-8", newline="\n") as sources,
          open(target_path, "w", encoding="utf-8", newline="\n") as targets,
          open(scores_path, "w", encoding="utf-8", newline="\n") as stream):
        terms = [] if scores is None else [
            f"{kind}_{side}" for side in scores.in_domain for kind in ("h_in", "h_general")]
        stream.write("\t".join(["rank", "kept", "cross_entropy_difference", *terms, "source", "target"]) + "\n")
        pairs = ranked_pairs(general_pairs, ranking, folder=source_path.parent)
        for rank, (index, (source, target)) in enumerate(pairs):
            if rank < kept:
                sources.write(source + "\n")
                targets.write(target + "\n")
            values = [] if scores is None else [f"{entropies[side][index]:.4f}" for side in scores.in_domain
                                                for entropies in (scores.in_domain, scores.general)]
            difference = "" if scores is None else f"{scores.difference[index]:.4f}"
            stream.write("\t".join([str(rank + 1), str(int(rank < kept)), difference, *values, source, target]) + "\n")


def rank(in_domain_pairs, general_pairs, languages):
    """(ranking, words per general pair, Scores or None, timings) by --ranking."""
    started = time.perf_counter()
    if _RANKING.value == "random":
        words = pair_words(general_pairs, *languages)
        return random_ranking(len(words), _SEED.value), words, None, {
            "tokenize_seconds": round(time.perf_counter() - started, 2)}
    selection = DataSelection(in_domain_pairs, general_pairs, *languages, side=_SIDE.value, order=_ORDER.value,
                              unk_cutoff=_UNK_CUTOFF.value, seed=_SEED.value)
    fitted = time.perf_counter()
    scores = selection.scores()
    timings = {"tokenize_and_fit_seconds": round(fitted - started, 2),
               "score_seconds": round(time.perf_counter() - fitted, 2), "general_sample_pairs": len(selection.sample)}
    return selection.ranking(scores), selection.words, scores, timings


def read_corpora(data_root):
    """(general `SplitPairs`, in-domain `SplitPairs`, (source, target) language) of the flags, checked: one
    direction, and no output file of --output_dir one of their files."""
    for role in ("general", "in_domain"):
        check_given(role)
    (general, general_split), (in_domain, in_domain_split) = corpus_and_split("general"), corpus_and_split("in_domain")
    pairs = [(corpus.source_language, corpus.target_language) for corpus in (in_domain, general)]
    if not same_pair(*pairs):  # a variety is its language: "cmn" and "zh" agree
        raise ValueError(f"the in-domain corpus is {in_domain.source_language}-{in_domain.target_language}, the "
                         f"general one {general.source_language}-{general.target_language}: give corpora of one "
                         "direction")
    general_pairs = split_pairs(general, general_split, data_root, _MAX_LINE_CHARS.value)
    in_domain_pairs = split_pairs(in_domain, in_domain_split, data_root, _MAX_LINE_CHARS.value)
    languages = (general.source_language, general.target_language)
    check_not_inputs(_OUTPUT_DIR.value, output_files(languages), general_pairs.paths + in_domain_pairs.paths,
                     "--output_dir")
    return general_pairs, in_domain_pairs, languages


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    check_writable_folder(_OUTPUT_DIR.value, "--output_dir")
    general_pairs, in_domain_reader, languages = read_corpora(data_files.data_root_from_environment(_DATA_DIR.value))
    in_domain_pairs = list(in_domain_reader)  # held: the in-domain models learn from all of it
    for reader, first in ((general_pairs, next(iter(general_pairs), None)), (in_domain_reader, in_domain_pairs)):
        if not first:  # (the general corpus is read up to its first clean pair)
            raise ValueError(f"no sentence pairs in {' and '.join(map(str, reader.paths))} "
                             f"(dropped: {reader.summary()['dropped']})")
    ranking, words, scores, timings = rank(in_domain_pairs, general_pairs, languages)
    kept = keep_best(ranking, words, _MAX_WORDS.value)
    output_dir = pathlib.Path(_OUTPUT_DIR.value)
    summary = dict(
        ranking=_RANKING.value, side=_SIDE.value, order=_ORDER.value, unk_cutoff=_UNK_CUTOFF.value, seed=_SEED.value,
        max_words=_MAX_WORDS.value, in_domain=in_domain_reader.summary(), general=general_pairs.summary(),
        general_words=int(sum(words)), kept_pairs=len(kept), kept_words=int(sum(words[index] for index in kept)),
        timings=timings, files={language: str(output_dir / f"train.{language}") for language in languages},
    )
    with replaced_files(output_dir, output_files(languages)) as paths:
        write_outputs(paths[:3], general_pairs, ranking, len(kept), scores)
        paths[3].write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"kept {len(kept):,} of {len(words):,} pairs ({summary['kept_words']:,} of "
          f"{summary['general_words']:,} words, by {_RANKING.value}) in {output_dir}")
