"""The test set and model directory of the evaluation tests (tests/test_evaluator.py, tests/test_evaluate.py):
six sentence pairs over the tiny model's words of `serving_test_utils`, and its training state."""

import json

from helpers.serving_test_utils import write_model_dir

# Source words of serving_test_utils: lower case only ("The" is outside the shortlist).
SOURCES = [
    "the cat sees the big dog .",  # no unknown word
    "The cat sees a house .",  # unknown source word
    "a small green house ?",  # unknown reference word
    "",
    " ".join(["the big dog sees a small cat ."] * 3),  # 24 tokens, no unknown word
    "dog",
]
REFERENCES = [
    "le chat voit le grand chien",  # target words of serving_test_utils: no punctuation
    "le chat voit une maison.",
    "une petite maison verte ?",
    "",
    "le grand chien voit un petit chat " * 3,
    "chien",
]
NO_UNK_LINES = [1, 4, 5, 6]  # 1-based; the empty pair has no unknown word either
TRAINING_STATE = dict(step=1200, epoch=2.5, hours=0.75, train_nll_per_sentence=41.5, dev_nll_per_sentence=44.0,
                      dev_bleu=3.1, best_step=1000, best_dev_bleu=3.4)


def write_evaluated_model_dir(path):
    """The tiny model directory at `path`, with `TRAINING_STATE` as its training_state.json."""
    path = write_model_dir(path)
    (path / "training_state.json").write_text(json.dumps(TRAINING_STATE), encoding="utf-8")
    return path
