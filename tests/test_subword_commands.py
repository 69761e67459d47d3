"""Every command on a subword (SentencePiece) model, run as users run it: each reads the model's text codec.
A command that tokenized on its own (Moses words, or whitespace) would give other tokens than the
`sentencepiece` library's pieces these tests expect, and a detokenizer of its own would leave "▁" in the text."""

import json
import os
import shutil
import sys

import numpy as np
import pytest
import sentencepiece

from conftest import REPO_ROOT, fresh_python
from data_pipeline.constants import EOS_TOKEN
from data_pipeline.export_dir import MODEL_SERVER_TF_TEXT_OPS, ExportVersion, graph_ops
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.translator import Translator
from serving.model_manager import ModelManager
from serving.page import Page
from serving.servable import Servable
from helpers.serving_test_utils import write_model_dir
from helpers.subword_test_data import (RARE_SENTENCE, SEARCH_FLAGS, subword_export, subword_model_dir,
                                      write_subword_model_dir)
from helpers.toy_translation import build_toy_data, write_corpus
from helpers import preimported

SOURCES = ["The big cat sleeps .", RARE_SENTENCE, "", "A small red car waits with the old dog ."]
TARGETS = ["Le grand chat dort .", "La famille Brakkenfeld a visité Tromsø en 1961.", "", "La voiture attend ."]


@pytest.fixture(scope="module")
def subwords(tmp_path_factory):
    """(data_dir, model_dir, the `sentencepiece` processor of their codec)."""
    data_dir, model_dir = subword_model_dir(tmp_path_factory)
    return data_dir, model_dir, sentencepiece.SentencePieceProcessor(model_file=str(data_dir / "spm.model"))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    return subword_export(tmp_path_factory)  # by `rnnsearch export`


def _rnnsearch(*args, stdin="", check=True):
    """(stdout, stderr) of `rnnsearch ARGS` in a new process."""
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    result = preimported.run([sys.executable, "-m", "rnnsearch_tf.cli.main", *args], input=stdin.encode(),
                             capture_output=True, env=environment, cwd=REPO_ROOT)
    if check:
        assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode(), result.stderr.decode()


def _pieces(processor, text):
    return processor.encode(text, out_type=str)


def test_build_data_learns_per_language_models_when_asked(tmp_path):
    files = write_corpus(tmp_path / "raw", train_pairs=300)
    stdout, _ = _rnnsearch(
        "build-data", "--corpus=text_files", f"--train_source={files['train'][0]}", f"--train_target={files['train'][1]}",
        "--subwords=sentencepiece", "--subword_model=unigram", "--subword_vocabulary_size=300", "--nojoint_subwords",
        "--source_language=en", "--target_language=fr",
        f"--output_dir={tmp_path / 'data'}")
    metadata = json.loads((tmp_path / "data" / "metadata.json").read_text())
    assert [metadata["codec"][side]["model"] for side in ("source", "target")] == ["source_spm.model",
                                                                                   "target_spm.model"]
    assert "sentencepiece unigram" in stdout and "--subwords=sentencepiece" in (tmp_path / "data" / "flags.txt").read_text()


def test_translate_reads_and_writes_text_through_the_models_pieces(subwords, tmp_path):
    _, model_dir, processor = subwords
    stdout, _ = _rnnsearch("translate", f"--model_dir={model_dir}", "--output_format=alignment", "--noprogress",
                           *SEARCH_FLAGS, stdin="\n".join(SOURCES) + "\n")
    records = [json.loads(line) for line in stdout.splitlines()]
    for record, source in zip(records, SOURCES):
        assert record["source_tokens"] == _pieces(processor, source)
        assert record["translation"] == processor.decode(record["target_tokens"]) and "▁" not in record["translation"]
        if not source:
            continue
        assert record["source_words"] == source.split()
        assert len(record["word_alignment"]) == len(record["target_words"]) + 1  # </s> included
        assert "".join(record["target_words"]) == record["translation"].replace(" ", "")
        np.testing.assert_allclose(np.sum(record["word_alignment"], axis=1), 1.0, atol=1e-5)
    text, _ = _rnnsearch("translate", f"--model_dir={model_dir}", "--noprogress", *SEARCH_FLAGS,
                         stdin="\n".join(SOURCES) + "\n")
    assert text.splitlines() == [record["translation"] for record in records]


def test_a_prefix_typed_as_words_is_forced_as_its_pieces(subwords, tmp_path):
    _, model_dir, processor = subwords
    prefixes = ["Le chat", "La famille Brakkenfeld", "", ""]  # one per line of SOURCES (the third is empty)
    (tmp_path / "prefix.txt").write_text("\n".join(prefixes) + "\n", encoding="utf-8")
    stdout, stderr = _rnnsearch("translate", f"--model_dir={model_dir}", f"--prefix_file={tmp_path / 'prefix.txt'}",
                                "--output_format=alignment", "--replace_unk", "--noprogress", *SEARCH_FLAGS,
                                stdin="\n".join(SOURCES) + "\n")
    for record, prefix in zip([json.loads(line) for line in stdout.splitlines()], prefixes):
        assert record["target_tokens"][: len(_pieces(processor, prefix))] == _pieces(processor, prefix)
        assert record["translation"].startswith(prefix)
    assert "--replace_unk does nothing here: the model's subword vocabulary has no <unk>" in stderr
    translator = Translator.from_model_dir(model_dir, beam_size=2, num_alternatives=5)
    outputs = translator.translate_prefix(["The big cat sleeps ."], ["Le"])
    alternatives = [word.decode("utf-8") for word in outputs["alternatives"].numpy()[0]]
    next_pieces = {" " + piece[1:] if piece.startswith("▁") else piece for piece in
                   (processor.IdToPiece(i) for i in range(processor.GetPieceSize()))} | {EOS_TOKEN}
    assert set(alternatives) <= next_pieces and not any("▁" in word for word in alternatives)


def test_verbatim_and_a_glossary_put_names_numbers_and_terms_into_the_pieces(subwords, tmp_path):
    _, model_dir, _ = subwords
    sources = ["A man named Dreyth waits with 1961 dogs .", "The big cat sleeps .", "Kenythwix sleeps ."]
    (tmp_path / "terms.tsv").write_text("cat\tmatou\n", encoding="utf-8")
    stdout, stderr = _rnnsearch("translate", f"--model_dir={model_dir}", "--verbatim", "--noprogress",
                                f"--terminology={tmp_path / 'terms.tsv'}", *SEARCH_FLAGS,
                                stdin="\n".join(sources) + "\n")
    first, second, third = stdout.splitlines()
    assert "Dreyth" in first and "1961" in first and "matou" in second and "Kenythwix" in third
    assert "The" not in second  # a frequent first word is not a name: one piece
    assert "4 met, 0 not met, 0 skipped" in stderr


def test_a_words_probability_is_the_product_of_its_pieces(subwords):
    _, model_dir, _ = subwords
    translator = Translator.from_model_dir(model_dir, beam_size=2, maximum_source_length=40)
    outputs = {name: value.numpy() for name, value in translator.translate(SOURCES).items()}
    _, word_index = translator.target_codec.words(outputs["tokens"])
    for row, source in enumerate(SOURCES):
        words = [word for word in outputs["words"][row] if word]
        expected = [np.prod(outputs["token_probabilities"][row][word_index[row].numpy() == word])
                    for word in range(len(words))]  # </s> a word of its own
        np.testing.assert_allclose(outputs["word_probabilities"][row][: len(words)], expected, rtol=1e-5)
        np.testing.assert_array_equal(outputs["word_probabilities"][row][len(words):], 0.0)
        assert bool(source) == bool(words)  # an empty line has no words
    stdout, _ = _rnnsearch("translate", f"--model_dir={model_dir}", "--output_format=json", "--noprogress",
                           *SEARCH_FLAGS, stdin="\n".join(SOURCES) + "\n")
    records = [json.loads(line) for line in stdout.splitlines()]
    assert [record["words"][:-1] for record in records if record["tokens"]] == [
        [word.decode() for word in row if word][:-1] for row in outputs["words"] if row[0]]
    assert all(len(record["words"]) == len(record["word_probabilities"]) for record in records if record["tokens"])


def test_score_scores_the_pieces_of_each_target(subwords, tmp_path):
    _, model_dir, processor = subwords
    (tmp_path / "source.txt").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    (tmp_path / "target.txt").write_text("\n".join(TARGETS) + "\n", encoding="utf-8")
    stdout, _ = _rnnsearch("score", f"--model_dir={model_dir}", f"--source={tmp_path / 'source.txt'}",
                           f"--target={tmp_path / 'target.txt'}", "--output_format=json", "--noprogress")
    scores = [json.loads(line) for line in stdout.splitlines()]
    assert [score["tokens"] for score in scores] == [_pieces(processor, target) + [EOS_TOKEN] for target in TARGETS]
    expected = BatchTranslator.from_model_dir(model_dir).score(SOURCES, TARGETS)
    np.testing.assert_allclose([score["log_prob"] for score in scores], [score["log_prob"] for score in expected],
                               rtol=1e-5)


def test_evaluate_bins_by_words_and_has_no_unk_subset(subwords, tmp_path):
    _, model_dir, _ = subwords
    sources, references = SOURCES[:2] + SOURCES[3:], TARGETS[:2] + TARGETS[3:]
    (tmp_path / "source.txt").write_text("\n".join(sources) + "\n", encoding="utf-8")
    (tmp_path / "reference.txt").write_text("\n".join(references) + "\n", encoding="utf-8")
    _rnnsearch("evaluate", f"--model_dir={model_dir}", f"--source={tmp_path / 'source.txt'}",
               f"--reference={tmp_path / 'reference.txt'}", f"--output_dir={tmp_path / 'out'}", "--num_heatmaps=1",
               "--noprogress", *SEARCH_FLAGS)
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text(encoding="utf-8"))["models"]["model"]
    assert metrics["bleu_no_unk"] is None and metrics["no_unk_sentences"] is None
    assert [entry["sentences"] for entry in metrics["bleu_by_length"]][:2] == [2, 1]  # 5, 8 and 10 source words
    assert metrics["longest_sentences"][0]["source_length"] == len(SOURCES[3].split())
    assert not any("▁" in line for line in (tmp_path / "out" / "model" / "translations.txt").read_text().splitlines())
    assert metrics["heatmaps"] == ["alignment_1.png"]


def test_export_uses_model_server_ops_and_translates_as_the_model_dir(subwords, exported):
    _, model_dir, _ = subwords
    version = exported / "1"
    core = set(fresh_python(
        "from tensorflow.core.framework import op_def_pb2\n"
        "from tensorflow.python.client import pywrap_tf_session\n"
        "ops = op_def_pb2.OpList()\n"
        "ops.ParseFromString(pywrap_tf_session.TF_GetBuffer(pywrap_tf_session.TF_GetAllOpList()))\n"
        "print(' '.join(op.name for op in ops.op))\n"))
    ops = graph_ops(ExportVersion(version).read_saved_model())
    assert {"SentencepieceOp", "SentencepieceTokenizeOp", "SentencepieceDetokenizeOp"} <= ops
    assert ops - core - MODEL_SERVER_TF_TEXT_OPS == set()
    by_export, _ = _rnnsearch("translate", f"--saved_model={exported}", "--noprogress", stdin="\n".join(SOURCES) + "\n")
    by_model_dir, _ = _rnnsearch("translate", f"--model_dir={model_dir}", "--noprogress", *SEARCH_FLAGS,
                                 stdin="\n".join(SOURCES) + "\n")
    assert by_export == by_model_dir


def test_the_served_export_answers_words_and_marks_no_piece_unknown(subwords, exported):
    servable = Servable(exported, "subwords")
    outputs = servable.predict("translate", {"text": np.array([RARE_SENTENCE.encode()], object)})
    assert [word.decode() for word in outputs["source_words"][0]] == RARE_SENTENCE.split() + [EOS_TOKEN]
    assert outputs["word_alignment"].shape[1:] == (outputs["words"].shape[1], outputs["source_words"].shape[1])
    assert servable.predict("settings", {})["target_codec"] == b"sentencepiece"
    body = json.dumps({"tokens": [RARE_SENTENCE.split()]}).encode()
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/page/unknown_words", "CONTENT_LENGTH": str(len(body)),
               "wsgi.input": __import__("io").BytesIO(body)}
    answer = json.loads(b"".join(Page(ModelManager.serving(servable))(environ, lambda status, headers: None)))
    assert answer == {"unknown": [[False] * len(RARE_SENTENCE.split())]}


def test_tokenize_prints_the_models_pieces_and_joins_them_back(subwords):
    _, model_dir, processor = subwords
    stdout, _ = _rnnsearch("tokenize", f"--model_dir={model_dir}", stdin="\n".join(SOURCES) + "\n")
    assert stdout.splitlines() == [" ".join(_pieces(processor, source)) for source in SOURCES]
    text, _ = _rnnsearch("tokenize", f"--model_dir={model_dir}", "--side=target", "--detokenize", stdin=stdout)
    assert text.splitlines() == [processor.decode(_pieces(processor, source)) for source in SOURCES]


# large: fresh `shortlist`, `translate` and `evaluate` processes; the default suite runs a subword model's shortlist
# and ensembles in-process (tests/test_shortlist.py, tests/test_ensemble.py)
@pytest.mark.large
def test_shortlist_and_ensembles_of_models_sharing_a_codec(subwords, tmp_path):
    data_dir, model_dir, _ = subwords
    copy = tmp_path / "model"
    shutil.copytree(model_dir, copy)
    _rnnsearch("shortlist", f"--model_dir={copy}")
    over_shortlist = BatchTranslator.from_model_dir(copy, beam_size=2, shortlist=True).translate(SOURCES)
    assert all("▁" not in result["translation"] for result in over_shortlist)
    second = write_subword_model_dir(data_dir, tmp_path / "second", seed=5)
    ensemble = BatchTranslator.from_model_dir(f"{model_dir}+{second}", beam_size=2).translate(SOURCES)
    assert [result["source_tokens"] for result in ensemble] == [
        result["source_tokens"] for result in BatchTranslator.from_model_dir(model_dir).translate(SOURCES)]
    word_level = write_model_dir(tmp_path / "words")
    with pytest.raises(ValueError, match="must be trained on the same data directory"):
        Translator.from_model_dir(f"{model_dir}+{word_level}")


# large: two trainings in fresh processes; the default suite trains on SentencePiece data with `rnnsearch train`
# and translates through the copied codec (tests/test_other_languages.py's Chinese model), and refuses a model
# directory of other data (tests/test_trainer.py; in one line: tests/test_other_languages.py)
@pytest.mark.large
def test_train_copies_the_codec_into_the_model_dir_and_validates_with_it(subwords, tmp_path):
    data_dir, _, _ = subwords
    model_dir = tmp_path / "trained"
    _rnnsearch("train", "--flagfile=configs/tiny.flags", f"--data_dir={data_dir}", f"--model_dir={model_dir}",
               "--train_steps=20", "--validate_every=20", "--dev_bleu_sentences=20", "--attention_sentences=1")
    data_json = json.loads((model_dir / "data.json").read_text())
    assert data_json["codec"] == json.loads((data_dir / "metadata.json").read_text())["codec"]
    assert (model_dir / "spm.model").read_bytes() == (data_dir / "spm.model").read_bytes()
    state = json.loads((model_dir / "training_state.json").read_text())
    assert state["history"][-1]["step"] == 20 and state["history"][-1]["dev_bleu"] >= 0
    words = build_toy_data(tmp_path / "words")  # the same corpus, word-level: other ids
    _, stderr = _rnnsearch("train", "--flagfile=configs/tiny.flags", f"--data_dir={words}", f"--model_dir={model_dir}",
                           "--train_steps=21", check=False)
    assert stderr.strip().splitlines()[-1].startswith(f"error: {model_dir} holds a different model ({model_dir}/model.json")


def test_a_corrupt_or_missing_codec_file_is_one_line_naming_it(subwords, tmp_path):
    _, model_dir, _ = subwords
    copy = tmp_path / "model"
    shutil.copytree(model_dir, copy)
    (copy / "spm.model").write_bytes(b"not a model")
    _, stderr = _rnnsearch("translate", f"--model_dir={copy}", stdin="a cat\n", check=False)
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: {copy / 'spm.model'} is not a SentencePiece model (")
    assert last.endswith("): rebuild the data with `rnnsearch build-data`")
    (copy / "spm.model").unlink()
    _, stderr = _rnnsearch("translate", f"--model_dir={copy}", stdin="a cat\n", check=False)
    assert stderr.strip().splitlines()[-1] == (
        f"error: {copy / 'spm.model'} is missing: the SentencePiece model of this data; rebuild the data with "
        "`rnnsearch build-data`, or copy the file back")
