"""The layout of a built data directory: what `DatasetBuilder` writes and training reads."""

import json
import os

METADATA_FILE = "metadata.json"
SOURCE_VOCABULARY_FILE = "source_vocab.tsv"
TARGET_VOCABULARY_FILE = "target_vocab.tsv"


class DataDir:
    """A data directory, the `--output_dir` of `python -m data_pipeline.build`.

        data_dir/
          metadata.json                     pairs read, kept, dropped; vocabularies; shards with sha256
          source_vocab.tsv, target_vocab.tsv
          {split}-{i:05d}-of-{n:05d}.tfrecord.gz   GZIP TFRecord shards of source_ids / target_ids
          {split}.source.txt, {split}.target.txt   raw text of every split but train (BLEU references)

    Args:
        path: the directory.
    """

    def __init__(self, path):
        self.path = os.fspath(path)

    def file(self, name):
        return os.path.join(self.path, name)

    @property
    def metadata_file(self):
        return self.file(METADATA_FILE)

    @property
    def source_vocabulary_file(self):
        return self.file(SOURCE_VOCABULARY_FILE)

    @property
    def target_vocabulary_file(self):
        return self.file(TARGET_VOCABULARY_FILE)

    @staticmethod
    def shard_name(split, index, num_shards):
        """File name of shard `index` of `split`, e.g. "train-00003-of-00008.tfrecord.gz"."""
        return f"{split}-{index:05d}-of-{num_shards:05d}.tfrecord.gz"

    def shard_pattern(self, split):
        """Glob of every shard of `split`."""
        return self.file(f"{split}-*.tfrecord.gz")

    @staticmethod
    def text_name(split, side):
        """File name of the raw `side` ("source" or "target") text of `split`."""
        return f"{split}.{side}.txt"

    def text_file(self, split, side):
        return self.file(self.text_name(split, side))

    def read_metadata(self):
        """metadata.json as a dict; FileNotFoundError says how to build the directory."""
        if not os.path.exists(self.metadata_file):
            raise FileNotFoundError(
                f"{self.metadata_file} is missing: --data_dir must be the --output_dir of `python -m data_pipeline.build`"
            )
        with open(self.metadata_file, encoding="utf-8") as stream:
            return json.load(stream)
