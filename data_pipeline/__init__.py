"""Raw parallel text -> tokens -> vocabulary -> TFRecords -> bucketed tf.data.

The classes below are imported on first use (PEP 562), so that a command imports only the modules it
uses (tensorflow_text and sentencepiece are imported by a subword `TextCodec` only).
"""

import importlib

_MODULES = {
    "CorpusFile": "corpus_file",
    "CorpusPart": "corpus_part",
    "CorruptShardError": "corrupt_shard_error",
    "DatasetBuilder": "dataset_builder",
    "EvaluationInput": "evaluation_input",
    "MissingDataError": "missing_data_error",
    "MosesTokenizer": "moses_tokenizer",
    "PairReader": "pair_reader",
    "ParallelCorpus": "parallel_corpus",
    "SentenceJoiner": "sentence_joiner",
    "SentenceSplitter": "sentence_splitter",
    "TrainingInput": "training_input",
    "TextCodec": "text_codec",
    "Vocabulary": "vocabulary",
}

__all__ = sorted(_MODULES)


def __getattr__(name):
    if name not in _MODULES:
        raise AttributeError(f"module 'data_pipeline' has no attribute {name!r}")
    return getattr(importlib.import_module(f"data_pipeline.{_MODULES[name]}"), name)
