"""A block of sentence pairs of one corpus split: two aligned files or one tab-separated file."""

import dataclasses
from typing import Optional, Tuple

from data_pipeline.corpus_file import CorpusFile


@dataclasses.dataclass(frozen=True)
class CorpusPart:
    """Sentence pairs from either two line-aligned files or one tab-separated file.

    Args:
        source: `CorpusFile` of source sentences, or of `source<TAB>target` lines when `target` is None.
        target: `CorpusFile` of target sentences, line i translating line i of `source`; None for TSV.
        tsv_columns: (source column, target column) of a TSV `source` file.
        hash_buckets: (low, high): keep only pairs whose key hashes into `low <= md5(key) % 1000 < high`,
            the key being a TSV file's first column (whichever side it is read as) or the source sentence.
            Splits a corpus without an official split deterministically, with every translation of one
            sentence in the same split, the same split for both directions.
    """

    source: CorpusFile
    target: Optional[CorpusFile] = None
    tsv_columns: Tuple[int, int] = (0, 1)
    hash_buckets: Optional[Tuple[int, int]] = None

    @property
    def files(self):
        """The `CorpusFile`s this part reads."""
        return (self.source,) if self.target is None else (self.source, self.target)
