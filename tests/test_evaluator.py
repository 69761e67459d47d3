"""rnnsearch_tf/evaluation/evaluator.py: Evaluator on a tiny random model: the numbers equal sacrebleu's on
the files it writes, the "No UNK" subset, the length bins, the longest sentences, heatmaps, an ensemble, and a
Chinese target scored with sacreBLEU's Chinese tokenizer.

The command `python -m rnnsearch_tf.evaluate` over the same test set is tests/test_evaluate.py.
"""

import json
import os
import shutil

import numpy as np
import pytest
import sacrebleu
import tensorflow as tf

from data_pipeline import constants
from data_pipeline.text_codec import counting_tokens
from rnnsearch_tf.evaluation.evaluator import LENGTH_BINS, Evaluator
from rnnsearch_tf.evaluation.plots import plot_alignment
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.inference.unk_replacer import UnkReplacer
from rnnsearch_tf.models.model_dir import ModelDir
from helpers.evaluation_test_data import NO_UNK_LINES, REFERENCES, SOURCES, TRAINING_STATE, write_evaluated_model_dir
from helpers.serving_test_utils import write_model_dir
from helpers.subword_test_data import write_subword_model_dir
from helpers import toy_chinese
from helpers.toy_chinese import build_english_chinese


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return write_evaluated_model_dir(tmp_path_factory.mktemp("evaluate") / "model")


@pytest.fixture(scope="module")
def evaluated(model_dir, tmp_path_factory):
    output_dir = tmp_path_factory.mktemp("evaluation")
    evaluator = Evaluator(SOURCES, REFERENCES, batch_size=4, search_config=SearchConfig(beam_size=3), num_heatmaps=2,
                          length_bins=(10, 20))
    return evaluator.evaluate(model_dir, output_dir), output_dir


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_bleu_chrf_and_ter_equal_sacrebleus_on_the_written_files(evaluated):
    metrics, output_dir = evaluated
    translations = _lines(output_dir / "translations.txt")
    assert len(translations) == len(SOURCES)
    bleu = sacrebleu.BLEU()
    assert metrics["bleu"] == bleu.corpus_score(translations, [REFERENCES]).score
    assert metrics["signature"] == str(bleu.get_signature()) == metrics["signatures"]["bleu"]
    for name, metric in (("chrf", sacrebleu.CHRF()), ("chrf_plus_plus", sacrebleu.CHRF(word_order=2)),
                         ("ter", sacrebleu.TER())):
        assert metrics[name] == metric.corpus_score(translations, [REFERENCES]).score, name
        assert metrics["signatures"][name] == str(metric.get_signature()), name
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


def test_no_heatmaps_below_one(model_dir, tmp_path):
    """A count of heatmaps below 1 draws none (a negative one drew every sentence's)."""
    for count in (0, -1):
        evaluator = Evaluator(SOURCES[:3], REFERENCES[:3], batch_size=4, search_config=SearchConfig(beam_size=1),
                              num_heatmaps=count, num_longest=0)
        assert evaluator.evaluate(model_dir, tmp_path / str(count))["heatmaps"] == []
        assert not list((tmp_path / str(count)).glob("alignment_*.png"))


def test_mismatched_or_empty_files_are_refused():
    with pytest.raises(ValueError, match="2 source sentences but 1 references"):
        Evaluator(["a", "b"], ["c"])
    with pytest.raises(ValueError, match="no source sentences: nothing to evaluate"):
        Evaluator([], [])


def test_the_metrics_name_the_model_the_checkpoint_and_the_vocabulary_translated(evaluated, model_dir):
    metrics, _ = evaluated
    assert metrics["model_dir"] == str(model_dir) and metrics["sentences"] == len(SOURCES)
    assert metrics["checkpoint"] == tf.train.latest_checkpoint(str(model_dir / "checkpoints"))  # no best: latest
    assert metrics["truncated_sentences"] == 0
    assert metrics["shortlist"] == "full vocabulary"  # the model directory has none


def test_the_metrics_record_how_the_translations_were_searched(evaluated, model_dir, tmp_path):
    metrics, _ = evaluated
    assert metrics["search"] == SearchConfig(beam_size=3, shortlist=False).to_dict()  # resolved: the model has none
    assert (metrics["precision"], metrics["quantize"]) == ("float32", "none")
    search = SearchConfig(beam_size=2, length_normalization="gnmt", sampling=True, num_samples=2)
    evaluator = Evaluator(SOURCES[:3], REFERENCES[:3], batch_size=4, search_config=search, num_heatmaps=0,
                          num_longest=0, quantize="int8")
    sampled = evaluator.evaluate(model_dir, tmp_path)
    assert sampled["search"] == dict(search.to_dict(), shortlist=False)
    assert (sampled["precision"], sampled["quantize"]) == ("float32", "int8")


def test_every_model_is_checked_before_any_is_decoded(model_dir, english_chinese_model_dir, tmp_path):
    evaluator = Evaluator(SOURCES, REFERENCES)
    evaluator.check(model_dir)
    evaluator.check(f"{model_dir}+{model_dir}")
    with pytest.raises(ValueError, match=r"source_vocab\.tsv and .*source_vocab\.tsv differ"):
        evaluator.check(f"{model_dir}+{english_chinese_model_dir}")
    with pytest.raises(FileNotFoundError, match=f"no checkpoint in {model_dir / 'averaged'}"):
        evaluator.check(model_dir, "averaged")
    with pytest.raises(FileNotFoundError, match="checkpoint ckpt-99 not found"):
        evaluator.check(f"{model_dir}+{model_dir}", "ckpt-1+ckpt-99")
    with pytest.raises(ValueError, match="quantize must be one of"):
        Evaluator(SOURCES, REFERENCES, quantize="int4").check(model_dir)
    assert not list(tmp_path.iterdir())


@pytest.fixture(scope="module")
def ensemble_evaluated(model_dir, tmp_path_factory):
    second = write_model_dir(tmp_path_factory.mktemp("second") / "model", seed=5)
    output_dir = tmp_path_factory.mktemp("ensemble_evaluation")
    evaluator = Evaluator(SOURCES, REFERENCES, batch_size=4, num_heatmaps=4, num_longest=2,
                          search_config=SearchConfig(beam_size=2, maximum_source_length=10))
    return evaluator.evaluate(f"{model_dir}+{second}", output_dir), output_dir


def test_an_ensemble_is_evaluated_without_a_training_state(ensemble_evaluated, model_dir):
    metrics, output_dir = ensemble_evaluated
    assert metrics["training"] is None  # though its first model has training_state.json
    assert metrics["model_dir"].startswith(f"{model_dir}+")
    translations = _lines(output_dir / "translations.txt")
    assert metrics["bleu"] == sacrebleu.corpus_bleu(translations, [REFERENCES]).score
    assert json.loads((output_dir / "metrics.json").read_text(encoding="utf-8")) == json.loads(json.dumps(metrics))


def test_sources_longer_than_the_search_takes_are_counted_and_keep_their_length(ensemble_evaluated):
    metrics, _ = ensemble_evaluated
    longer = [line for line, source in enumerate(SOURCES, 1) if len(source.split()) > 10]  # spaced tokens
    assert metrics["truncated_sentences"] == len(longer) == 1
    assert [sentence["line"] for sentence in metrics["longest_sentences"]] == [longer[0], 1]  # num_longest=2
    assert metrics["longest_sentences"][0]["source_length"] == len(SOURCES[longer[0] - 1].split())


def test_heatmaps_skip_empty_sources_and_the_default_bins_cover_every_length(ensemble_evaluated):
    metrics, output_dir = ensemble_evaluated
    non_empty = [line for line, source in enumerate(SOURCES, 1) if source.split()]
    assert metrics["heatmaps"] == [f"alignment_{line}.png" for line in non_empty[:4]]
    for name in metrics["heatmaps"]:
        assert (output_dir / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bins = metrics["bleu_by_length"]
    assert [(item["minimum"], item["maximum"]) for item in bins] == list(zip((0,) + LENGTH_BINS, LENGTH_BINS + (None,)))
    assert [item["bin"] for item in bins][-1] == f"{LENGTH_BINS[-1]}+"
    assert sum(item["sentences"] for item in bins) == len(SOURCES)


@pytest.fixture(scope="module")
def english_chinese_model_dir(tmp_path_factory):
    """A tiny English -> Chinese SentencePiece model of random weights (`helpers.toy_chinese`)."""
    folder = tmp_path_factory.mktemp("chinese")
    return write_subword_model_dir(build_english_chinese(folder, toy_chinese.PAIRS[:4]), folder / "model")


@pytest.fixture(scope="module")
def chinese_evaluated(english_chinese_model_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("chinese_evaluation")
    sources, references = (list(side) for side in zip(*toy_chinese.PAIRS[::5]))
    evaluator = Evaluator(sources, references, batch_size=4, search_config=SearchConfig(beam_size=2), num_heatmaps=0,
                          length_bins=(10,), num_longest=2)
    return evaluator.evaluate(english_chinese_model_dir, folder / "evaluation"), folder / "evaluation", references


def test_a_chinese_target_is_scored_with_sacrebleus_chinese_tokenizer(chinese_evaluated):
    metrics, output_dir, references = chinese_evaluated
    translations = _lines(output_dir / "translations.txt")
    bleu = sacrebleu.BLEU(tokenize="zh")
    assert metrics["bleu"] == bleu.corpus_score(translations, [references]).score
    assert "tok:zh" in metrics["signature"] and metrics["signature"] == str(bleu.get_signature())
    assert "asian:yes" in metrics["signatures"]["ter"]
    assert metrics["bleu_no_unk"] is None  # pieces: no text is unknown
    assert [item["sentences"] for item in metrics["bleu_by_length"]] == [len(references), 0]
    assert metrics["bleu_by_length"][0]["bleu"] == metrics["bleu"]
    for sentence in metrics["longest_sentences"]:
        line = sentence["line"]
        expected = sacrebleu.sentence_bleu(translations[line - 1], [references[line - 1]], tokenize="zh").score
        assert sentence["sentence_bleu"] == expected


def test_word_and_subword_models_put_the_same_sentences_in_the_same_bins(model_dir, english_chinese_model_dir,
                                                                       tmp_path):
    """One length for a source whatever the model's codec: its Moses tokens (a subword model counted the words its
    pieces made, "dog." one word, and so binned the same sentence apart from a word model)."""
    sources = ["the cat sees the dog.", "a small house?", "the big dog sees a small cat.", "dog"]
    lengths = counting_tokens(tf.constant(sources), "en").row_lengths().numpy().tolist()
    assert lengths != [len(source.split()) for source in sources]  # the full stops are tokens of their own
    bins = (6,)
    evaluated = {}
    for name, path, references in (("word", model_dir, ["le chat"] * 4), ("subword", english_chinese_model_dir,
                                                                          ["猫看见狗。"] * 4)):
        evaluator = Evaluator(sources, references, batch_size=4, search_config=SearchConfig(beam_size=1),
                              length_bins=bins, num_heatmaps=0, num_longest=len(sources))
        evaluated[name] = evaluator.evaluate(path, tmp_path / name)
    for metrics in evaluated.values():
        assert metrics["source_length_unit"] == "Moses tokens"
        assert [item["sentences"] for item in metrics["bleu_by_length"]] == [
            sum(length < bins[0] for length in lengths), sum(length >= bins[0] for length in lengths)]
        assert {item["line"]: item["source_length"] for item in metrics["longest_sentences"]} == dict(
            enumerate(lengths, 1))


def test_a_second_run_leaves_only_its_own_files_in_the_folder(model_dir, english_chinese_model_dir, tmp_path):
    """An earlier run's heatmaps beyond this run's and a word model's No-UNK files went on lying beside a subword
    model's; a file evaluate never writes stays."""
    Evaluator(SOURCES, REFERENCES, batch_size=4, search_config=SearchConfig(beam_size=1), num_heatmaps=4,
              num_longest=0).evaluate(model_dir, tmp_path)
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    (tmp_path / "alignment_x.png").write_bytes(b"mine")
    assert {"alignment_5.png", "translations_no_unk.txt", "no_unk_lines.txt"} <= {p.name for p in tmp_path.iterdir()}
    sources, references = (list(side) for side in zip(*toy_chinese.PAIRS[:3]))
    metrics = Evaluator(sources, references, batch_size=4, search_config=SearchConfig(beam_size=1), num_heatmaps=1,
                        num_longest=0).evaluate(english_chinese_model_dir, tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        ["metrics.json", "translations.txt", "translations_unk_replaced.txt", *metrics["heatmaps"], "notes.txt",
         "alignment_x.png"])
    assert metrics["heatmaps"] == ["alignment_1.png"]


def test_a_model_that_fails_to_load_writes_no_folder(model_dir, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(model_dir, broken)
    shutil.rmtree(broken / "checkpoints")
    with pytest.raises(FileNotFoundError, match="no checkpoint in"):
        Evaluator(SOURCES, REFERENCES).evaluate(broken, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def _emitting_unk(path, model_name, bias=8.0):
    """The tiny model directory at `path` with `bias` added to the output bias of `<unk>` (a checkpoint of its
    own, the newest): its translations hold `<unk>`s, as a small vocabulary's do."""
    model_dir = ModelDir(write_model_dir(path, model_name=model_name))
    model, _ = model_dir.load_model("latest")
    output_bias = next(variable for variable in model.weights if variable.path.endswith("W_o/bias"))
    output_bias.assign(output_bias.numpy() + bias * (np.arange(output_bias.shape[0]) == constants.UNK_ID))
    tf.train.Checkpoint(model=model).save(model_dir.file(os.path.join("checkpoints", "ckpt")))
    return path


def test_a_model_without_attention_has_no_unk_replaced_score_and_no_heatmaps(tmp_path):
    """RNNencdec aligns nothing (its alignment rows are zeros): "UNK replaced" copied the first source word for
    every <unk> ("Un homme A A A"), and its heatmaps were black squares."""
    model_dir = _emitting_unk(tmp_path / "rnnencdec", "rnnencdec")
    output_dir = tmp_path / "evaluation"
    output_dir.mkdir()
    (output_dir / "translations_unk_replaced.txt").write_text("an earlier run's\n", encoding="utf-8")
    metrics = Evaluator(SOURCES, REFERENCES, batch_size=4, search_config=SearchConfig(beam_size=2), num_heatmaps=2,
                        num_longest=0).evaluate(model_dir, output_dir)
    assert any("<unk>" in line for line in _lines(output_dir / "translations.txt"))  # something to replace
    assert metrics["uses_attention"] is False and metrics["bleu_unk_replaced"] is None
    assert metrics["heatmaps"] == [] and not list(output_dir.glob("alignment_*.png"))
    assert not (output_dir / "translations_unk_replaced.txt").exists()
    assert json.loads((output_dir / "metrics.json").read_text(encoding="utf-8"))["bleu_unk_replaced"] is None


def test_heatmap_rows_are_the_words_searched_with_their_unks(tmp_path):
    """The heatmap labelled its rows with the words <unk> replacement wrote, not those the model produced and
    translations.txt holds."""
    model_dir = _emitting_unk(tmp_path / "rnnsearch", "rnnsearch")
    search = SearchConfig(beam_size=2)
    metrics = Evaluator(SOURCES[:1], REFERENCES[:1], batch_size=4, search_config=search, num_heatmaps=1,
                        num_longest=0).evaluate(model_dir, tmp_path / "evaluation")
    assert metrics["heatmaps"] == ["alignment_1.png"]
    result, = BatchTranslator.from_model_dir(model_dir, batch_size=4, unk_replacer=UnkReplacer(),
                                             search_config=search).translate(SOURCES[:1])
    assert constants.UNK_TOKEN in result["searched_tokens"] and result["tokens"] != result["searched_tokens"]
    assert " ".join(result["searched_tokens"]) == _lines(tmp_path / "evaluation" / "translations.txt")[0]
    drawn = {}
    for name in ("searched_tokens", "tokens"):
        rows = (result[name] + [constants.EOS_TOKEN])[: result["alignment"].shape[0]]
        plot_alignment(result["source_tokens"] + [constants.EOS_TOKEN], rows, result["alignment"],
                       tmp_path / f"{name}.png", title="line 1")
        drawn[name] = (tmp_path / f"{name}.png").read_bytes()
    written = (tmp_path / "evaluation" / "alignment_1.png").read_bytes()
    assert written == drawn["searched_tokens"] != drawn["tokens"]
