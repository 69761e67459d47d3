"""A toy English-Chinese corpus built into a data directory: Chinese is written without spaces, so its codec is
SentencePiece and its BLEU sacreBLEU's Chinese tokenizer (tests of evaluation and validation per language)."""

import itertools

from data_pipeline import corpus_registry
from data_pipeline.dataset_builder import DatasetBuilder

_NOUNS = {"cat": "猫", "dog": "狗", "bird": "鸟", "child": "孩子"}
_VERBS = {"sees": "看见", "likes": "喜欢", "follows": "跟着"}
PAIRS = [(f"the {subject} {verb} the {thing} .", f"{_NOUNS[subject]}{_VERBS[verb]}{_NOUNS[thing]}。")
         for subject, verb, thing in itertools.product(_NOUNS, _VERBS, _NOUNS) if subject != thing]


def build_english_chinese(folder, dev_pairs):
    """`folder / "data"`: PAIRS as the train split and `dev_pairs` as dev, SentencePiece pieces per language."""
    splits = {}
    for split, pairs in (("train", PAIRS), ("dev", dev_pairs)):
        splits[split] = folder / f"{split}.en", folder / f"{split}.zh"
        for path, side in zip(splits[split], zip(*pairs)):
            path.write_text("\n".join(side) + "\n", encoding="utf-8")
    DatasetBuilder(corpus_registry.text_file_corpus("en", "zh", splits), folder / "data", max_length=30, num_shards=1,
                   show_progress=False, subwords="sentencepiece", subword_vocabulary_size=300,
                   joint_subwords=False).build()
    return folder / "data"
