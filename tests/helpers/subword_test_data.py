"""A subword (SentencePiece) data directory and a tiny random-weight model directory on it, for the tests that
show a command reads the model's text codec instead of tokenizing on its own."""

import pathlib

from data_pipeline import corpus_registry
from data_pipeline.data_dir import DataDir
from data_pipeline.dataset_builder import DatasetBuilder
from helpers.commands import run_command
from helpers.made_once import made_once
from helpers.serving_test_utils import save_random_model
from helpers.toy_translation import write_corpus
from rnnsearch_tf import ModelConfig
from rnnsearch_tf.models.model_dir import ModelDir

# Words the toy corpus never holds: a word-level model reads them as <unk>; pieces spell them (bytes at
# worst), so the codec's tokens differ from any whitespace or Moses split of them.
RARE_SENTENCE = "The Brakkenfeld cat sleeps in Tromsø in 1961."
# The search of the commands run on the subword model, and of its export.
SEARCH_FLAGS = ("--beam_size=2", "--maximum_source_length=40")


def build_subword_data(folder, vocabulary_size=320, joint=True, subword_model="bpe"):
    """The toy corpus (helpers.toy_translation, 600 training pairs) built with a SentencePiece codec into
    folder/data; returns that path."""
    corpus = corpus_registry.text_file_corpus("en", "fr", write_corpus(folder / "raw", train_pairs=600))
    DatasetBuilder(corpus, folder / "data", max_length=60, num_shards=2, show_progress=False,
                   subwords="sentencepiece", subword_model=subword_model, subword_vocabulary_size=vocabulary_size,
                   joint_subwords=joint).build()
    return folder / "data"


def write_subword_model_dir(data_dir, path, model_name="rnnsearch", seed=3):
    """A model directory on `data_dir` (its codec copied, as training does) with a tiny model of N(0, 0.5²)
    weights and one checkpoint."""
    data = DataDir(data_dir)
    metadata = data.read_metadata()
    sizes = {side: metadata["vocabularies"][side]["size"] for side in ("source", "target")}
    config = ModelConfig(source_vocab_size=sizes["source"], target_vocab_size=sizes["target"], embedding_dim=8,
                         hidden_dim=16, maxout_dim=8, alignment_dim=16)
    data_info = {name: metadata[name] for name in ("source_language", "target_language", "codec")}
    data_info["data_dir"] = str(data_dir)
    model_dir = ModelDir(path)
    model_dir.write_model(model_name, config, data_info, data.source_vocabulary_file, data.target_vocabulary_file,
                          subword_model_files=data.subword_model_files())
    return save_random_model(model_dir, seed)


def subword_model_dir(tmp_path_factory):
    """(data_dir, model_dir), made once per test session and read by every worker (`made_once`): tests copy
    the model directory before they change it."""

    def make(folder):
        data_dir = build_subword_data(folder)
        return str(data_dir), str(write_subword_model_dir(data_dir, folder / "model"))

    return tuple(pathlib.Path(path) for path in made_once(tmp_path_factory, "subwords", make))


def subword_export(tmp_path_factory):
    """The export folder (model base path) of `subword_model_dir`'s model, written by `rnnsearch export` with
    `SEARCH_FLAGS`, made once per test session (`made_once`)."""
    _, model_dir = subword_model_dir(tmp_path_factory)

    def make(folder):
        export_dir = folder / "exports"
        exported = run_command("export", f"--model_dir={model_dir}", f"--export_dir={export_dir}", *SEARCH_FLAGS)
        assert exported.returncode == 0, exported.stderr
        return str(export_dir)

    return pathlib.Path(made_once(tmp_path_factory, "subword-export", make))

