"""Evaluator and `python -m rnnsearch_tf.evaluate` on a tiny random model: the numbers equal sacrebleu's."""

import json
import os
import subprocess
import sys

import pytest
import sacrebleu

from conftest import REPO_ROOT
from rnnsearch_tf.evaluation.evaluator import Evaluator
from rnnsearch_tf.inference.search_config import SearchConfig
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


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    path = write_model_dir(tmp_path_factory.mktemp("evaluate") / "model")
    (path / "training_state.json").write_text(json.dumps(TRAINING_STATE), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def evaluated(model_dir, tmp_path_factory):
    output_dir = tmp_path_factory.mktemp("evaluation")
    evaluator = Evaluator(SOURCES, REFERENCES, batch_size=4, search_config=SearchConfig(beam_size=3), num_heatmaps=2,
                          length_bins=(10, 20))
    return evaluator.evaluate(model_dir, output_dir), output_dir


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_bleu_equals_sacrebleu_on_the_written_files(evaluated):
    metrics, output_dir = evaluated
    translations = _lines(output_dir / "translations.txt")
    assert len(translations) == len(SOURCES)
    bleu = sacrebleu.BLEU()
    assert metrics["bleu"] == bleu.corpus_score(translations, [REFERENCES]).score
    assert metrics["signature"] == str(bleu.get_signature())
    replaced = sacrebleu.corpus_bleu(_lines(output_dir / "translations_unk_replaced.txt"), [REFERENCES])
    assert metrics["bleu_unk_replaced"] == replaced.score


def test_no_unk_subset_and_its_bleu(evaluated):
    metrics, output_dir = evaluated
    assert [int(line) for line in _lines(output_dir / "no_unk_lines.txt")] == NO_UNK_LINES
    assert metrics["no_unk_sentences"] == len(NO_UNK_LINES)
    translations = _lines(output_dir / "translations_no_unk.txt")
    assert all("<unk>" not in translation for translation in translations)
    references = [REFERENCES[line - 1] for line in NO_UNK_LINES]
    assert metrics["bleu_no_unk"] == sacrebleu.corpus_bleu(translations, [references]).score


def test_bleu_by_length(evaluated):
    metrics, output_dir = evaluated
    bins = metrics["bleu_by_length"]
    assert [(item["bin"], item["sentences"]) for item in bins] == [("0-10", 5), ("10-20", 0), ("20+", 1)]
    assert bins[1]["bleu"] is None
    translations = _lines(output_dir / "translations.txt")
    short = [0, 1, 2, 3, 5]
    expected = sacrebleu.corpus_bleu([translations[i] for i in short], [[REFERENCES[i] for i in short]]).score
    assert bins[0]["bleu"] == expected


def test_longest_sentences(evaluated):
    metrics, output_dir = evaluated
    translations = _lines(output_dir / "translations.txt")
    assert [sentence["line"] for sentence in metrics["longest_sentences"]] == [5, 1, 2, 3, 6]
    assert [sentence["source_length"] for sentence in metrics["longest_sentences"]] == [24, 7, 6, 5, 1]
    for sentence in metrics["longest_sentences"]:
        line = sentence["line"]
        assert sentence["source"] == SOURCES[line - 1] and sentence["reference"] == REFERENCES[line - 1]
        assert sentence["translation"] == translations[line - 1]
        bleu = sacrebleu.sentence_bleu(translations[line - 1], [REFERENCES[line - 1]]).score
        assert sentence["sentence_bleu"] == bleu


def test_heatmaps_and_training_state(evaluated):
    metrics, output_dir = evaluated
    assert metrics["heatmaps"] == ["alignment_1.png", "alignment_2.png"]
    for name in metrics["heatmaps"]:
        assert (output_dir / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert metrics["training"] == TRAINING_STATE
    assert json.loads((output_dir / "metrics.json").read_text(encoding="utf-8")) == json.loads(json.dumps(metrics))


def test_mismatched_files_are_refused():
    with pytest.raises(ValueError, match="2 source sentences but 1 references"):
        Evaluator(["a", "b"], ["c"])


def test_command_line_two_models(model_dir, tmp_path):
    second = write_model_dir(tmp_path / "second", seed=5)  # no training_state.json
    (tmp_path / "source.txt").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    (tmp_path / "reference.txt").write_text("\n".join(REFERENCES) + "\n", encoding="utf-8")
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run(
        [sys.executable, "-m", "rnnsearch_tf.evaluate", f"--model_dir={model_dir},{second}",
         f"--source={tmp_path / 'source.txt'}", f"--reference={tmp_path / 'reference.txt'}",
         f"--output_dir={tmp_path / 'out'}", "--beam_size=2", "--num_heatmaps=1", "--noprogress"],
        capture_output=True, env=environment, cwd=REPO_ROOT,
    )
    assert result.returncode == 0, result.stderr.decode()
    output = tmp_path / "out"
    metrics = json.loads((output / "metrics.json").read_text(encoding="utf-8"))
    assert list(metrics["models"]) == ["model", "second"]
    for name, values in metrics["models"].items():
        translations = _lines(output / name / "translations.txt")
        assert values["bleu"] == sacrebleu.corpus_bleu(translations, [REFERENCES]).score
        assert json.loads((output / name / "metrics.json").read_text(encoding="utf-8")) == values
    assert (output / "bleu_by_length.png").read_bytes()[:4] == b"\x89PNG"
    report = (output / "report.md").read_text(encoding="utf-8")
    assert f"| model | {metrics['models']['model']['bleu']:.2f} |" in report
    assert "| model | 1200 | 2.50 | 0.75 | 41.50 | 44.00 | 3.10 | 1000 | 3.40 |" in report
    assert "No `training_state.json` in the model directory of second" in report
    assert "![model alignment_1.png](model/alignment_1.png)" in report
    assert "## Long sentences (Appendix C, Table 3)" in report
    section = report.split("## Long sentences")[1].split("\n## ")[0]
    longest = [5, 1, 2, 3, 6]  # by source tokens (24, 7, 6, 5, 1; "dog" before the empty line 4)
    assert [int(heading.split()[1]) for heading in section.split("### ")[1:]] == longest
    for line in longest:
        block = section.split(f"### Line {line} ")[1].split("### ")[0]
        assert f"| Source | {SOURCES[line - 1]} | |" in block and f"| Reference | {REFERENCES[line - 1]} | |" in block
        for name in ("model", "second"):
            translation = _lines(output / name / "translations.txt")[line - 1]
            bleu = sacrebleu.sentence_bleu(translation, [REFERENCES[line - 1]]).score
            assert f"| {name} | {translation} | {bleu:.2f} |" in block
