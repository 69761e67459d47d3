"""`python -m rnnsearch_tf.evaluate` (rnnsearch_tf/evaluate.py, rnnsearch_tf/cli/evaluate.py) on a tiny random
model: the numbers equal sacrebleu's, and the report shows them; over a model directory's shortlist, and with int8
weights, its BLEU is sacreBLEU's of `translate`'s output; bench/results_summary.py reads its folder as the README's
results rows. Evaluator itself is tests/test_evaluator.py."""

import json
import os
import pathlib
import shutil
import sys

import pytest
import sacrebleu

from bench import results_summary
from bench.results_summary import summarize_eval_dirs
from conftest import REPO_ROOT
from helpers.commands import run_command
from helpers.evaluation_test_data import REFERENCES, SOURCES, write_evaluated_model_dir
from helpers.serving_test_utils import write_model_dir
from helpers.trained_toy_model import translated
from helpers import preimported
from data_pipeline.data_dir import DataDir
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.shortlist import Shortlist
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.training.checkpoint_averaging import read_averaging
from test_shortlist import _small_shortlist


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return write_evaluated_model_dir(tmp_path_factory.mktemp("evaluate") / "model")


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_command_line_two_models(model_dir, tmp_path):
    second = write_model_dir(tmp_path / "second", seed=5)  # no training_state.json
    (tmp_path / "source.txt").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    (tmp_path / "reference.txt").write_text("\n".join(REFERENCES) + "\n", encoding="utf-8")
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    result = preimported.run(
        [sys.executable, "-m", "rnnsearch_tf.evaluate", f"--model_dir={model_dir},{second}",
         f"--source={tmp_path / 'source.txt'}", f"--reference={tmp_path / 'reference.txt'}",
         f"--output_dir={tmp_path / 'out'}", "--beam_size=2", "--num_heatmaps=1", "--noprogress"],
        capture_output=True, env=environment, cwd=REPO_ROOT,
    )
    assert result.returncode == 0, result.stderr.decode()
    # progress and results only: no matplotlib font fallback message, no legend warning (second: no history)
    assert "findfont" not in result.stderr.decode() and "Warning" not in result.stderr.decode(), result.stderr.decode()
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
    # bench/results_summary.py, which writes the README's results rows from this folder: each model's numbers rounded
    # as the table shows them, its training where the model directory has a training_state.json
    summary = summarize_eval_dirs({"test_2016": str(output)})
    assert [summary["model"][key] for key in ("updates", "epochs", "hours", "best_dev_bleu")] == [1200, 2.5, 0.75, 3.4]
    assert summary["second"]["updates"] is None
    for name, values in metrics["models"].items():
        scores = summary[name]["test_2016"]
        assert (scores["bleu"], scores["chrf"], scores["bleu_no_unk"], scores["bleu_unk_replaced"]) == tuple(
            round(values[key], 2) for key in ("bleu", "chrf", "bleu_no_unk", "bleu_unk_replaced"))
        assert scores["no_unk_sentences"] == values["no_unk_sentences"]
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


def test_evaluate_scores_what_translate_outputs_over_the_models_shortlist(model_dir, tmp_path):
    directory = tmp_path / "model"
    shutil.copytree(model_dir, directory)
    Shortlist(*_small_shortlist(directory)).save(ModelDir(directory).shortlist_file)
    (tmp_path / "source.txt").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    (tmp_path / "reference.txt").write_text("\n".join(REFERENCES) + "\n", encoding="utf-8")
    translated = run_command("translate", f"--model_dir={directory}", f"--input={tmp_path / 'source.txt'}",
                             "--beam_size=2", "--noprogress")
    evaluated = run_command("evaluate", f"--model_dir={directory}", f"--source={tmp_path / 'source.txt'}",
                            f"--reference={tmp_path / 'reference.txt'}", f"--output_dir={tmp_path / 'out'}",
                            "--beam_size=2", "--num_heatmaps=0", "--noprogress")
    assert translated.returncode == 0 and evaluated.returncode == 0, translated.stderr + evaluated.stderr
    translations = translated.stdout.splitlines()
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text(encoding="utf-8"))["models"]["model"]
    assert metrics["bleu"] == sacrebleu.corpus_bleu(translations, [REFERENCES]).score  # the same search
    assert _lines(tmp_path / "out" / "model" / "translations.txt") == translations
    assert metrics["shortlist"] == "model's (2 per source word, 1 frequent)"
    assert "| shortlist: model's (2 per source word, 1 frequent)" in evaluated.stdout
    assert f"`{metrics['checkpoint']}` | model's (2 per source word, 1 frequent) |" in (
        tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    whole = BatchTranslator.from_model_dir(directory, beam_size=2, shortlist=False).translate(SOURCES)
    full_vocabulary_bleu = sacrebleu.corpus_bleu([result["translation"] for result in whole], [REFERENCES]).score
    assert full_vocabulary_bleu != metrics["bleu"]  # the shortlist changes the score: what evaluate searched shows


# large: a model trained for the purpose (tests/helpers/trained_toy_model.py) and fresh processes; the parts run in
# the default suite (tests/test_decoding_model.py, the tiny int8 export in tests/test_export.py)
@pytest.mark.large
def test_evaluate_quantize_int8_scores_what_translate_quantize_int8_outputs(trained_toy_model, toy_data,
                                                                           tmp_path_factory, tmp_path):
    source, reference = (DataDir(toy_data).text_file("dev", side) for side in ("source", "target"))
    evaluated = run_command("evaluate", f"--model_dir={trained_toy_model}", f"--source={source}",
                            f"--reference={reference}", f"--output_dir={tmp_path / 'out'}", "--quantize=int8",
                            "--beam_size=2", "--num_heatmaps=0", "--noprogress")
    assert evaluated.returncode == 0, evaluated.stderr
    by_command = translated(tmp_path_factory, trained_toy_model, toy_data, "int8")
    translations = [record["translation"] for record in by_command]
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text(encoding="utf-8"))["models"]
    (name, scores), = metrics.items()
    assert _lines(tmp_path / "out" / name / "translations.txt") == translations  # rnnsearch translate --quantize=int8
    references = _lines(pathlib.Path(reference))
    assert scores["bleu"] == sacrebleu.corpus_bleu(translations, [references]).score


def test_command_line_names_both_files_when_their_lines_differ_or_there_are_none(tmp_path):
    """Checked before any model loads: the model directory here is never reached."""
    (tmp_path / "source.txt").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "reference.txt").write_text("c\n", encoding="utf-8")
    result = run_command("evaluate", f"--model_dir={tmp_path / 'no_model'}", f"--source={tmp_path / 'source.txt'}",
                         f"--reference={tmp_path / 'reference.txt'}", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and result.stderr == (
        f"error: --reference {tmp_path / 'reference.txt'} has 1 line but --source {tmp_path / 'source.txt'} has 2: "
        "give one reference line per source line\n")
    assert not (tmp_path / "out").exists()
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    empty = run_command("evaluate", f"--model_dir={tmp_path / 'no_model'}", f"--source={tmp_path / 'empty.txt'}",
                        f"--reference={tmp_path / 'empty.txt'}", f"--output_dir={tmp_path / 'out'}")
    assert empty.returncode == 1 and empty.stderr == (
        f"error: --source {tmp_path / 'empty.txt'} has no lines: nothing to evaluate (--help lists the flags)\n")


def test_a_negative_number_of_heatmaps_is_refused(tmp_path):
    """--num_heatmaps=-1 drew a heatmap for every sentence; refused before any model loads."""
    (tmp_path / "source.txt").write_text("a\n", encoding="utf-8")
    result = run_command("evaluate", f"--model_dir={tmp_path / 'no_model'}", f"--source={tmp_path / 'source.txt'}",
                         f"--reference={tmp_path / 'source.txt'}", f"--output_dir={tmp_path / 'out'}",
                         "--num_heatmaps=-1")
    assert result.returncode == 1 and "flag --num_heatmaps=-1: " in result.stderr and not (tmp_path / "out").exists()


def test_every_model_is_checked_before_any_is_decoded(model_dir, tmp_path):
    """A mistake in the last model (an ensemble of different vocabularies, a checkpoint it lacks) was found after
    the first had been decoded in full, and no report was written: now nothing is decoded and nothing written."""
    other = tmp_path / "other"
    shutil.copytree(model_dir, other)
    vocabulary = ModelDir(other).vocabulary_file("source")
    pathlib.Path(vocabulary).write_text(pathlib.Path(vocabulary).read_text(encoding="utf-8") + "extra\t1\n",
                                        encoding="utf-8")
    averaged = tmp_path / "averaged"
    shutil.copytree(model_dir, averaged)
    shutil.copytree(averaged / "checkpoints", averaged / "averaged")  # an averaged checkpoint (`rnnsearch average`)
    (tmp_path / "source.txt").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    (tmp_path / "reference.txt").write_text("\n".join(REFERENCES) + "\n", encoding="utf-8")
    files = (f"--source={tmp_path / 'source.txt'}", f"--reference={tmp_path / 'reference.txt'}",
             f"--output_dir={tmp_path / 'out'}", "--beam_size=1", "--noprogress")
    result = run_command("evaluate", f"--model_dir={model_dir},{model_dir}+{other}", *files)
    assert result.returncode == 1 and result.stderr.splitlines()[-1] == (
        f"error: {ModelDir(model_dir).vocabulary_file('source')} and {vocabulary} differ: the models of an ensemble "
        "must be trained on the same data directory")
    assert not (tmp_path / "out").exists()
    result = run_command("evaluate", f"--model_dir={averaged},{model_dir}", "--checkpoint=averaged", *files)
    assert result.returncode == 1 and result.stderr.splitlines()[-1].startswith(
        f"error: no checkpoint in {ModelDir(model_dir).averaged_checkpoint_dir}: run `rnnsearch average")
    assert not (tmp_path / "out").exists()


def _test_files(tmp_path):
    (tmp_path / "source.txt").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    (tmp_path / "reference.txt").write_text("\n".join(REFERENCES) + "\n", encoding="utf-8")
    return f"--source={tmp_path / 'source.txt'}", f"--reference={tmp_path / 'reference.txt'}"


def test_num_hypotheses_is_refused_not_ignored(model_dir, tmp_path):
    """evaluate scores each sentence's best translation: --num_hypotheses=5 was accepted, ignored and recorded."""
    result = run_command("evaluate", f"--model_dir={model_dir}", *_test_files(tmp_path),
                         f"--output_dir={tmp_path / 'out'}", "--beam_size=5", "--num_hypotheses=5")
    assert result.returncode == 1 and result.stderr.splitlines() == [
        "error: --num_hypotheses is not read by evaluate: it scores each sentence's best translation (rnnsearch "
        "translate --output_format=nbest writes the n-best lists) (--help lists the flags)"]
    assert not (tmp_path / "out").exists()


def test_an_output_dir_that_cannot_be_written_is_named_before_any_decoding(model_dir, tmp_path):
    """A file as --output_dir (or as a model's folder in it) was found once the first model had been decoded."""
    files = (*_test_files(tmp_path), "--beam_size=1", "--num_heatmaps=0", "--noprogress")
    (tmp_path / "a_file").write_text("mine\n", encoding="utf-8")
    result = run_command("evaluate", f"--model_dir={model_dir}", *files, f"--output_dir={tmp_path / 'a_file'}")
    assert result.returncode == 1 and result.stderr.splitlines() == [
        f"error: --output_dir={tmp_path / 'a_file'}: {tmp_path / 'a_file'} is a file, not a folder"]
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "second").write_text("mine\n", encoding="utf-8")
    second = tmp_path / "second"
    shutil.copytree(model_dir, second)
    result = run_command("evaluate", f"--model_dir={model_dir},{second}", *files, f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and result.stderr.splitlines() == [
        f"error: --output_dir={tmp_path / 'out' / 'second'}: {tmp_path / 'out' / 'second'} is a file, not a folder"]
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["second"]  # the first was not decoded


def test_another_checkpoint_keeps_the_best_ones_results_and_an_average_is_described(model_dir, tmp_path):
    """docs/results.md's recipe evaluated --checkpoint=averaged into the best checkpoint's --output_dir, and the
    model's folder, deleting its results; an average recorded nothing of what it averaged."""
    directory = tmp_path / "model"
    shutil.copytree(model_dir, directory)
    averaged = run_command("average", f"--model_dir={directory}", "--source=latest", "--count=3")
    assert averaged.returncode == 0, averaged.stderr
    record = read_averaging(ModelDir(directory))
    latest = os.path.join(ModelDir(directory).checkpoint_dir, "ckpt-1")
    assert record == dict(checkpoint=os.path.join(ModelDir(directory).averaged_checkpoint_dir, "ckpt-1"),
                          source="latest", count=1, checkpoints=[dict(path=latest, step=1)])
    files = (*_test_files(tmp_path), f"--output_dir={tmp_path / 'out'}", "--beam_size=1", "--num_heatmaps=0",
             "--noprogress")
    for checkpoint in ("best", "averaged"):
        result = run_command("evaluate", f"--model_dir={directory}", *files, f"--checkpoint={checkpoint}")
        assert result.returncode == 0, result.stderr
    by_model = {name: json.loads((tmp_path / "out" / name / "metrics.json").read_text(encoding="utf-8"))
                for name in ("model", "model_averaged")}
    assert by_model["model"]["checkpoint"] == latest and by_model["model"]["averaged"] is None
    assert by_model["model_averaged"]["checkpoint"] == record["checkpoint"]
    assert by_model["model_averaged"]["averaged"] == record
    report = json.loads((tmp_path / "out" / "metrics.json").read_text(encoding="utf-8"))
    assert list(report["models"]) == ["model_averaged"]  # the run's own report: the recipe gives each its folder


def test_the_summary_leaves_out_the_unk_replaced_score_of_a_model_without_attention():
    """evaluate gives a model without attention no "UNK replaced" BLEU (None): bench.results_summary rounded it."""
    metrics = dict(bleu=39.4214, bleu_no_unk=44.281, no_unk_sentences=774, bleu_unk_replaced=None,
                   bleu_by_length=[dict(bleu=57.111), dict(bleu=None)], chrf=60.004)
    assert results_summary.test_set_scores(metrics) == dict(bleu=39.42, bleu_no_unk=44.28, no_unk_sentences=774,
                                                            bleu_by_length=[57.11, None], chrf=60.0)



def test_models_of_a_variety_and_its_language_translate_one_pair(tmp_path):
    """A model of --target_language=cmn data and one of "zh" translate one pair (`languages.same_language`): one
    --reference scores both; they were refused as different pairs. A Japanese one still is."""
    for target in ("cmn", "zh", "ja"):
        (tmp_path / target).mkdir()
        (tmp_path / target / "data.json").write_text(json.dumps({"source_language": "en", "target_language": target}))
    files = (*_test_files(tmp_path), f"--output_dir={tmp_path / 'out'}", "--noprogress")
    result = run_command("evaluate", f"--model_dir={tmp_path / 'cmn'},{tmp_path / 'zh'}", *files)
    # past the check, evaluate goes on to read the models, which these folders lack
    assert result.returncode == 1 and "different language pairs" not in result.stderr, result.stderr
    result = run_command("evaluate", f"--model_dir={tmp_path / 'cmn'},{tmp_path / 'ja'}", *files)
    assert result.returncode == 1 and result.stderr.splitlines()[-1].startswith(
        f"error: --model_dir: the models translate different language pairs ({tmp_path / 'cmn'} English (en) -> "
        f"Mandarin Chinese (cmn); {tmp_path / 'ja'} English (en) -> Japanese (ja))"), result.stderr
