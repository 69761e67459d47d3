"""What a corpus build is asked for: the one place for `rnnsearch build-data`'s options and their defaults."""

import dataclasses
from typing import Optional

from data_pipeline import text_codec
from data_pipeline.sentence_joiner import MAX_JOINED_SENTENCES


@dataclasses.dataclass(frozen=True)
class BuildConfig:
    """How `DatasetBuilder` builds a corpus; `rnnsearch build-data`'s flags are generated from these fields.

    Args:
        vocabulary_size: Most frequent words kept per language, on top of the 4 reserved ones (the paper's
            30,000-word "shortlist"; the rest are <unk>).
        max_length: Longest training sentence kept, in tokens without </s> (30 for RNNsearch-30, 50 for
            RNNsearch-50; pieces with subwords). Dev and test splits are not length-filtered.
        max_line_chars: Longest raw line kept, in characters; longer pairs are dropped and counted.
        num_shards: Shards of the train split.
        seed: Seed of the one-time shuffle of the train split (and of joined and copy pairs).
        allow_download: Download missing corpus files from their official URLs.
        subwords: Subword units instead of Moses words and frequent-word vocabularies: a SentencePiece model
            learned from the raw training text (no word is unknown; --max_length then counts pieces). Default:
            words, as the paper; languages written without spaces (zh, ja, ...) need it.
        subword_model: SentencePiece's model type.
        subword_vocabulary_size: Pieces per vocabulary with --subwords (reserved ones and 256 bytes included).
        joint_subwords: One SentencePiece model for both languages (names and numbers cut alike on both sides);
            false: one per language.
        vocabulary_from: Model directory (or data directory) whose text codec (vocabularies, SentencePiece
            models) is used instead of learning a new one (the ids are that model's, for `rnnsearch train
            --init_from`); its languages must be the corpus's; --vocabulary_size and the subword options are
            then unused, and the tokens outside the vocabularies are counted per split.
        joined_share: Share of the training records that are 2 to --max_joined_sentences consecutive training
            pairs joined into one, within --max_length (long inputs for short-sentence corpora); 0: none. With
            --copy_share, each share is of all the records (the two below 1 together).
        max_joined_sentences: Most training pairs joined into one (--joined_share).
        copy_share: Share of the training records that are copy pairs: training pairs that copy a name or
            number (the same word on both sides), that word made up anew on both sides, so that a subword model
            learns to copy names and numbers it never saw (data_pipeline/copy_pairs.py; needs --subwords).
            0: none.
        lowercase: Lower-case both sides before tokenizing (and before learning SentencePiece), as nmtpy and most
            Multi30k systems train; every command and export then lower-cases raw input the same way (the text
            codec records it), translations come out lower-cased and are scored case-insensitively (sacreBLEU's
            case:lc). Default: cased, as the paper.
    """

    vocabulary_size: int = 30000
    max_length: int = 50
    max_line_chars: int = 2000
    num_shards: int = 8
    seed: int = 1234
    allow_download: bool = False
    subwords: Optional[str] = dataclasses.field(default=None, metadata={"choices": (text_codec.SENTENCEPIECE,)})
    subword_model: str = dataclasses.field(default="bpe", metadata={"choices": text_codec.SUBWORD_MODELS})
    subword_vocabulary_size: int = 8000
    joint_subwords: bool = True
    vocabulary_from: Optional[str] = None
    joined_share: float = 0.0
    max_joined_sentences: int = MAX_JOINED_SENTENCES
    copy_share: float = 0.0
    lowercase: bool = False

    def __post_init__(self):
        for name in ("vocabulary_size", "max_length", "max_line_chars", "num_shards"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name, share in (("joined_share", self.joined_share), ("copy_share", self.copy_share)):
            if not 0 <= share < 1:
                raise ValueError(f"{name} must be in [0, 1), got {share}")
        if self.joined_share + self.copy_share >= 1:
            raise ValueError(f"joined_share + copy_share must be below 1 (shares of the training records, the kept "
                             f"pairs the rest), got {self.joined_share} + {self.copy_share}")
        if self.joined_share and self.max_joined_sentences < 2:
            raise ValueError(f"max_joined_sentences must be at least 2, got {self.max_joined_sentences}")
        if self.subwords not in (None, text_codec.SENTENCEPIECE):
            raise ValueError(f"subwords must be None or {text_codec.SENTENCEPIECE!r}, got {self.subwords!r}")
        if self.subwords and self.subword_model not in text_codec.SUBWORD_MODELS:
            raise ValueError(f"subword_model must be one of {text_codec.SUBWORD_MODELS}, got {self.subword_model!r}")
        if self.subwords and self.subword_vocabulary_size < text_codec.MIN_SUBWORD_VOCABULARY:
            raise ValueError(f"subword_vocabulary_size must be at least {text_codec.MIN_SUBWORD_VOCABULARY} (the "
                             f"reserved tokens and 256 bytes are pieces), got {self.subword_vocabulary_size}")
        if self.vocabulary_from and (self.subwords or self.lowercase):
            raise ValueError("vocabulary_from copies a model's text codec: subwords and lowercase cannot be given too")

    def added_records(self, kept):
        """(joined pairs, copy pairs) to add to `kept` training pairs so that each is its share of all the records:
        with R = kept / (1 - joined_share - copy_share) records, joined_share * R and copy_share * R, rounded. The
        joined pairs are at most that many (fewer where few fit) and the copy pairs about that many."""
        records = kept / (1 - self.joined_share - self.copy_share)
        return round(self.joined_share * records), round(self.copy_share * records)
