"""log p(y | x) of given pairs (BatchTranslator.score, `python -m rnnsearch_tf.score`) and n-best rescoring."""

import os
import sys

import numpy as np
import pytest
import tensorflow as tf

from conftest import REPO_ROOT
from data_pipeline.moses_tokenizer import MosesTokenizer
from data_pipeline.vocabulary import Vocabulary
from data_pipeline import constants
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.inference.output_formats import nbest_line, parse_nbest_line
from helpers.commands import run_command
from helpers.serving_test_utils import SENTENCES, write_model_dir
from helpers import preimported

TARGETS = ["le chat voit le grand chien.", "une petite maison verte ?", "", "la zyzzyva voit un chat, le chien voit"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return write_model_dir(tmp_path_factory.mktemp("score") / "model")


def _ids(tokenizer, vocabulary, sentences):
    ids = vocabulary.lookup(tokenizer.tokenize(tf.constant(sentences)))
    with_eos = tf.concat([ids, tf.ragged.constant([[constants.EOS_ID]] * len(sentences))], axis=1)
    return with_eos.to_tensor(default_value=constants.PAD_ID)  # [batch, len + 1]


def test_scores_equal_token_log_probs_of_the_model(model_dir):
    scores = BatchTranslator.from_model_dir(model_dir, batch_size=3).score(SENTENCES, TARGETS)
    model, _ = ModelDir(model_dir).load_model()
    source_ids = _ids(MosesTokenizer("en"), Vocabulary(model_dir / "source_vocab.tsv"), SENTENCES)
    target_ids = _ids(MosesTokenizer("fr"), Vocabulary(model_dir / "target_vocab.tsv"), TARGETS)
    expected = model.token_log_probs(source_ids, target_ids).numpy()  # [batch, tgt_len]
    for row, score in enumerate(scores):
        length = int(np.sum(target_ids[row].numpy() != constants.PAD_ID))
        assert len(score["tokens"]) == len(score["token_log_probs"]) == length
        np.testing.assert_allclose(score["token_log_probs"], expected[row, :length], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(score["log_prob"], expected[row].sum(), rtol=1e-5)
        assert score["tokens"][-1] == constants.EOS_TOKEN
    assert scores[0]["tokens"] == ["le", "chat", "voit", "le", "grand", "chien", ".", "</s>"]
    assert scores[2]["tokens"] == ["</s>"]


def test_mismatched_lengths_are_refused(model_dir):
    with pytest.raises(ValueError, match="2 source sentences but 1 target"):
        BatchTranslator.from_model_dir(model_dir).score(["a", "b"], ["c"])


def _run(args):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    result = preimported.run(
        [sys.executable, "-m", "rnnsearch_tf.score", "--noprogress", *args],
        capture_output=True, env=environment, cwd=REPO_ROOT,
    )
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


def test_command_line_rescores_an_nbest_list(model_dir, tmp_path):
    (tmp_path / "source.txt").write_text("\n".join(SENTENCES[:3]) + "\n", encoding="utf-8")
    hypotheses = {0: ["le chat", "le chien voit"], 2: ["chien", "un chien", "le"]}  # line 1 has no list
    (tmp_path / "in.nbest").write_text(
        "".join(nbest_line(i, text, {"beam_score": [-1.0]}, -1.0) for i, texts in hypotheses.items() for text in texts),
        encoding="utf-8",
    )
    _run([f"--model_dir={model_dir}", f"--source={tmp_path / 'source.txt'}", f"--nbest={tmp_path / 'in.nbest'}",
          f"--output={tmp_path / 'out.nbest'}", f"--best_output={tmp_path / 'best.txt'}", "--weight=0.5"])
    scorer = BatchTranslator.from_model_dir(model_dir)
    rescored = [parse_nbest_line(line) for line in (tmp_path / "out.nbest").read_text(encoding="utf-8").splitlines()]
    best = (tmp_path / "best.txt").read_text(encoding="utf-8").splitlines()
    assert len(best) == 3 and best[1] == ""
    for index, texts in hypotheses.items():
        log_probs = [score["log_prob"] for score in scorer.score([SENTENCES[index]] * len(texts), texts)]
        expected = sorted(zip(texts, log_probs), key=lambda pair: -pair[1])
        entries = [entry for entry in rescored if entry[0] == index]
        assert [entry[1] for entry in entries] == [text for text, _ in expected]
        for (_, _, features, total, alignment), (_, log_prob) in zip(entries, expected):
            assert features["beam_score"] == [-1.0] and alignment is None
            assert features["log_prob"] == [pytest.approx(log_prob, abs=1e-5)]
            assert total == pytest.approx(-1.0 + 0.5 * log_prob, abs=1e-5)
        assert best[index] == expected[0][0]


def test_command_line_quantize_int8_scores_with_the_int8_weights(model_dir, tmp_path):
    (tmp_path / "source.txt").write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    (tmp_path / "target.txt").write_text("\n".join(TARGETS) + "\n", encoding="utf-8")
    output = _run([f"--model_dir={model_dir}", f"--source={tmp_path / 'source.txt'}",
                   f"--target={tmp_path / 'target.txt'}", "--quantize=int8"])
    scored = [float(line) for line in output.splitlines()]
    int8 = [score["log_prob"] for score in BatchTranslator.from_model_dir(model_dir, quantize="int8").score(
        SENTENCES, TARGETS)]
    float32 = [score["log_prob"] for score in BatchTranslator.from_model_dir(model_dir).score(SENTENCES, TARGETS)]
    np.testing.assert_allclose(scored, int8, atol=1e-5)
    assert np.abs(np.array(scored) - float32).max() > 1e-4  # the int8 weights, not the float32 ones


def test_command_line_names_both_files_when_their_lines_differ(tmp_path):
    """The files are read, and their lines matched, before the model loads: the model directory here is never
    reached."""
    (tmp_path / "source.txt").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "target.txt").write_text("c\n", encoding="utf-8")
    result = run_command("score", f"--model_dir={tmp_path / 'no_model'}", f"--source={tmp_path / 'source.txt'}",
                         f"--target={tmp_path / 'target.txt'}")
    assert result.returncode == 1 and result.stderr == (
        f"error: --target {tmp_path / 'target.txt'} has 1 line but --source {tmp_path / 'source.txt'} has 2: give "
        "one target line per source line\n")


def test_command_line_rescores_a_moses_list_keeping_every_value_and_the_word_alignment(model_dir, tmp_path):
    """Moses' n-best format, `id ||| hypothesis ||| features ||| total [||| alignment]`: a feature of several values
    keeps them all and the alignment field is written as read; only `log_prob=` is added."""
    (tmp_path / "source.txt").write_text(SENTENCES[0] + "\n", encoding="utf-8")
    (tmp_path / "in.nbest").write_text(
        "0 ||| le chat ||| LM0= -20.5 TranslationModel0= -1.5 -2.5 -3.5 -4.5 ||| -10.25 ||| 0-0 1-1\n"
        "0 ||| le chien voit ||| LM0= -22.5 TranslationModel0= -1 -2 -3 -4 ||| -11.25\n", encoding="utf-8")
    output = _run([f"--model_dir={model_dir}", f"--source={tmp_path / 'source.txt'}",
                   f"--nbest={tmp_path / 'in.nbest'}", "--weight=0"])
    log_probs = [score["log_prob"] for score in BatchTranslator.from_model_dir(model_dir).score(
        [SENTENCES[0]] * 2, ["le chat", "le chien voit"])]
    assert output.splitlines() == [
        f"0 ||| le chat ||| LM0= -20.500000 TranslationModel0= -1.500000 -2.500000 -3.500000 -4.500000 log_prob= "
        f"{log_probs[0]:.6f} ||| -10.250000 ||| 0-0 1-1",
        f"0 ||| le chien voit ||| LM0= -22.500000 TranslationModel0= -1.000000 -2.000000 -3.000000 -4.000000 "
        f"log_prob= {log_probs[1]:.6f} ||| -11.250000",
    ]


def test_command_line_names_a_bad_nbest_line_and_refuses_json_before_the_model(tmp_path):
    """The n-best list is read, and checked, before the model loads: the model directory here is never reached."""
    (tmp_path / "source.txt").write_text("a\n", encoding="utf-8")
    common = [f"--model_dir={tmp_path / 'no_model'}", f"--source={tmp_path / 'source.txt'}"]
    for line, problem in [("0 ||| le chat ||| a= 1 ||| x", "the total 'x' is not a number"),
                          ("zero ||| le chat ||| a= 1 ||| -1", "the index 'zero' is not a whole number (the 0-based "
                                                               "input line)"),
                          ("5 ||| le chat ||| a= 1 ||| -1", "the n-best list names line 5 (0-based) but --source has "
                                                            "1 line")]:
        (tmp_path / "in.nbest").write_text(f"0 ||| le ||| a= 1 ||| -1\n\n{line}\n", encoding="utf-8")
        result = run_command("score", *common, f"--nbest={tmp_path / 'in.nbest'}")
        assert result.returncode == 1 and result.stderr == f"error: {tmp_path / 'in.nbest'}:3: {problem}\n"
    refused = run_command("score", *common, f"--nbest={tmp_path / 'in.nbest'}", "--output_format=json")
    assert refused.returncode == 1 and refused.stderr.startswith(
        "error: --output_format=json is the format of --target's scores: --nbest writes an n-best list")


def test_command_line_names_the_lines_it_cut_in_every_output_format(model_dir, tmp_path):
    """Sources of 7 and 12 tokens cut to 5 (--maximum_source_length), a target of 9 tokens to 7 (the longest
    translation, 0 * 5 + 8 tokens, less its </s>): named on stderr as `translate` names the sources it cuts."""
    (tmp_path / "source.txt").write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    (tmp_path / "target.txt").write_text("\n".join(TARGETS) + "\n", encoding="utf-8")
    (tmp_path / "in.nbest").write_text(nbest_line(0, TARGETS[0], {"beam_score": [-1.0]}, -1.0) + "\n"
                                       + nbest_line(3, TARGETS[3], {"beam_score": [-1.0]}, -1.0), encoding="utf-8")
    bounds = ["--maximum_source_length=5", "--maximum_length_a=0", "--maximum_length_b=8", "--noprogress"]
    common = [sys.executable, "-m", "rnnsearch_tf.score", f"--model_dir={model_dir}",
              f"--source={tmp_path / 'source.txt'}", *bounds]
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    cut = " target tokens (the longest translation, --maximum_length_a * --maximum_source_length + "
    for kind, output_flags, source_lines, target_lines in [
        ("--target", [f"--target={tmp_path / 'target.txt'}"], "lines 1, 4", "line 4"),
        ("--target", [f"--target={tmp_path / 'target.txt'}", "--output_format=json"], "lines 1, 4", "line 4"),
        ("--nbest", [f"--nbest={tmp_path / 'in.nbest'}"], "lines 1, 4", "line 3"),  # its line 2 is blank
    ]:
        result = preimported.run([*common, *output_flags], capture_output=True, env=environment, cwd=REPO_ROOT)
        stderr = result.stderr.decode()
        assert result.returncode == 0, stderr
        assert f"--source lines cut to their first 5 tokens (--maximum_source_length): {source_lines}\n" in stderr
        assert f"{kind} lines cut to their first 7{cut}--maximum_length_b, less its </s>): {target_lines}\n" in stderr
    scores = BatchTranslator.from_model_dir(model_dir, maximum_source_length=5, maximum_length_a=0,
                                            maximum_length_b=8).score(SENTENCES, TARGETS)
    assert [(score["source_truncated"], score["target_truncated"]) for score in scores] == [
        (True, False), (False, False), (False, False), (True, True)]


def test_the_help_says_a_target_is_scored_over_the_whole_vocabulary(model_dir):
    """score uses no shortlist: a json token is scored as itself, a word outside the vocabulary as `<unk>` (written
    as given); its help (the command's docstring) says so."""
    help_text = " ".join((REPO_ROOT / "rnnsearch_tf" / "cli" / "score.py").read_text(encoding="utf-8").split())
    assert "outside the shortlist" not in help_text
    assert "a word outside the vocabulary is scored as `<unk>`" in help_text
    scorer = BatchTranslator.from_model_dir(model_dir)
    unknown, known = scorer.score([SENTENCES[0]] * 2, ["la zyzzyva", "la <unk>"])
    assert unknown["tokens"] == ["la", "zyzzyva", "</s>"] and known["tokens"] == ["la", "<unk>", "</s>"]
    assert unknown["token_log_probs"] == known["token_log_probs"]
