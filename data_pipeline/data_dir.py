"""The layout of a built data directory: what `DatasetBuilder` writes and training reads."""

import glob
import json
import os

from data_pipeline import shard_files
from data_pipeline.constants import METADATA_FILE
from data_pipeline.corrupt_shard_error import CorruptShardError
from data_pipeline.vocabulary_folder import VocabularyFolder


class DataDir(VocabularyFolder):
    """A data directory, the `--output_dir` of `rnnsearch build-data`.

        data_dir/
          metadata.json                     pairs read, kept, dropped; vocabularies; shards with sha256
          source_vocab.tsv, target_vocab.tsv
          spm.model (or source_spm.model, target_spm.model)   SentencePiece models of a subword build
          {split}-{i:05d}-of-{n:05d}.tfrecord.gz   GZIP TFRecord shards of source_ids / target_ids
          {split}.source.txt, {split}.target.txt   raw text of every split but train (BLEU references)

    Args:
        path: the directory.
    """

    @property
    def metadata_file(self):
        return self.file(METADATA_FILE)

    @staticmethod
    def replaced_folder(path):
        """`.NAME.replaced` beside the data directory `path`: where `rnnsearch build-data` moves an earlier build
        while it renames the new one into place (a kill between the two renames leaves it there)."""
        path = os.path.normpath(os.fspath(path))
        return os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.replaced")

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

    def check_shards(self, splits):
        """Raises `CorruptShardError` unless the shards of `splits` are exactly those `metadata.json` lists,
        each with its recorded sha256 (a missing, extra or changed shard is named)."""
        metadata = self.read_metadata()
        for split in splits:
            if split not in metadata["splits"]:
                raise CorruptShardError(
                    f"{self.metadata_file} has no split {split!r}; it has {sorted(metadata['splits'])}"
                )
            listed = {shard["file"] for shard in metadata["splits"][split]["shards"]}
            present = {os.path.basename(path) for path in glob.glob(self.shard_pattern(split))}
            for names, problem in ((listed - present, "is missing"), (present - listed, "is not listed there")):
                if names:
                    raise CorruptShardError(
                        f"{self.metadata_file} lists {len(listed)} {split} shards and {self.file(sorted(names)[0])} "
                        f"{problem}: rebuild {self.path} with `rnnsearch build-data`"
                    )
            shard_files.verify_shards(sorted(self.file(name) for name in listed))

    def records(self, split):
        """The number of records (pairs) in the shards of `split`, as `metadata.json` lists them."""
        return sum(shard["records"] for shard in self.read_metadata()["splits"][split]["shards"])

    def read_data_info(self):
        return self.read_metadata()

    def test_splits(self):
        """The splits of metadata.json other than train and dev, in its order (test, test2017, ...)."""
        return [split for split in self.read_metadata()["splits"] if split not in ("train", "dev")]

    def read_metadata(self):
        """metadata.json as a dict; FileNotFoundError says how to build the directory."""
        if not os.path.exists(self.metadata_file):
            replaced = self.replaced_folder(self.path)
            left = (f" (a build-data killed while replacing it left the earlier build in {replaced}: move it back, "
                    "or build again)") if os.path.isdir(replaced) else ""
            raise FileNotFoundError(
                f"{self.metadata_file} is missing: --data_dir must be the --output_dir of "
                f"`rnnsearch build-data`{left}"
            )
        with open(self.metadata_file, encoding="utf-8") as stream:
            return json.load(stream)
