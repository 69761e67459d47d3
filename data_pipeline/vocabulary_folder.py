"""A folder holding the two vocabulary files: what data and model directories have in common."""

import os

from data_pipeline.constants import SOURCE_VOCABULARY_FILE, TARGET_VOCABULARY_FILE


class VocabularyFolder:
    """Paths in a folder with `source_vocab.tsv` and `target_vocab.tsv` (`DataDir`, `ModelDir`).

    Args:
        path: the directory.
    """

    def __init__(self, path):
        self.path = os.fspath(path)

    def file(self, name):
        return os.path.join(self.path, name)

    @property
    def source_vocabulary_file(self):
        return self.file(SOURCE_VOCABULARY_FILE)

    @property
    def target_vocabulary_file(self):
        return self.file(TARGET_VOCABULARY_FILE)

    def vocabulary_file(self, side):
        """The vocabulary file of `side`, "source" or "target"."""
        return self.source_vocabulary_file if side == "source" else self.target_vocabulary_file

    def differing_vocabulary(self, other):
        """The first side ("source", then "target") whose vocabulary file differs from that of `other` (another
        `VocabularyFolder`) byte for byte, or None: both give every word the same id."""
        for side in ("source", "target"):
            with open(self.vocabulary_file(side), "rb") as mine, open(other.vocabulary_file(side), "rb") as theirs:
                if mine.read() != theirs.read():
                    return side
        return None
