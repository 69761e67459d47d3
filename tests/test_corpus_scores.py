"""corpus_scores: BLEU, chrF, chrF++ and TER as sacreBLEU defines them for the target language, with their
signatures."""

import json
import os
import subprocess
import sys

import pytest
import sacrebleu
from sacrebleu.tokenizers.tokenizer_char import TokenizerChar

from conftest import REPO_ROOT
from data_pipeline import languages
from helpers import preimported
from rnnsearch_tf.evaluation.corpus_scores import METRICS, bleu, corpus_scores, scorers

REFERENCES = ["the cat sat on the mat", "a dog runs in the park"]
# Chinese is written without spaces: 13a sees one "word" per sentence (and its full stop).
CHINESE_REFERENCES = ["猫坐在毯子上。", "今天天气不错。"]
CHINESE_TRANSLATIONS = ["猫坐在垫子上。", "今天天气很好。"]


def test_a_perfect_translation_scores_100_and_no_edits():
    scores, signatures = corpus_scores(REFERENCES, REFERENCES, target_language="en")
    assert scores == pytest.approx({"bleu": 100.0, "chrf": 100.0, "chrf_plus_plus": 100.0, "ter": 0.0})
    assert sorted(signatures) == sorted(METRICS)
    assert "nw:0" in signatures["chrf"] and "nw:2" in signatures["chrf_plus_plus"]  # chrF++: word bigrams
    assert "tok:13a" in signatures["bleu"]


def test_ter_counts_a_block_shift_as_one_edit_and_chrf_plus_plus_counts_words_too():
    scores, _ = corpus_scores(["c d a b"], ["a b c d"], ["ter", "chrf", "chrf_plus_plus"], target_language="en")
    assert scores["ter"] == pytest.approx(25.0)  # one shift of "a b", over 4 reference words
    # Single-letter words: chrF sees only the characters' n-grams across the shift; chrF++ adds the four
    # matching words and one of three matching word bigrams.
    assert scores["chrf_plus_plus"] > scores["chrf"]


def test_only_the_metrics_asked_for():
    scores, signatures = corpus_scores(["the cat"], ["the cat"], ["bleu"], target_language="en")
    assert list(scores) == list(signatures) == ["bleu"]


def test_a_chinese_target_is_scored_with_sacrebleus_chinese_tokenizer():
    scores, signatures = corpus_scores(CHINESE_TRANSLATIONS, CHINESE_REFERENCES, target_language="zh")
    assert "tok:zh" in signatures["bleu"] and "asian:yes" in signatures["ter"] and "norm:yes" in signatures["ter"]
    assert scores["bleu"] == pytest.approx(
        sacrebleu.BLEU(tokenize="zh").corpus_score(CHINESE_TRANSLATIONS, [CHINESE_REFERENCES]).score)
    thirteen_a = corpus_scores(CHINESE_TRANSLATIONS, CHINESE_REFERENCES, target_language="en")[0]
    assert scores["bleu"] > 30 and thirteen_a["bleu"] == 0.0  # 13a: each sentence one unmatched word
    assert scores["ter"] < 30 and thirteen_a["ter"] == 100.0  # TER splits the characters apart too
    assert scores["chrf"] == thirteen_a["chrf"]  # chrF reads characters in any language


@pytest.mark.parametrize("language, tokenizer, asian", [
    ("ja", "tok:ja-mecab", "asian:yes"), ("ko", "tok:ko-mecab", "asian:yes"), ("de", "tok:13a", "asian:no"),
    ("cs", "tok:13a", "asian:no"), ("th", "tok:char", "asian:no"),  # Thai: sacreBLEU's characters (no own one)
])
def test_every_signature_names_the_tokenizer_sacrebleu_gives_the_target_language(language, tokenizer, asian):
    _, signatures = corpus_scores(["Ein Hund läuft."], ["Der Hund läuft."], ["bleu", "ter"], target_language=language)
    assert tokenizer in signatures["bleu"] and asian in signatures["ter"]


def test_a_japanese_target_is_cut_into_words_by_mecab():
    translations, references = ["猫がマットの上に座った。"], ["猫がマットの上に座っていた。"]
    scores, signatures = corpus_scores(translations, references, ["bleu"], target_language="ja")
    assert "tok:ja-mecab" in signatures["bleu"]
    thirteen_a = corpus_scores(translations, references, ["bleu"], target_language="de")[0]
    assert scores["bleu"] > 30 and thirteen_a["bleu"] == 0.0  # 13a: the sentence is one word


@pytest.mark.parametrize("variety", ["cmn", "yue", "wuu", "nan", "hak", "gan"])
def test_a_chinese_variety_is_scored_as_chinese(variety):
    """An ISO 639-3 code of a Chinese variety: sacreBLEU knows only "zh", and gave 13a and TER without Asian
    support (each sentence one word)."""
    scores, signatures = corpus_scores(CHINESE_TRANSLATIONS, CHINESE_REFERENCES, target_language=variety)
    assert (scores, signatures) == corpus_scores(CHINESE_TRANSLATIONS, CHINESE_REFERENCES, target_language="zh")
    assert "tok:zh" in signatures["bleu"] and "asian:yes" in signatures["ter"]
    assert bleu(variety, sentence=True).sentence_score(CHINESE_TRANSLATIONS[0], [CHINESE_REFERENCES[0]]).score == (
        sacrebleu.sentence_bleu(CHINESE_TRANSLATIONS[0], [CHINESE_REFERENCES[0]], tokenize="zh").score)


def test_a_german_target_keeps_13a():
    translations, references = ["Der Hund läuft im Park."], ["Der Hund rennt im Park."]
    scores, signatures = corpus_scores(translations, references, target_language="de")
    assert "tok:13a" in signatures["bleu"] and "asian:no" in signatures["ter"] and "norm:no" in signatures["ter"]
    assert scores["bleu"] == pytest.approx(sacrebleu.corpus_bleu(translations, [references]).score)
    assert scores["ter"] == pytest.approx(sacrebleu.corpus_ter(translations, [references]).score)


def test_a_sentence_bleu_is_sacrebleus_with_the_targets_tokenizer():
    assert bleu("en", sentence=True).sentence_score("the cat", ["the cat sat"]).score == pytest.approx(
        sacrebleu.sentence_bleu("the cat", ["the cat sat"]).score)
    chinese = bleu("zh", sentence=True).sentence_score(CHINESE_TRANSLATIONS[0], [CHINESE_REFERENCES[0]])
    assert chinese.score == pytest.approx(
        sacrebleu.sentence_bleu(CHINESE_TRANSLATIONS[0], [CHINESE_REFERENCES[0]], tokenize="zh").score)


def test_a_target_language_that_is_not_a_code_is_refused():
    with pytest.raises(ValueError, match="target_language='french' is not a language code"):
        corpus_scores(["le chat"], ["le chat"], target_language="french")


def test_a_lowercasing_model_is_scored_case_insensitively_and_its_signatures_say_so():
    translations, references = ["the cat sat on the mat"], ["The Cat sat on the mat"]
    cased, _ = corpus_scores(translations, references, target_language="en")
    scores, signatures = corpus_scores(translations, references, target_language="en", lowercase=True)
    assert scores == pytest.approx({"bleu": 100.0, "chrf": 100.0, "chrf_plus_plus": 100.0, "ter": 0.0})
    assert cased["bleu"] < 70 and cased["chrf"] < 100 and cased["ter"] == 0.0  # sacreBLEU's TER ignores case anyway
    assert "case:lc" in signatures["bleu"] and "case:lc" in signatures["chrf"] and "case:lc" in signatures["ter"]
    assert bleu("en", sentence=True, lowercase=True).sentence_score(translations[0], references).score == pytest.approx(
        100.0)


# Thai written without spaces between words (a space ends a clause): one near-perfect translation, one exact.
THAI_REFERENCES = ["ฉันชอบกินข้าวผัดกับไข่ดาวมาก", "วันนี้อากาศดีมาก"]
THAI_TRANSLATIONS = ["ฉันชอบกินข้าวผัดกับไข่ดาว", "วันนี้อากาศดีมาก"]


@pytest.mark.parametrize("language", sorted(
    code for code in languages.WITHOUT_SPACES if code not in sacrebleu.BLEU._TOKENIZER_MAP))
def test_a_language_without_spaces_and_without_a_sacrebleu_tokenizer_is_scored_on_characters(language):
    """Thai, Lao, Khmer, Burmese, Tibetan, Dzongkha: 13a took each sentence for one word, so that BLEU was an
    exact sentence match and TER 100 for a near-perfect translation; dev BLEU then picked checkpoints by it."""
    scores, signatures = corpus_scores(THAI_TRANSLATIONS, THAI_REFERENCES, target_language=language)
    assert "tok:char" in signatures["bleu"] and "tok:char" in signatures["ter"]
    characters = TokenizerChar()
    assert scores["bleu"] == pytest.approx(
        sacrebleu.BLEU(tokenize="char").corpus_score(THAI_TRANSLATIONS, [THAI_REFERENCES]).score)
    assert scores["ter"] == pytest.approx(sacrebleu.TER().corpus_score(
        [characters(text) for text in THAI_TRANSLATIONS], [[characters(text) for text in THAI_REFERENCES]]).score)
    as_words = sacrebleu.BLEU().corpus_score(THAI_TRANSLATIONS, [THAI_REFERENCES]).score  # 13a, the old choice
    as_words_ter = sacrebleu.TER().corpus_score(THAI_TRANSLATIONS, [THAI_REFERENCES]).score
    assert as_words_ter == 50.0 and scores["ter"] < 10  # one sentence of two wrong, not a few characters
    assert scores["bleu"] > 80 > as_words


def _without_mecab(tmp_path):
    """The environment of a process in which `import MeCab` fails, as where the `ja` extra is not installed."""
    shadow = tmp_path / "shadow" / "MeCab"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("No module named MeCab")\n', encoding="utf-8")
    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=f"{shadow.parent}{os.pathsep}{REPO_ROOT}")


def test_a_japanese_target_without_mecab_is_one_line_naming_the_extra(tmp_path):
    script = ("from rnnsearch_tf.evaluation.corpus_scores import scorers\n"
              "try:\n    scorers('ja')\nexcept ValueError as error:\n    print(error)\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, env=_without_mecab(tmp_path),
                            capture_output=True, text=True, timeout=120)
    assert result.stdout == ("target language 'ja': BLEU's tokenizer ja-mecab needs packages that are not installed: "
                             "pip install 'rnnsearch-tf[ja]' (in a clone: pip install -e '.[ja]'; docs/data.md)\n")
    assert "ja" in _extras()  # the extra it names is the package's
    assert set(scorers("ja")) == set(METRICS)  # where MeCab is installed


def _extras():
    from importlib.metadata import metadata

    return metadata("rnnsearch-tf").get_all("Provides-Extra")


# large: two fresh command processes; the default suite makes the one-line error without MeCab (above)
@pytest.mark.large
def test_train_and_evaluate_stop_before_any_work_without_mecab(tmp_path):
    """A Japanese target's scorer is made before a model folder is written (train) or a test set decoded
    (evaluate): before, train left a half-written model folder and evaluate failed after decoding everything."""
    environment = _without_mecab(tmp_path)
    data_dir, model_dir = tmp_path / "data", tmp_path / "model"
    data_dir.mkdir()
    vocabulary = {"size": 10}
    (data_dir / "metadata.json").write_text(json.dumps(dict(
        source_language="en", target_language="ja", vocabularies=dict(source=vocabulary, target=vocabulary))))
    model_dir.mkdir()
    (model_dir / "data.json").write_text(json.dumps(dict(source_language="en", target_language="ja")))
    (tmp_path / "test.en").write_text("Hello.\n")
    (tmp_path / "test.ja").write_text("こんにちは。\n")
    expected = "error: target language 'ja': BLEU's tokenizer ja-mecab needs packages that are not installed: "
    commands = {
        "train": (f"--data_dir={data_dir}", f"--model_dir={tmp_path / 'trained'}", "--train_steps=1"),
        "evaluate": (f"--model_dir={model_dir}", f"--source={tmp_path / 'test.en'}",
                     f"--reference={tmp_path / 'test.ja'}", f"--output_dir={tmp_path / 'evaluation'}"),
    }
    for command, flags in commands.items():
        result = preimported.run([sys.executable, "-m", "rnnsearch_tf.cli.main", command, *flags], cwd=REPO_ROOT,
                                 env=environment, capture_output=True, text=True, timeout=300)
        assert result.returncode == 1 and result.stderr.strip().splitlines()[-1].startswith(expected), result.stderr
    assert not (tmp_path / "trained").exists() and not (tmp_path / "evaluation").exists()
