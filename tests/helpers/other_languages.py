"""Model directories and exports of language pairs other than English-French, made as a user makes them: the
commands `build-data`, `train` and `export`, each in a fresh process, on the first lines of the real corpora in
the data folder (`data_root`). Each is made once per test session (`made_once`) and read by every worker: tests
copy a folder before they change it.

- German -> English, Moses words, trained: Multi30k's first 300 training and 30 validation pairs.
- Chinese -> English, one joint SentencePiece model, trained: the first 3,000 lines of Tatoeba's cmn-eng file
  (its shortest pairs), split by a hash of the English side as every Tatoeba corpus.
- English -> Chinese on the same lines: random weights (`write_subword_model_dir`), for what needs no learning
  (the BLEU tokenizer of a Chinese target).
"""

import collections
import gzip
import os
import pathlib
import sys

from conftest import REPO_ROOT
from helpers.made_once import made_once
from helpers.subword_test_data import write_subword_model_dir
from helpers import preimported

GERMAN_ENGLISH_PAIRS = {"train": 300, "dev": 30}  # Multi30k's first lines of train.{de,en} and val.{de,en}
MULTI30K_FILES = {"train": "train", "dev": "val"}
TATOEBA_LINES = 3000  # cmn-eng.tsv.gz's first lines
# Pieces of the joint Chinese-English SentencePiece model: SentencePiece needs at least one per character of
# the 3,000 lines' Chinese (about 1,800) besides the reserved ones and the 256 bytes.
SUBWORD_VOCABULARY_SIZE = 2200
# A tiny model trained long enough to say words (150 updates of 32 pairs: about 15 s on 2 cores).
TRAIN_FLAGS = ("--flagfile=configs/tiny.flags", "--embedding_dim=16", "--hidden_dim=32", "--maxout_dim=16",
               "--alignment_dim=32", "--learning_rate=0.01", "--train_steps=150", "--validate_every=150",
               "--checkpoint_every=150", "--log_every=50", "--dev_bleu_sentences=10", "--attention_sentences=1")
# The search of every command run on these models, and of their exports.
SEARCH_FLAGS = ("--beam_size=2", "--maximum_source_length=40")

PairFolders = collections.namedtuple("PairFolders", "data_dir model_dir")


def run(*args, stdin=""):
    """`rnnsearch ARGS` in a fresh process from the repository root, `stdin` its input (text); the
    `subprocess.CompletedProcess` with its text output (nothing raised on a non-zero exit)."""
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    return preimported.run([sys.executable, "-m", "rnnsearch_tf.cli.main", *args], input=stdin, capture_output=True,
                           text=True, env=environment, cwd=REPO_ROOT, timeout=300)


def rnnsearch(*args, stdin=""):
    """The stdout of `run(*args, stdin=stdin)`, asserting the command succeeded."""
    result = run(*args, stdin=stdin)
    assert result.returncode == 0, f"rnnsearch {' '.join(args)}:\n{result.stderr}"
    return result.stdout


def _first_lines(path, count):
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        return [line for _, line in zip(range(count), stream)]


def _train(data_dir, model_dir):
    rnnsearch("train", *TRAIN_FLAGS, f"--data_dir={data_dir}", f"--model_dir={model_dir}")
    return model_dir


def _make_german_english(folder, data_root):
    """Multi30k's first pairs as text files -> `build-data --corpus=text_files` -> `train`."""
    files = []
    for split, count in GERMAN_ENGLISH_PAIRS.items():
        for language in ("de", "en"):
            path = folder / "raw" / f"{split}.{language}"
            path.parent.mkdir(exist_ok=True)
            path.write_text("".join(_first_lines(data_root / "multi30k" / f"{MULTI30K_FILES[split]}.{language}.gz",
                                                 count)), encoding="utf-8")
            files.append(f"--{split}_{'source' if language == 'de' else 'target'}={path}")
    data_dir = folder / "data"
    rnnsearch("build-data", "--corpus=text_files", "--source_language=de", "--target_language=en", *files,
              "--vocabulary_size=1000", "--num_shards=1", f"--output_dir={data_dir}")
    return str(data_dir), str(_train(data_dir, folder / "model"))


def _build_tatoeba_chinese(folder, data_root, source_language, target_language):
    """Tatoeba cmn-eng's first lines -> `build-data --corpus=tatoeba_file` with SentencePiece, in this direction."""
    tatoeba_file = folder / "cmn-eng.tsv"
    if not tatoeba_file.exists():
        tatoeba_file.write_text("".join(_first_lines(data_root / "tatoeba" / "cmn-eng.tsv.gz", TATOEBA_LINES)),
                                encoding="utf-8")
    data_dir = folder / f"data_{source_language}{target_language}"
    rnnsearch("build-data", "--corpus=tatoeba_file", f"--tatoeba_file={tatoeba_file}",
              f"--source_language={source_language}", f"--target_language={target_language}",
              "--subwords=sentencepiece", f"--subword_vocabulary_size={SUBWORD_VOCABULARY_SIZE}", "--num_shards=1",
              f"--output_dir={data_dir}")
    return data_dir


def german_english(tmp_path_factory, data_root):
    """`PairFolders` of the trained German -> English (Moses words) model."""
    made = made_once(tmp_path_factory, "german-english", lambda folder: _make_german_english(folder, data_root))
    return PairFolders(*map(pathlib.Path, made))


def chinese_english(tmp_path_factory, data_root):
    """`PairFolders` of the trained Chinese -> English (SentencePiece) model."""

    def make(folder):
        data_dir = _build_tatoeba_chinese(folder, data_root, "zh", "en")
        return str(data_dir), str(_train(data_dir, folder / "model"))

    return PairFolders(*map(pathlib.Path, made_once(tmp_path_factory, "chinese-english", make)))


def english_chinese(tmp_path_factory, data_root):
    """`PairFolders` of an English -> Chinese (SentencePiece) model of random weights."""

    def make(folder):
        data_dir = _build_tatoeba_chinese(folder, data_root, "en", "zh")
        return str(data_dir), str(write_subword_model_dir(data_dir, folder / "model"))

    return PairFolders(*map(pathlib.Path, made_once(tmp_path_factory, "english-chinese", make)))


def exported(tmp_path_factory, name, model_dir):
    """The export folder (model base path) of `model_dir` by `rnnsearch export` with `SEARCH_FLAGS`, made once
    per session under `name`."""

    def make(folder):
        rnnsearch("export", f"--model_dir={model_dir}", f"--export_dir={folder / 'exports'}", *SEARCH_FLAGS)
        return str(folder / "exports")

    return pathlib.Path(made_once(tmp_path_factory, f"{name}-export", make))
