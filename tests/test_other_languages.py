"""Every command on models of pairs other than English-French, run as users run them (fresh processes): a German ->
English word-level model, a Chinese -> English and an English -> Chinese SentencePiece model, made from the real
corpora by `build-data` and `train` (`helpers.other_languages`). Each test would fail if its command assumed
English or French: the German source is cut by German Moses rules ("usw." stays one token before a capital, where
English and French rules split it), the English target is joined by English rules ("man's", where French keeps
"man 's"), Chinese is read as the model's pieces, and BLEU is tokenized for the target ("zh" for Chinese)."""

import json
import os
import shutil
import urllib.request

import pytest
import sentencepiece
from sacremoses import MosesDetokenizer, MosesTokenizer

from helpers.model_server import MODEL_NAME, RunningServer
from helpers.other_languages import SEARCH_FLAGS, TRAIN_FLAGS, rnnsearch, run
from helpers.subword_test_data import write_subword_model_dir
from serving.servable import Servable

# "usw." ("etc.") before a capitalised noun: one token by German rules, "usw" "." by English and French ones.
GERMAN = "Ein Mann usw. Hunde sind im Freien."
ENGLISH_PREFIX = "A man's dog"  # English rules: "man" "'s"; French ones: "man'" "s"
CHINESE = ["我爱你。", "他们在哪里？", "为什么是我？"]


def _moses_tokens(text, language):
    return MosesTokenizer(lang=language).tokenize(text, escape=False)


def _records(stdout):
    return [json.loads(line) for line in stdout.splitlines()]


def _post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def _last_error_line(result):
    assert result.returncode == 1, result.stderr
    return result.stderr.strip().splitlines()[-1]


def _training_lines(pair, count):
    """The first `count` source lines the model of `pair` was trained on (`helpers.other_languages`' raw files)."""
    return (pair.data_dir.parent / "raw" / "train.de").read_text(encoding="utf-8").splitlines()[:count]


def test_translate_cuts_german_by_german_rules_and_joins_english_by_english_ones(german_english, tmp_path):
    assert _moses_tokens(GERMAN, "en") == _moses_tokens(GERMAN, "fr") != _moses_tokens(GERMAN, "de")
    lines = [GERMAN] + _training_lines(german_english, 4)  # sentences it knows: no wrong-language warning
    (tmp_path / "input.de").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "prefix.en").write_text(ENGLISH_PREFIX + "\n" * len(lines), encoding="utf-8")
    translated = run("translate", f"--model_dir={german_english.model_dir}", "--output_format=alignment",
                     f"--input={tmp_path / 'input.de'}", f"--prefix_file={tmp_path / 'prefix.en'}", "--noprogress",
                     *SEARCH_FLAGS)
    assert translated.returncode == 0 and "warning" not in translated.stderr, translated.stderr
    records = _records(translated.stdout)
    assert [record["source_tokens"] for record in records] == [_moses_tokens(line, "de") for line in lines]
    assert "usw." in records[0]["source_tokens"]
    tokens = records[0]["target_tokens"]
    assert tokens[:4] == _moses_tokens(ENGLISH_PREFIX, "en") == ["A", "man", "'s", "dog"]
    english, french = (MosesDetokenizer(lang=language).detokenize(tokens) for language in ("en", "fr"))
    assert records[0]["translation"] == english != french
    assert records[0]["translation"].startswith(ENGLISH_PREFIX)
    assert all(record["translation"] == MosesDetokenizer(lang="en").detokenize(record["target_tokens"])
               for record in records)


def test_tokenize_uses_the_models_german_and_english_codecs(german_english):
    model_dir = german_english.model_dir
    cut = rnnsearch("tokenize", f"--model_dir={model_dir}", stdin=GERMAN + "\n")
    assert cut == " ".join(_moses_tokens(GERMAN, "de")) + "\n" == "Ein Mann usw. Hunde sind im Freien .\n"
    english = "A man's dog isn't here."
    tokens = " ".join(_moses_tokens(english, "en"))  # "A man 's dog isn 't here ."
    joined = rnnsearch("tokenize", f"--model_dir={model_dir}", "--side=target", "--detokenize", stdin=tokens + "\n")
    assert joined == english + "\n" != MosesDetokenizer(lang="fr").detokenize(tokens.split()) + "\n"


def test_translate_and_the_export_read_chinese_characters_as_the_models_pieces(chinese_english,
                                                                                chinese_english_export, tmp_path):
    data_dir, model_dir = chinese_english
    processor = sentencepiece.SentencePieceProcessor(model_file=str(data_dir / "spm.model"))
    (tmp_path / "input.zh").write_text("\n".join(CHINESE) + "\n", encoding="utf-8")
    translated = run("translate", f"--model_dir={model_dir}", "--output_format=alignment",
                     f"--input={tmp_path / 'input.zh'}", "--noprogress", *SEARCH_FLAGS)
    records = _records(translated.stdout)
    assert translated.returncode == 0 and len(records) == len(CHINESE) and "warning" not in translated.stderr
    for record, sentence in zip(records, CHINESE):
        assert record["source_tokens"] == processor.encode(sentence, out_type=str)
        assert len(record["source_tokens"]) > 2  # Moses would keep the sentence one word, its mark apart
        assert "".join(record["source_words"]) == sentence
        assert record["translation"] == processor.decode(record["target_tokens"]) and "▁" not in record["translation"]
    by_export = rnnsearch("translate", f"--saved_model={chinese_english_export}", f"--input={tmp_path / 'input.zh'}",
                          "--noprogress")
    assert by_export.split("\n") == [record["translation"] for record in records] + [""]
    servable = Servable(str(chinese_english_export), MODEL_NAME)
    try:
        settings = servable.predict("settings", {})
    finally:
        servable.close()
    assert (settings["source_language"], settings["target_language"]) == (b"zh", b"en")
    assert settings["source_codec"] == settings["target_codec"] == b"sentencepiece"


# large: two fresh `evaluate` processes; the default suite tokenizes BLEU for the target language in-process
# (tests/test_evaluator.py) and refuses models of different pairs (below)
@pytest.mark.large
def test_evaluate_tokenizes_bleu_for_the_target_language(german_english, english_chinese, tmp_path):
    for (data_dir, model_dir), split, tokenizer in ((german_english, "dev", "13a"), (english_chinese, "test", "zh")):
        output_dir = tmp_path / tokenizer
        rnnsearch("evaluate", f"--model_dir={model_dir}", f"--source={data_dir / f'{split}.source.txt'}",
                  f"--reference={data_dir / f'{split}.target.txt'}", f"--output_dir={output_dir}", "--num_heatmaps=1",
                  "--noprogress", *SEARCH_FLAGS)
        metrics = json.loads((output_dir / "metrics.json").read_text(encoding="utf-8"))["models"]["model"]
        assert f"|tok:{tokenizer}|" in metrics["signature"]
        assert f"tok:{tokenizer}|" in (output_dir / "report.md").read_text(encoding="utf-8")
        lines = (data_dir / f"{split}.source.txt").read_text(encoding="utf-8").splitlines()
        translations = (output_dir / "model" / "translations.txt").read_text(encoding="utf-8").split("\n")
        assert metrics["sentences"] == len(lines) == len(translations) - 1


def test_english_sent_to_the_german_model_is_warned_about_naming_both_languages(german_english):
    english = "The cyclist wearing goggles was photographed yesterday near those bridges."
    warned = run("translate", f"--model_dir={german_english.model_dir}", "--noprogress", *SEARCH_FLAGS,
                 stdin=english + "\n")
    assert warned.returncode == 0
    assert ("the model's vocabulary" in warned.stderr and
            "is the input German, the model's source language, and not English?" in warned.stderr)


# large: a fresh server and `translate`; the default suite serves the German export to a browser
# (tests/test_page.py) and starts `rnnsearch serve` fresh (tests/test_local_server.py)
@pytest.mark.large
def test_the_exported_german_model_served_translates_as_its_model_dir(german_english, german_english_export,
                                                                        tmp_path):
    by_model_dir = rnnsearch("translate", f"--model_dir={german_english.model_dir}", "--noprogress", *SEARCH_FLAGS,
                             stdin=GERMAN + "\n")
    server = RunningServer("local_server", german_english_export, tmp_path / "server.log")
    try:
        settings = _post(f"{server.rest_url}/v1/models/{MODEL_NAME}:predict",
                         {"signature_name": "settings", "inputs": {}})["outputs"]
        assert (settings["source_language"], settings["target_language"]) == ("de", "en")
        answer, = _post(f"{server.rest_url}/v1/models/{MODEL_NAME}:predict", {"instances": [GERMAN]})["predictions"]
        assert [token for token in answer["source_tokens"] if token] == _moses_tokens(GERMAN, "de") + ["</s>"]
        client = rnnsearch("client", f"--rest_url={server.rest_url}", f"--model_name={MODEL_NAME}", GERMAN)
        languages = _post(f"{server.rest_url}/page/languages", {"model": MODEL_NAME})
    finally:
        server.stop()
    assert client == by_model_dir == answer["translation"] + "\n"
    assert languages == {"source": {"code": "de", "name": "German"}, "target": {"code": "en", "name": "English"}}


def test_evaluate_refuses_models_of_different_pairs_in_one_line(german_english, chinese_english, tmp_path):
    data_dir = german_english.data_dir
    refused = run("evaluate", f"--model_dir={german_english.model_dir},{chinese_english.model_dir}",
                  f"--source={data_dir / 'dev.source.txt'}", f"--reference={data_dir / 'dev.target.txt'}",
                  f"--output_dir={tmp_path / 'out'}", "--noprogress")
    assert _last_error_line(refused) == (
        f"error: --model_dir: the models translate different language pairs ({german_english.model_dir} German (de) "
        f"-> English (en); {chinese_english.model_dir} Chinese (zh) -> English (en)): --source and --reference are "
        "one pair's text, evaluate each pair's models apart")
    assert not (tmp_path / "out").exists()


def test_training_a_model_dir_on_data_of_another_pair_is_refused_in_one_line(chinese_english, english_chinese,
                                                                             german_english, tmp_path):
    model_dir = tmp_path / "zhen"
    shutil.copytree(chinese_english.model_dir, model_dir)
    other_pair = english_chinese.data_dir  # the same lines the other way round
    resumed = run("train", *TRAIN_FLAGS, f"--data_dir={other_pair}", f"--model_dir={model_dir}", "--train_steps=160")
    assert _last_error_line(resumed) == (
        f"error: {model_dir} translates zh -> en but {other_pair} holds en -> zh: train it on its own language "
        "pair's data, or start a new --model_dir")
    checkpoints = [sorted(os.listdir(folder / "checkpoints")) for folder in (model_dir, chinese_english.model_dir)]
    assert checkpoints[0] == checkpoints[1]  # nothing trained
    copied = run("build-data", "--corpus=text_files", "--source_language=zh", "--target_language=en",
                 f"--train_source={german_english.data_dir / 'dev.source.txt'}",
                 f"--train_target={german_english.data_dir / 'dev.target.txt'}",
                 f"--vocabulary_from={german_english.model_dir}", f"--output_dir={tmp_path / 'data'}")
    assert _last_error_line(copied) == (
        f"error: {german_english.model_dir / 'data.json'}: source_language is 'de' but corpus text_files's is 'zh': "
        "its vocabularies do not fit this corpus")


@pytest.mark.large  # fresh processes and an export: 37 s; the codec, the build and the scores are tested in-process
def test_a_lowercased_build_lowercases_in_every_command_the_export_and_the_scores(german_english, tmp_path):
    raw = german_english.data_dir.parent / "raw"
    data_dir = tmp_path / "data"
    rnnsearch("build-data", "--corpus=text_files", "--source_language=de", "--target_language=en", "--lowercase",
              *(f"--{split}_{side}={raw / f'{split}.{language}'}" for split in ("train", "dev")
                for side, language in (("source", "de"), ("target", "en"))),
              "--subwords=sentencepiece", "--subword_vocabulary_size=600", "--num_shards=1", f"--output_dir={data_dir}")
    model_dir = write_subword_model_dir(data_dir, tmp_path / "model")
    lines = ["EIN MANN MIT EINEM HUT.", "Ein Mann mit einem Hut.", "ein mann mit einem hut."]
    (tmp_path / "input.de").write_text("\n".join(lines) + "\n", encoding="utf-8")
    translated = rnnsearch("translate", f"--model_dir={model_dir}", "--output_format=alignment",
                           f"--input={tmp_path / 'input.de'}", "--noprogress", *SEARCH_FLAGS)
    records = _records(translated)
    assert records[0]["source_tokens"] == records[1]["source_tokens"] == records[2]["source_tokens"]
    assert "".join(records[0]["source_tokens"]).replace("▁", " ").strip() == lines[2]
    assert len({record["translation"] for record in records}) == 1
    rnnsearch("export", f"--model_dir={model_dir}", f"--export_dir={tmp_path / 'exports'}", *SEARCH_FLAGS)
    by_export = rnnsearch("translate", f"--saved_model={tmp_path / 'exports'}", f"--input={tmp_path / 'input.de'}",
                          "--noprogress")
    assert by_export.split("\n") == [records[0]["translation"]] * 3 + [""]
    rnnsearch("evaluate", f"--model_dir={model_dir}", f"--source={data_dir / 'dev.source.txt'}",
              f"--reference={data_dir / 'dev.target.txt'}", f"--output_dir={tmp_path / 'scores'}", "--num_heatmaps=0",
              "--noprogress", *SEARCH_FLAGS)
    metrics = json.loads((tmp_path / "scores" / "metrics.json").read_text(encoding="utf-8"))["models"]["model"]
    assert "|case:lc|" in metrics["signature"] and "case:lc" in metrics["signatures"]["chrf"]
