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

    def subword_model_files(self):
        """The SentencePiece models of both codecs, each once (none for word-level codecs)."""
        names = [description["model"] for description in self.codec_descriptions().values() if "model" in description]
        return [self.file(name) for name in dict.fromkeys(names)]

    def vocabulary_file(self, side):
        """The vocabulary file of `side`, "source" or "target"."""
        return self.source_vocabulary_file if side == "source" else self.target_vocabulary_file

    def differing_vocabulary(self, other):
        """The first side ("source", then "target") whose codec differs from that of `other` (another
        `VocabularyFolder`): another kind, or a vocabulary file or SentencePiece model not the same byte for
        byte; None: both turn the same text into the same ids."""
        mine, theirs = self.codec_descriptions(), other.codec_descriptions()
        for side in ("source", "target"):
            if mine[side]["kind"] != theirs[side]["kind"]:
                return side
            for first, second in zip(_codec_files(self, mine[side]), _codec_files(other, theirs[side])):
                with open(first, "rb") as stream, open(second, "rb") as other_stream:
                    if stream.read() != other_stream.read():
                        return side
        return None


def _codec_files(folder, description):
    """The files of one codec's `description` in `folder`: its vocabulary, and its SentencePiece model if any."""
    return [folder.file(description[key]) for key in ("vocabulary", "model") if key in description]
