r"""Builds a corpus into vocabularies, TFRecord shards and metadata.json, once, before training.

    rnnsearch build-data --flagfile=configs/data/multi30k.flags --output_dir=/tmp/m30k
    rnnsearch build-data --flagfile=configs/data/multi30k_deen.flags --output_dir=/tmp/m30k_deen
    rnnsearch build-data --corpus=text_files --train_source=a.sw --train_target=a.en \
        --source_language=sw --target_language=en --output_dir=/tmp/mine
    rnnsearch build-data --corpus=tatoeba_file --tatoeba_file=deu.txt --source_language=de \
        --target_language=en --output_dir=/tmp/tatoeba_deen    # a manythings.org download
    rnnsearch build-data --flagfile=configs/data/tatoeba.flags --output_dir=/tmp/tatoeba \
        --vocabulary_from=/tmp/m30k_model    # a trained model's vocabularies, to continue training it
"""

import dataclasses
import os

from absl import app
from absl import flags

from data_pipeline import corpus_registry
from data_pipeline import data_files
from data_pipeline.build_config import BuildConfig
from data_pipeline.data_dir import DataDir
from data_pipeline.dataset_builder import DatasetBuilder
from rnnsearch_tf.cli import folder_flags, language_flags
from rnnsearch_tf.cli.config_flags import config_from_flags, define_config_flags, given_flags, write_flagfile
from rnnsearch_tf.utils.text_files import check_writable_folder

_TEXT_FILES, _TATOEBA_FILE = "text_files", "tatoeba_file"
_CORPUS = flags.DEFINE_string(
    "corpus", None, f"Registered corpus ({', '.join(corpus_registry.CORPORA)}), '{_TEXT_FILES}' (--train_source ..., "
    f"--source_language, --target_language) or '{_TATOEBA_FILE}' (--tatoeba_file, the languages)."
)
_TATOEBA = flags.DEFINE_string(
    "tatoeba_file", None, f"With --corpus={_TATOEBA_FILE}: a manythings.org Tatoeba file (English, a tab, the other "
    "language[, a tab, the attribution]; plain or gzip), split by a hash of its English side as the registered ones.")
_OUTPUT_DIR = folder_flags.define_output_dir("shards, vocabularies and metadata.json")
_DATA_DIR = folder_flags.define_corpus_folder()
_BUILD_FLAGS = define_config_flags(BuildConfig)
flags.DEFINE_alias("shortlist_size", "vocabulary_size")  # its name before 2026-11-27
_LANGUAGES = language_flags.define_language_flags(f"--corpus={_TEXT_FILES} or {_TATOEBA_FILE} (a registered corpus "
                                                  "knows its own; given, they must agree)")
_SPLIT_FILES = {
    split: (
        flags.DEFINE_string(f"{split}_source", None, f"Source text of the {split} split (text_files)."),
        flags.DEFINE_string(f"{split}_target", None, f"Target text of the {split} split (text_files)."),
    )
    for split in ("train", "dev", "test")
}
_SUBWORD_OPTIONS = ("subword_model", "subword_vocabulary_size", "joint_subwords")  # read with --subwords only
flags.mark_flag_as_required("corpus")
_PATH_FLAGS = (_OUTPUT_DIR, _DATA_DIR, _TATOEBA, _BUILD_FLAGS["vocabulary_from"],
               *(holder for pair in _SPLIT_FILES.values() for holder in pair))
_ALL_FLAGS = (_CORPUS, *_LANGUAGES, *_PATH_FLAGS, *(holder for name, holder in _BUILD_FLAGS.items()
                                                    if name != "vocabulary_from"))


def split_files():
    """{split: (source path, target path)} of the --{split}_source and --{split}_target flags given, each of a
    pair required with the other."""
    files = {}
    for split, (source, target) in _SPLIT_FILES.items():
        for given, missing in ((source, target), (target, source)):
            if given.value and not missing.value:
                raise ValueError(f"--{missing.name} is required with --{given.name}")
        if source.value:
            files[split] = (source.value, target.value)
    return files


def check_flags_apply():
    """ValueError naming the flags set that this build would not read: the split files without
    --corpus=text_files, --tatoeba_file without --corpus=tatoeba_file, the subword options without --subwords.
    A flag at its default passes, as a build's flags.txt (which reproduces it) lists every flag's value."""
    unread = {
        f"--corpus={_TEXT_FILES}": [] if _CORPUS.value == _TEXT_FILES else [
            holder for pair in _SPLIT_FILES.values() for holder in pair],
        f"--corpus={_TATOEBA_FILE}": [] if _CORPUS.value == _TATOEBA_FILE else [_TATOEBA],
        "--subwords": [] if _BUILD_FLAGS["subwords"].value else [_BUILD_FLAGS[name] for name in _SUBWORD_OPTIONS],
    }
    for needed, holders in unread.items():
        given = given_flags(holders)
        if given:
            one = len(given) == 1
            raise ValueError(f"{', '.join(given)} {'is' if one else 'are'} only read with {needed}"
                             + ("" if needed == "--subwords" else f", not --corpus={_CORPUS.value}")
                             + f": leave {'it' if one else 'them'} out")


def corpus_of_flags():
    """The `ParallelCorpus` --corpus names, with the languages of --source_language and --target_language."""
    check_flags_apply()
    if _CORPUS.value == _TEXT_FILES:
        languages = language_flags.required_languages(_LANGUAGES, f"--corpus={_TEXT_FILES}")
        files = split_files()
        if "train" not in files:
            raise ValueError(f"--corpus={_TEXT_FILES} needs --train_source and --train_target: the training text "
                             "the vocabularies are learned from")
        return corpus_registry.text_file_corpus(*languages, files)
    if _CORPUS.value == _TATOEBA_FILE:
        if _TATOEBA.value is None:
            raise ValueError(f"--corpus={_TATOEBA_FILE} needs --tatoeba_file")
        return corpus_registry.tatoeba_file_corpus(
            _TATOEBA.value, *language_flags.required_languages(_LANGUAGES, f"--corpus={_TATOEBA_FILE}"))
    corpus = corpus_registry.get_corpus(_CORPUS.value)
    language_flags.check_agree(_LANGUAGES, corpus)
    return corpus


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    corpus = corpus_of_flags()
    check_writable_folder(_OUTPUT_DIR.value, "--output_dir", beside=True)  # the build is written beside it
    data_root = data_files.data_root_from_environment(_DATA_DIR.value)
    builder = DatasetBuilder(corpus, _OUTPUT_DIR.value, data_root=data_root,
                             **dataclasses.asdict(config_from_flags(BuildConfig, _BUILD_FLAGS)))
    metadata = builder.build()
    write_flags(data_root)
    print(summary_line(metadata, _OUTPUT_DIR.value))


def write_flags(data_root):
    """Writes build-data's flags to `<output_dir>/flags.txt`, those set (every one with a default): the paths
    absolute and --data_dir the corpus folder read (`data_root`, `$RNNSEARCH_DATA` where no --data_dir was given),
    so that `--flagfile=<output_dir>/flags.txt` builds it again from any working directory, as a model directory's
    flags.txt resumes training (`rnnsearch train`)."""
    paths = {holder.name: os.path.abspath(holder.value) for holder in _PATH_FLAGS if holder.value is not None}
    if data_root:
        paths[_DATA_DIR.name] = os.path.abspath(data_root)
    write_flagfile(DataDir(_OUTPUT_DIR.value).flags_file, _ALL_FLAGS, paths)


def summary_line(metadata, output_dir):
    """One line: pairs kept per split, vocabulary sizes and coverage, repairs with their first lines."""
    splits = ", ".join(
        f"{name} {s['kept']:,}/{s['read']:,} pairs" + (f" + {s['joined']:,} joined" if s.get("joined") else "")
        + (f" + {s['copy_pairs']:,} copy pairs" if s.get("copy_pairs") else "")
        for name, s in metadata["splits"].items()
    )
    vocabularies = ", ".join(
        f"{v['language']} {v['size']:,} ({100 * v['coverage']:.1f}% of tokens)" for v in metadata["vocabularies"].values()
    ) + _subwords(metadata)
    repairs = "".join(
        f"; {count:,} {reason} (first: {', '.join(s['first_repaired_lines'][reason])})"
        for s in metadata["splits"].values()
        for reason, count in s["repaired"].items()
    )
    return (f"built {output_dir}: {splits}; vocabularies {vocabularies}{_outside_vocabularies(metadata)}{repairs}; "
            f"details in {output_dir}/metadata.json")


def _subwords(metadata):
    """" of sentencepiece bpe pieces (one joint model)" for a build that learned subwords, else ""."""
    options = metadata.get("subwords")
    if not options:
        return ""
    models = "one joint model" if options["joint"] else "a model per language"
    return f" of {options['kind']} {options['model_type']} pieces ({models})"


def _outside_vocabularies(metadata):
    """"; outside the vocabularies of M: train en 1,234 tokens (567 types) of 100,000, fr ...; dev ..." for a
    build with --vocabulary_from, else ""."""
    vocabularies = metadata["vocabularies"]
    if "from" not in vocabularies["source"]:
        return ""
    splits = []
    for split in vocabularies["source"]["outside"]:
        sides = []
        for vocabulary in vocabularies.values():
            counts = vocabulary["outside"][split]
            sides.append(f"{vocabulary['language']} {counts['tokens']:,} tokens ({counts['types']:,} types) "
                         f"of {counts['running_tokens']:,}")
        splits.append(f"{split} {', '.join(sides)}")
    return f"; outside the vocabularies of {vocabularies['source']['from']}: {'; '.join(splits)}"
