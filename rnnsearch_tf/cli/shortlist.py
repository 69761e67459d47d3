"""Builds a model directory's vocabulary shortlist, which `--shortlist` decodes with.

    rnnsearch shortlist --model_dir=work_dirs/multi30k_rnnsearch
    rnnsearch translate --model_dir=work_dirs/multi30k_rnnsearch --shortlist < test.en > test.fr

For each source word, the `--per_source_word` target words of highest Dice coefficient with it over the
sentence pairs of the training shards, and the `--frequent` most frequent target words
(`rnnsearch_tf.inference.shortlist.Shortlist`), written to `<model_dir>/shortlist.npz` with a digest of the
model's vocabularies (`vocabulary_digest`): a command refuses the file beside other vocabularies.
"""

from absl import app, flags

from data_pipeline import shard_files
from data_pipeline.data_dir import DataDir
from rnnsearch_tf.cli import folder_flags
from rnnsearch_tf.inference.shortlist import FREQUENT_WORDS, PER_SOURCE_WORD, Shortlist, vocabulary_digest
from rnnsearch_tf.models.model_dir import ModelDir

_MODEL_DIR = folder_flags.define_model_dir(required=True)
_DATA_DIR = folder_flags.define_data_dir("its train shards are counted (default: the model's, data.json)")
_PER_SOURCE_WORD = flags.DEFINE_integer(
    "per_source_word", PER_SOURCE_WORD, "K: target words kept per source word (docs/translating.md measures 5-50).",
    lower_bound=1,
)
_FREQUENT = flags.DEFINE_integer(
    "frequent", FREQUENT_WORDS, "N: most frequent target words always kept (docs/translating.md measures 100-1000).",
    lower_bound=0,
)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    model_dir = ModelDir(_MODEL_DIR.value)
    data_dir = DataDir(_DATA_DIR.value or model_dir.read_data_info()["data_dir"])
    model_dir.check_vocabularies(data_dir)
    config = model_dir.read_model_description()["config"]
    paths = shard_files.list_shards(data_dir.shard_pattern("train"))
    pairs = (
        (example["source_ids"], example["target_ids"])
        for example in shard_files.read_examples(paths, sequential=True).as_numpy_iterator()
    )
    shortlist = Shortlist.build(
        pairs, config["source_vocab_size"], config["target_vocab_size"], _PER_SOURCE_WORD.value, _FREQUENT.value
    )
    shortlist.vocabularies = vocabulary_digest(model_dir.codec("source"), model_dir.codec("target"))
    path = model_dir.shortlist_file
    shortlist.save(path)
    print(f"wrote {path}: {shortlist.per_source_word} target words per source word, {len(shortlist.frequent)} frequent")

