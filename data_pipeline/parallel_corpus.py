"""A named parallel corpus: its languages and its splits."""

import dataclasses
from typing import Mapping, Tuple

from data_pipeline.corpus_part import CorpusPart


@dataclasses.dataclass(frozen=True)
class ParallelCorpus:
    """A parallel corpus as splits ("train", "dev", "test") made of concatenated `CorpusPart`s.

    Args:
        name: registry name, e.g. "wmt14_enfr", "multi30k_deen".
        source_language: a language code (`data_pipeline.languages`).
        target_language: a language code.
        splits: split name -> parts, read in order.
    """

    name: str
    source_language: str
    target_language: str
    splits: Mapping[str, Tuple[CorpusPart, ...]]
