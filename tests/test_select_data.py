"""`rnnsearch select-data`: the pairs of a general corpus most like an in-domain one, written for build-data."""

import csv
import gzip
import itertools
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO_ROOT
from data_pipeline.data_selection import random_ranking
from helpers.commands import run_command


def _run(*args):
    return run_command("select-data", *args)


def _write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as out:
        out.writelines(line + "\n" for line in lines)


def _corpora(tmp_path):
    """In-domain captions (gzip) and a general corpus of news with three captions mixed in."""
    animals, places = ("dog", "cat", "horse", "bird"), ("park", "beach", "street", "field")
    captions = [(f"A {a} runs in the {p}.", f"Un {a}fr court dans le {p}fr.")
                for a, p in itertools.product(animals, places)]
    captions.append(("A zebra sleeps.", "Un zèbre dort."))
    nouns = ("bank", "market", "government", "minister", "court")
    news = [(f"The {a} said the {b} would raise taxes.", f"Le {a}fr a dit que le {b}fr augmenterait les impôts.")
            for a, b in itertools.permutations(nouns, 2)]
    mixed = news[:4] + [captions[1]] + news[4:12] + [captions[6]] + news[12:] + [captions[11]]
    _write(tmp_path / "in.en.gz", [s for s, _ in captions[:16:2] + captions[16:]])
    _write(tmp_path / "in.fr.gz", [t for _, t in captions[:16:2] + captions[16:]])
    _write(tmp_path / "general.en", [s for s, _ in mixed])
    _write(tmp_path / "general.fr", [t for _, t in mixed])
    return mixed, {captions[1], captions[6], captions[11]}


def _files(tmp_path, *extra):
    return (f"--in_domain_source={tmp_path / 'in.en.gz'}", f"--in_domain_target={tmp_path / 'in.fr.gz'}",
            f"--general_source={tmp_path / 'general.en'}", f"--general_target={tmp_path / 'general.fr'}",
            "--order=2", "--unk_cutoff=1", "--source_language=en", "--target_language=fr", *extra)


def test_the_command_keeps_the_captions_within_max_words_in_aligned_files(tmp_path):
    mixed, held_out_captions = _corpora(tmp_path)
    result = _run(*_files(tmp_path, "--max_words=42", f"--output_dir={tmp_path / 'out'}"))  # 3 captions of 7 + 7
    assert result.returncode == 0, result.stderr[-2000:]
    english = (tmp_path / "out/train.en").read_text(encoding="utf-8").splitlines()
    french = (tmp_path / "out/train.fr").read_text(encoding="utf-8").splitlines()
    assert set(zip(english, french)) == held_out_captions and len(english) == 3
    summary = json.loads((tmp_path / "out/selection.json").read_text())
    assert (summary["kept_pairs"], summary["kept_words"], summary["general"]["read"]) == (3, 42, len(mixed))
    with open(tmp_path / "out/scores.tsv", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream, delimiter="\t"))
    assert len(rows) == len(mixed) and [row["kept"] for row in rows[:4]] == ["1", "1", "1", "0"]
    assert [(row["source"], row["target"]) for row in rows[:3]] == list(zip(english, french))
    differences = [float(row["cross_entropy_difference"]) for row in rows]
    assert differences == sorted(differences)
    for row in rows:
        terms = float(row["h_in_source"]) - float(row["h_general_source"]) + float(row["h_in_target"]) - float(
            row["h_general_target"])
        assert float(row["cross_entropy_difference"]) == pytest.approx(terms, abs=1e-3)
    assert f"kept 3 of {len(mixed)} pairs (42 of" in result.stdout


# large: three fresh processes; the default suite keeps within max words and seeds the random ranking in-process
# (tests/test_data_selection.py) and runs the command in the other tests here
@pytest.mark.large
def test_max_words_is_respected_and_random_ranking_is_seeded(tmp_path):
    _corpora(tmp_path)
    result = _run(*_files(tmp_path, "--max_words=41", "--side=source", f"--output_dir={tmp_path / 'out'}"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert len((tmp_path / "out/train.en").read_text().splitlines()) == 2
    kept = []
    for run in ("random1", "random2"):
        result = _run(*_files(tmp_path, "--max_words=60", "--ranking=random", f"--output_dir={tmp_path / run}"))
        assert result.returncode == 0, result.stderr[-2000:]
        kept.append((tmp_path / run / "train.en").read_text())
        summary = json.loads((tmp_path / run / "selection.json").read_text())
        assert 0 < summary["kept_words"] <= 60 and summary["ranking"] == "random"
    assert kept[0] == kept[1]


def test_bad_input_is_one_line_naming_the_files(tmp_path):
    _corpora(tmp_path)
    _write(tmp_path / "general.fr", ["Un.", "Deux."])
    result = _run(*_files(tmp_path, "--max_words=40", f"--output_dir={tmp_path / 'out'}"))
    assert result.returncode == 1 and "line counts differ" in result.stderr
    assert f"{tmp_path / 'general.fr'} has 2 lines" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    _write(tmp_path / "general.fr", ["", ""])
    _write(tmp_path / "general.en", ["One.", ""])
    result = _run(*_files(tmp_path, "--max_words=40", f"--output_dir={tmp_path / 'out'}"))
    assert result.returncode == 1 and f"no sentence pairs in {tmp_path / 'general.en'}" in result.stderr
    result = _run("--in_domain_corpus=multi30k_enfr:nope", f"--general_source={tmp_path / 'general.en'}",
                  f"--general_target={tmp_path / 'general.en'}", f"--data_dir={tmp_path}", "--max_words=4",
                  "--source_language=en", "--target_language=fr", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and "has no split 'nope'" in result.stderr
    result = _run(f"--general_source={tmp_path / 'general.en'}", "--max_words=4", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and "--general_source and --general_target go together" in result.stderr
    result = _run(f"--general_source={tmp_path / 'general.en'}", f"--general_target={tmp_path / 'general.en'}",
                  "--max_words=4", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and "--in_domain_corpus or --in_domain_source" in result.stderr


def test_text_files_need_their_languages_and_any_code_is_taken(tmp_path):
    _corpora(tmp_path)
    files = [argument for argument in _files(tmp_path) if "_language=" not in argument]
    result = _run(*files, "--max_words=42", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and "--source_language is required with --general_source" in result.stderr
    result = _run(*files, "--source_language=english", "--target_language=fr", "--max_words=42",
                  f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and "flag --source_language=english: not a language code" in result.stderr
    result = _run(*files, "--source_language=de", "--target_language=cs", "--max_words=42",
                  f"--output_dir={tmp_path / 'out'}")  # the languages name the files; any pair is taken
    assert result.returncode == 0, result.stderr[-2000:]
    assert len((tmp_path / "out/train.de").read_text(encoding="utf-8").splitlines()) == 3
    assert (tmp_path / "out/train.cs").exists()


def test_a_gzip_general_corpus_is_written_whole_in_the_seeded_random_order(tmp_path):
    """The general corpus is read in passes (words, then the output in ranking order): from gzip files too, each
    pair once in scores.tsv in the order of the seed's permutation, the kept ones first and in the train files,
    and the lines read counted once."""
    mixed, _ = _corpora(tmp_path)
    _write(tmp_path / "general.en.gz", [source for source, _ in mixed])
    _write(tmp_path / "general.fr.gz", [target for _, target in mixed])
    arguments = [argument.replace("general.en", "general.en.gz").replace("general.fr", "general.fr.gz")
                 for argument in _files(tmp_path)]
    result = _run(*arguments, "--max_words=100", "--ranking=random", "--seed=7", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr[-2000:]
    with open(tmp_path / "out/scores.tsv", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream, delimiter="\t"))
    assert [(row["source"], row["target"]) for row in rows] == [mixed[index] for index in random_ranking(len(mixed), 7)]
    kept = [(row["source"], row["target"]) for row in rows if row["kept"] == "1"]
    assert kept == [(row["source"], row["target"]) for row in rows[: len(kept)]] and 0 < len(kept) < len(mixed)
    english = (tmp_path / "out/train.en").read_text(encoding="utf-8").splitlines()
    french = (tmp_path / "out/train.fr").read_text(encoding="utf-8").splitlines()
    assert list(zip(english, french)) == kept
    summary = json.loads((tmp_path / "out/selection.json").read_text())
    assert summary["general"]["read"] == len(mixed) and summary["kept_pairs"] == len(kept)
    assert summary["general"]["files"] == [str(tmp_path / "general.en.gz"), str(tmp_path / "general.fr.gz")]


def test_an_output_that_is_an_input_or_cannot_be_written_is_refused_before_any_work(tmp_path):
    """A general corpus read from the output folder's own train.<lang> files would be emptied by the writing
    before it is read again; a folder that cannot be made would lose the scoring: both are refused first."""
    _corpora(tmp_path)
    general = (tmp_path / "general.en").read_text(encoding="utf-8")
    arguments = [argument.replace("general.", "out/train.") for argument in _files(tmp_path, "--max_words=42")]
    (tmp_path / "out").mkdir()
    for language in ("en", "fr"):
        (tmp_path / f"general.{language}").rename(tmp_path / "out" / f"train.{language}")
    result = _run(*arguments, f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and result.stderr.strip().splitlines()[-1] == (
        f"error: --output_dir={tmp_path / 'out'}: its train.en is the input {tmp_path / 'out/train.en'}, which "
        "writing it would empty: give another folder")
    assert (tmp_path / "out/train.en").read_text(encoding="utf-8") == general
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["train.en", "train.fr"]
    (tmp_path / "afile").write_text("", encoding="utf-8")
    result = _run(*arguments, f"--output_dir={tmp_path / 'afile/sub'}")
    assert result.returncode == 1 and result.stderr.strip().splitlines()[-1] == (
        f"error: --output_dir={tmp_path / 'afile/sub'}: {tmp_path / 'afile'} is a file, not a folder")


def test_languages_other_than_a_registered_corpus_are_refused(tmp_path):
    _corpora(tmp_path)
    result = _run("--in_domain_corpus=multi30k_deen:train", f"--general_source={tmp_path / 'general.en'}",
                  f"--general_target={tmp_path / 'general.fr'}", "--source_language=en", "--target_language=fr",
                  f"--data_dir={tmp_path}", "--max_words=4", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and result.stderr.strip().splitlines()[-1].startswith(
        "error: --source_language=en but corpus multi30k_deen's is 'de': leave the flag out")
    assert not (tmp_path / "out").exists()


def test_a_registered_corpus_and_text_files_of_its_language_variety_are_one_direction(tmp_path):
    """tatoeba_enzh (en -> zh) in-domain and general text files of --target_language=cmn: Mandarin is Chinese
    (`languages.same_language`), as the flags' check against the registered corpus already took it; it was
    refused as another direction. The output files are named after the general corpus's codes."""
    chinese = [(f"I see {n} cats.", f"我看到{'一二三四五六七八九十'[n]}只猫。") for n in range(10)]
    _write(tmp_path / "data/tatoeba/cmn-eng.tsv.gz", [f"{english}\t{mandarin}" for english, mandarin in chinese * 4])
    _write(tmp_path / "general.en", [english for english, _ in chinese] + ["The market fell."])
    _write(tmp_path / "general.cmn", [mandarin for _, mandarin in chinese] + ["市场下跌了。"])
    result = _run("--in_domain_corpus=tatoeba_enzh:train", f"--general_source={tmp_path / 'general.en'}",
                  f"--general_target={tmp_path / 'general.cmn'}", "--source_language=en", "--target_language=cmn",
                  f"--data_dir={tmp_path / 'data'}", "--max_words=4", "--order=2", "--unk_cutoff=1",
                  f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "out/train.en").exists() and (tmp_path / "out/train.cmn").exists()


def test_a_selection_killed_while_it_writes_leaves_the_previous_one_whole(tmp_path):
    """The outputs are written under temporary names and renamed when all are written: a run killed (kill -9)
    once it has started writing leaves the previous selection's files as they were, its record too."""
    _write(tmp_path / "in.en", ["A dog runs in the park."] * 2)
    _write(tmp_path / "in.fr", ["Un chien court dans le parc."] * 2)
    _write(tmp_path / "general.en", [f"The bank {i} said the market would rise." for i in range(30_000)])
    _write(tmp_path / "general.fr", [f"La banque {i} a dit que le marché monterait." for i in range(30_000)])
    previous = {name: f"the previous selection's {name}\n" for name in ("train.en", "train.fr", "scores.tsv",
                                                                         "selection.json")}
    (tmp_path / "out").mkdir()
    for name, text in previous.items():
        (tmp_path / "out" / name).write_text(text, encoding="utf-8")
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    command = [sys.executable, "-m", "rnnsearch_tf.cli.main", "select-data", f"--in_domain_source={tmp_path / 'in.en'}",
               f"--in_domain_target={tmp_path / 'in.fr'}", f"--general_source={tmp_path / 'general.en'}",
               f"--general_target={tmp_path / 'general.fr'}", "--source_language=en", "--target_language=fr",
               "--ranking=random", "--max_words=100000", f"--output_dir={tmp_path / 'out'}"]
    process = subprocess.Popen(command, env=environment, cwd=REPO_ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        def writing():  # the writing pass has begun: under a temporary name, or (as before) in train.en itself
            return ((tmp_path / "out/.train.en.incomplete").exists()
                    or (tmp_path / "out/train.en").read_text(encoding="utf-8") != previous["train.en"])

        deadline = time.monotonic() + 120
        while not writing() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        assert process.poll() is None, "the command ended before it was seen writing"
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    assert {name: (tmp_path / "out" / name).read_text(encoding="utf-8") for name in previous} == previous


def test_scores_tsv_is_plain_tab_separated_text_with_the_sentences_as_read(tmp_path):
    """A sentence with quotes is written as train.* holds it, not quoted and doubled as CSV writes it."""
    mixed, _ = _corpora(tmp_path)
    mixed[0] = ('"Quoted," he said.', 'Il a dit « oui » et "non".')
    _write(tmp_path / "general.en", [source for source, _ in mixed])
    _write(tmp_path / "general.fr", [target for _, target in mixed])
    result = _run(*_files(tmp_path, "--max_words=1000", f"--output_dir={tmp_path / 'out'}"))
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line.split("\t") for line in (tmp_path / "out/scores.tsv").read_text(encoding="utf-8").splitlines()]
    assert rows[0] == ["rank", "kept", "cross_entropy_difference", "h_in_source", "h_general_source", "h_in_target",
                       "h_general_target", "source", "target"]
    assert sorted(tuple(row[-2:]) for row in rows[1:]) == sorted(mixed) and {len(row) for row in rows} == {9}
    english = (tmp_path / "out/train.en").read_text(encoding="utf-8").splitlines()
    assert '"Quoted," he said.' in english
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == sorted(
        ["train.en", "train.fr", "scores.tsv", "selection.json"])  # no temporary file left
