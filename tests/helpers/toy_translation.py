"""A small synthetic English-French corpus that a tiny model learns in a minute on a CPU.

Sentences follow "the ADJ NOUN VERB ." -> "le/la NOUN ADJ VERB ." (French puts the adjective after the
noun and the article agrees with the noun's gender), optionally followed by "with the ADJ NOUN" ->
"avec le/la NOUN ADJ": local reordering and agreement, the phenomena attention has to learn.
"""

import numpy as np

from data_pipeline import corpus_registry
from data_pipeline.dataset_builder import DatasetBuilder

NOUNS = {"cat": ("chat", "le"), "dog": ("chien", "le"), "house": ("maison", "la"), "car": ("voiture", "la"),
         "tree": ("arbre", "le"), "table": ("table", "la"), "bird": ("oiseau", "le"), "door": ("porte", "la")}
ADJECTIVES = {"red": "rouge", "big": "grand", "small": "petit", "old": "vieux", "green": "vert", "black": "noir"}
VERBS = {"sleeps": "dort", "falls": "tombe", "waits": "attend", "moves": "bouge", "shines": "brille"}


def sentence_pair(rng):
    def noun_phrase():
        noun, adjective = rng.choice(sorted(NOUNS)), rng.choice(sorted(ADJECTIVES))
        french_noun, article = NOUNS[noun]
        return f"the {adjective} {noun}", f"{article} {french_noun} {ADJECTIVES[adjective]}"

    english, french = noun_phrase()
    verb = rng.choice(sorted(VERBS))
    english, french = f"{english} {verb}", f"{french} {VERBS[verb]}"
    if rng.random() < 0.5:
        english_tail, french_tail = noun_phrase()
        english, french = f"{english} with {english_tail}", f"{french} avec {french_tail}"
    return english.capitalize() + " .", french.capitalize() + " ."


def write_corpus(folder, train_pairs=3000, dev_pairs=100, seed=0):
    """Writes train.{en,fr} and dev.{en,fr}; returns {split: (source path, target path)}."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    splits = {}
    for split, count in (("train", train_pairs), ("dev", dev_pairs)):
        pairs = [sentence_pair(rng) for _ in range(count)]
        paths = folder / f"{split}.en", folder / f"{split}.fr"
        for path, side in zip(paths, zip(*pairs)):
            path.write_text("\n".join(side) + "\n", encoding="utf-8")
        splits[split] = paths
    return splits


def build_toy_data(folder):
    """Raw toy corpus -> `data_pipeline` output (shards, vocabularies, raw dev text) in folder/data."""
    corpus = corpus_registry.text_file_corpus("en", "fr", write_corpus(folder / "raw"))
    DatasetBuilder(corpus, folder / "data", vocabulary_size=100, max_length=20, num_shards=2,
                   show_progress=False).build()
    return folder / "data"
