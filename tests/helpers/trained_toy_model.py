"""A tiny RNNsearch that translates, and what the int8 tests make of it with the commands, each made once per test
session (`made_once`) and read by every worker.

The model: the toy corpus (`helpers.toy_translation`, English -> French word reordering and agreement) and
`rnnsearch train` for 400 updates (about 25 s on 2 cores; dev BLEU 46.7 with beam 2 when written). Its exports by
`rnnsearch export` and its translations of the dev sentences by `rnnsearch translate`, float32 or `--quantize=int8`.
"""

import json
import pathlib

from data_pipeline.data_dir import DataDir
from helpers.made_once import made_once
from helpers.other_languages import rnnsearch

TRAIN_FLAGS = ("--flagfile=configs/tiny.flags", "--embedding_dim=16", "--hidden_dim=32", "--maxout_dim=16",
               "--alignment_dim=32", "--learning_rate=0.01", "--train_steps=400", "--validate_every=400",
               "--checkpoint_every=400", "--log_every=100", "--dev_bleu_sentences=100", "--attention_sentences=1",
               "--beam_size=2")
# The search of every command run on the model, and of its exports.
SEARCH_FLAGS = ("--beam_size=2",)


def trained_model_dir(tmp_path_factory, toy_data):
    """The model directory of the trained toy RNNsearch."""

    def make(folder):
        rnnsearch("train", *TRAIN_FLAGS, f"--data_dir={toy_data}", f"--model_dir={folder / 'model'}")
        return str(folder / "model")

    return pathlib.Path(made_once(tmp_path_factory, "trained-toy", make))


def dev_pairs(toy_data):
    """(source lines, reference lines) of the toy corpus's dev split, raw text."""
    data_dir = DataDir(toy_data)
    return tuple(pathlib.Path(data_dir.text_file("dev", side)).read_text(encoding="utf-8").splitlines()
                 for side in ("source", "target"))


def exported(tmp_path_factory, model_dir, quantize):
    """The export folder (model base path) of `rnnsearch export --quantize=QUANTIZE` with `SEARCH_FLAGS`."""

    def make(folder):
        rnnsearch("export", f"--model_dir={model_dir}", f"--export_dir={folder / 'exports'}", f"--quantize={quantize}",
                  *SEARCH_FLAGS)
        return str(folder / "exports")

    return pathlib.Path(made_once(tmp_path_factory, f"trained-toy-export-{quantize}", make))


def translated(tmp_path_factory, model_dir, toy_data, quantize):
    """The JSON records (`--output_format=json`: translation, tokens, ...) of `rnnsearch translate
    --quantize=QUANTIZE` with `SEARCH_FLAGS` on the dev sources, one per line."""
    sources, _ = dev_pairs(toy_data)

    def make(_):
        output = rnnsearch("translate", f"--model_dir={model_dir}", f"--quantize={quantize}", "--output_format=json",
                           "--noprogress", *SEARCH_FLAGS, stdin="\n".join(sources) + "\n")
        return [json.loads(line) for line in output.splitlines()]

    return made_once(tmp_path_factory, f"trained-toy-translations-{quantize}", make)
