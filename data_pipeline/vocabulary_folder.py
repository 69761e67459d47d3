"""A folder holding a text codec per language: what data and model directories have in common."""

import os

from data_pipeline import text_codec
from data_pipeline.constants import FLAGS_FILE, SOURCE_VOCABULARY_FILE, TARGET_VOCABULARY_FILE


class VocabularyFolder:
    """Paths in a folder with `source_vocab.tsv` and `target_vocab.tsv` (`DataDir`, `ModelDir`), and the text
    codec of each language that its `read_data_info()` (metadata.json, data.json) describes.

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

    @property
    def flags_file(self):
        """flags.txt: the resolved flags of the command that wrote the folder (`--flagfile=` it to run it again)."""
        return self.file(FLAGS_FILE)

    def read_data_info(self):
        """The JSON dict describing the data (languages, `codec`): `DataDir` and `ModelDir` read their own file;
        a bare folder has none ({})."""
        return {}

    def codec_descriptions(self):
        """{side: `TextCodec.description()`} of this folder's data (word-level for folders older than codecs)."""
        return text_codec.codec_descriptions(self.read_data_info())

    def codec(self, side):
        """The `TextCodec` of `side` ("source" or "target"), its files in this folder."""
        return text_codec.TextCodec.from_description(self.codec_descriptions()[side], self.path)

    def codec_files(self, side=None):
        """The files of `side`'s codec (vocabulary, SentencePiece model), or of both, each once."""
        descriptions = self.codec_descriptions()
        names = [name for each in ([side] if side else list(descriptions))
                 for name in (descriptions[each]["vocabulary"], descriptions[each].get("model")) if name]
        return [self.file(name) for name in dict.fromkeys(names)]

    def vocabulary_file(self, side):
        """The vocabulary file of `side`, "source" or "target"."""
        return self.source_vocabulary_file if side == "source" else self.target_vocabulary_file

    def differing_vocabulary(self, other):
        """The first side ("source", then "target") whose codec differs from that of `other` (another
        `VocabularyFolder`): another kind, or a vocabulary file or SentencePiece model not the same byte for
        byte; None: both turn the same text into the same ids."""
        for side in ("source", "target"):
            if self._codec_kind(side) != other._codec_kind(side):
                return side
            for mine, theirs in zip(self.codec_files(side), other.codec_files(side)):
                with open(mine, "rb") as first, open(theirs, "rb") as second:
                    if first.read() != second.read():
                        return side
        return None

    def _codec_kind(self, side):
        return self.read_data_info().get("codec", {}).get(side, {}).get("kind", text_codec.MOSES)
