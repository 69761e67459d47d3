"""Raw parallel text -> tokens -> vocabulary -> TFRecords -> bucketed tf.data."""

from data_pipeline.corpus_file import CorpusFile
from data_pipeline.corpus_part import CorpusPart
from data_pipeline.corrupt_shard_error import CorruptShardError
from data_pipeline.dataset_builder import DatasetBuilder
from data_pipeline.evaluation_input import EvaluationInput
from data_pipeline.missing_data_error import MissingDataError
from data_pipeline.moses_tokenizer import MosesTokenizer
from data_pipeline.pair_reader import PairReader
from data_pipeline.parallel_corpus import ParallelCorpus
from data_pipeline.sentence_joiner import SentenceJoiner
from data_pipeline.sentence_splitter import SentenceSplitter
from data_pipeline.training_input import TrainingInput
from data_pipeline.vocabulary import Vocabulary
from data_pipeline.wordpiece_tokenizer import WordPieceTokenizer

__all__ = [
    "CorpusFile",
    "CorpusPart",
    "CorruptShardError",
    "DatasetBuilder",
    "EvaluationInput",
    "MissingDataError",
    "MosesTokenizer",
    "PairReader",
    "ParallelCorpus",
    "SentenceJoiner",
    "SentenceSplitter",
    "TrainingInput",
    "Vocabulary",
    "WordPieceTokenizer",
]
