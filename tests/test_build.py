"""`rnnsearch build-data` on the real Multi30k, as users run it."""

import gzip
import json
import os
import re
import sys

from conftest import REPO_ROOT
from helpers import preimported


def test_build_multi30k_leaves_shards_vocabularies_and_metadata(data_root, tmp_path):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT), RNNSEARCH_DATA=str(data_root))
    completed = preimported.run(
        [
            sys.executable, "-m", "rnnsearch_tf.cli.main", "build-data",
            "--flagfile=configs/data/multi30k.flags", f"--output_dir={tmp_path}",
        ],
        check=True, capture_output=True, env=environment, cwd=REPO_ROOT, text=True,
    )
    summary = completed.stdout.strip()
    assert "\n" not in summary and summary.startswith(f"built {tmp_path}: train ")
    assert summary.endswith(f"{tmp_path}/metadata.json"), summary
    metadata = json.loads((tmp_path / "metadata.json").read_text())
    train = metadata["splits"]["train"]
    assert train["read"] == 29000
    assert train["kept"] + sum(train["dropped"].values()) == 29000
    assert sum(shard["records"] for shard in train["shards"]) == train["kept"]
    assert [metadata["splits"][split]["read"] for split in ("dev", "test", "test2017")] == [1014, 1000, 1000]
    for shard in train["shards"]:
        assert (tmp_path / shard["file"]).stat().st_size > 0
    for side in ("source", "target"):
        vocabulary = metadata["vocabularies"][side]
        assert vocabulary["size"] == 10004
        assert len((tmp_path / vocabulary["file"]).read_text().splitlines()) == 10004
        assert vocabulary["coverage"] > 0.95
    assert "--vocabulary_size=10000" in (tmp_path / "flags.txt").read_text()


def test_shortlist_size_is_the_old_name_of_vocabulary_size():
    from absl import flags
    from rnnsearch_tf.cli import build_data

    try:
        flags.FLAGS(["build-data", "--shortlist_size=7", "--corpus=multi30k_enfr", "--output_dir=unused"])
        assert build_data._BUILD_FLAGS["vocabulary_size"].value == 7
    finally:
        flags.FLAGS.unparse_flags()


def _build(*args, data_root=None):
    from helpers.commands import run_command

    return run_command("build-data", *args)


def test_a_pair_none_of_our_files_names_builds_from_text_files(tmp_path):
    swahili = [f"Mbwa {i} anakimbia." for i in range(40)]
    english = [f"Dog {i} runs." for i in range(40)]
    (tmp_path / "train.sw").write_text("".join(line + "\n" for line in swahili), encoding="utf-8")
    (tmp_path / "train.en").write_text("".join(line + "\n" for line in english), encoding="utf-8")
    files = (f"--train_source={tmp_path / 'train.sw'}", f"--train_target={tmp_path / 'train.en'}")
    result = _build("--corpus=text_files", *files, "--num_shards=1", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and result.stderr.strip().endswith(
        "error: --source_language is required with --corpus=text_files")
    result = _build("--corpus=text_files", *files, "--num_shards=1", "--source_language=sw", "--target_language=en",
                    f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr[-2000:]
    metadata = json.loads((tmp_path / "out/metadata.json").read_text())
    assert (metadata["source_language"], metadata["target_language"]) == ("sw", "en")
    assert metadata["codec"]["source"]["language"] == "sw" and metadata["splits"]["train"]["kept"] == 40


def test_bad_languages_are_refused_in_one_line_before_anything_is_read(tmp_path):
    result = _build("--corpus=text_files", "--train_source=x", "--train_target=y", "--source_language=zz",
                    "--target_language=en", f"--output_dir={tmp_path}")
    assert result.returncode == 1 and "flag --source_language=zz: not a language code" in result.stderr
    result = _build("--corpus=tatoeba_zhen", f"--output_dir={tmp_path / 'zh'}")  # words for Chinese
    assert result.returncode == 1 and result.stderr.strip().splitlines()[-1] == (
        "error: corpus tatoeba_zhen's source language='zh': Chinese is written without spaces between words, so it "
        "has no Moses words: build its data with --subwords=sentencepiece")
    result = _build("--corpus=multi30k_deen", "--source_language=en", f"--output_dir={tmp_path / 'de'}")
    assert result.returncode == 1 and ("--source_language=en but corpus multi30k_deen's is 'de'" in
                                       result.stderr.splitlines()[-1])
    assert not (tmp_path / "zh").exists() and not (tmp_path / "de").exists()


def test_a_downloaded_tatoeba_file_builds_either_way(tmp_path):
    lines = [f"Hello {i}.\tHallo {i}.\tCC-BY 2.0 (France) Attribution: tatoeba.org #{i}" for i in range(300)]
    (tmp_path / "deu.txt").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    result = _build("--corpus=tatoeba_file", f"--tatoeba_file={tmp_path / 'deu.txt'}", "--source_language=de",
                    "--target_language=en", "--num_shards=1", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr[-2000:]
    metadata = json.loads((tmp_path / "out/metadata.json").read_text())
    assert (metadata["source_language"], metadata["target_language"]) == ("de", "en")
    assert metadata["corpus"] == "tatoeba_file"  # as the user named it, not a registered corpus's name
    test_sources = (tmp_path / "out" / metadata["splits"]["test"]["text_files"]["source"]).read_text().splitlines()
    assert test_sources and all(line.startswith("Hallo") for line in test_sources)


def _last_line(result):
    return result.stderr.strip().splitlines()[-1]


def test_a_split_file_without_its_pair_is_refused_in_one_line(tmp_path):
    languages = ("--corpus=text_files", "--source_language=de", "--target_language=en")
    for given, missing in (("train_source", "train_target"), ("dev_target", "dev_source")):
        result = _build(*languages, f"--{given}={tmp_path / 'x'}", f"--output_dir={tmp_path / 'out'}")
        assert result.returncode == 1 and _last_line(result) == f"error: --{missing} is required with --{given}"
    assert not (tmp_path / "out").exists()


def test_flags_the_build_would_not_read_are_refused_naming_them(tmp_path):
    (tmp_path / "deu.txt").write_text("Hello.\tHallo.\n", encoding="utf-8")
    for arguments, message in (
        (("--corpus=multi30k_csen", f"--train_source={tmp_path}/a", f"--train_target={tmp_path}/b"),
         "--train_source, --train_target are only read with --corpus=text_files, not --corpus=multi30k_csen: leave "
         "them out"),
        (("--corpus=tatoeba_file", f"--tatoeba_file={tmp_path}/deu.txt", f"--dev_source={tmp_path}/a",
          "--source_language=de", "--target_language=en"),
         "--dev_source is only read with --corpus=text_files, not --corpus=tatoeba_file: leave it out"),
        (("--corpus=text_files", f"--tatoeba_file={tmp_path}/deu.txt", f"--train_source={tmp_path}/a",
          f"--train_target={tmp_path}/b", "--source_language=de", "--target_language=en"),
         "--tatoeba_file is only read with --corpus=tatoeba_file, not --corpus=text_files: leave it out"),
        (("--corpus=multi30k_csen", "--subword_vocabulary_size=4000", "--nojoint_subwords"),
         "--subword_vocabulary_size, --joint_subwords are only read with --subwords: leave them out"),
        (("--corpus=multi30k_csen", "--subword_model=unigram"),
         "--subword_model is only read with --subwords: leave it out"),
    ):
        result = _build(*arguments, f"--output_dir={tmp_path / 'out'}")
        assert result.returncode == 1 and _last_line(result) == f"error: {message}", result.stderr[-2000:]
    assert not (tmp_path / "out").exists()


def test_a_flagfile_a_build_wrote_builds_again_and_a_users_missing_file_is_named_alone(tmp_path):
    english = [f"Dog {i} runs." for i in range(40)]
    (tmp_path / "train.de").write_text("".join(f"Hund {i} rennt.\n" for i in range(40)), encoding="utf-8")
    (tmp_path / "train.en").write_text("".join(line + "\n" for line in english), encoding="utf-8")
    files = (f"--train_source={tmp_path / 'train.de'}", f"--train_target={tmp_path / 'train.en'}")
    languages = ("--corpus=text_files", "--source_language=de", "--target_language=en")
    result = _build(*languages, *files, "--num_shards=1", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr[-2000:]
    result = _build(f"--flagfile={tmp_path / 'out/flags.txt'}")  # every flag at its value, the subword ones too
    assert result.returncode == 0, result.stderr[-2000:]
    result = _build(*languages, f"--train_source={tmp_path / 'nope.de'}", files[1], f"--output_dir={tmp_path / 'o'}")
    assert result.returncode == 1 and _last_line(result) == f"error: missing corpus file {tmp_path / 'nope.de'}"


def test_a_subword_vocabulary_too_small_for_the_text_names_the_size_it_needs(tmp_path):
    characters = [chr(0x4E00 + i) for i in range(100)]
    lines = ["".join(characters[i:i + 10]) for i in range(0, 100, 10)] * 5
    (tmp_path / "train.zh").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    (tmp_path / "train.en").write_text("".join(f"Line {i}.\n" for i in range(len(lines))), encoding="utf-8")
    result = _build("--corpus=text_files", "--source_language=zh", "--target_language=en",
                    f"--train_source={tmp_path / 'train.zh'}", f"--train_target={tmp_path / 'train.en'}",
                    "--subwords=sentencepiece", "--subword_vocabulary_size=300", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and "Traceback" not in result.stderr and re.fullmatch(
        r"error: --subword_vocabulary_size=300 is too small for this text: its characters and the reserved, byte "
        r"and digit pieces need at least \d{3}", _last_line(result)), result.stderr[-2000:]


def _build_in(folder, *args, environment=None):
    """build-data run from the working folder `folder`, with `environment`'s variables added."""
    variables = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT), **(environment or {}))
    return preimported.run([sys.executable, "-m", "rnnsearch_tf.cli.main", "build-data", *args],
                           capture_output=True, text=True, env=variables, cwd=folder, timeout=300)


def test_flags_txt_builds_again_from_any_folder_its_paths_absolute_and_the_corpus_folder_named(tmp_path):
    """Relative paths as typed and the corpus folder of $RNNSEARCH_DATA: flags.txt holds them absolute, and the
    corpus folder as --data_dir, so that --flagfile=DIR/flags.txt builds the same from another folder."""
    (tmp_path / "data" / "multi30k").mkdir(parents=True)
    for split in ("train", "val", "test_2016_flickr", "test_2017_flickr"):
        for language, word in (("en", "Dog"), ("fr", "Chien")):
            with gzip.open(tmp_path / "data" / "multi30k" / f"{split}.{language}.gz", "wt", encoding="utf-8") as out:
                out.writelines(f"{word} {i} runs .\n" for i in range(5))
    (tmp_path / "work").mkdir()
    (tmp_path / "empty").mkdir()
    result = _build_in(tmp_path / "work", "--corpus=multi30k_enfr", "--num_shards=1", "--output_dir=built",
                       environment={"RNNSEARCH_DATA": "../data"})
    assert result.returncode == 0, result.stderr[-2000:]
    written = (tmp_path / "work/built/flags.txt").read_text(encoding="utf-8").splitlines()
    assert f"--output_dir={tmp_path / 'work/built'}" in written and f"--data_dir={tmp_path / 'data'}" in written
    assert "--corpus=multi30k_enfr" in written and not any(line.startswith("--test_") for line in written)
    again = _build_in(REPO_ROOT, f"--flagfile={tmp_path / 'work/built/flags.txt'}",
                      environment={"RNNSEARCH_DATA": str(tmp_path / "empty")})
    assert again.returncode == 0, again.stderr[-2000:]
    metadata = json.loads((tmp_path / "work/built/metadata.json").read_text())
    assert metadata["inputs"][0]["path"] == str(tmp_path / "data/multi30k/train.en.gz")
    (tmp_path / "work/t.en").write_text("Dog runs .\n", encoding="utf-8")
    (tmp_path / "work/t.fr").write_text("Chien court .\n", encoding="utf-8")
    result = _build_in(tmp_path / "work", "--corpus=text_files", "--source_language=en", "--target_language=fr",
                       "--train_source=t.en", "--train_target=t.fr", "--num_shards=1", "--output_dir=mine")
    assert result.returncode == 0, result.stderr[-2000:]
    written = (tmp_path / "work/mine/flags.txt").read_text(encoding="utf-8").splitlines()
    assert f"--train_source={tmp_path / 'work/t.en'}" in written and f"--output_dir={tmp_path / 'work/mine'}" in written
    again = _build_in(REPO_ROOT, f"--flagfile={tmp_path / 'work/mine/flags.txt'}")
    assert again.returncode == 0, again.stderr[-2000:]


def test_text_files_without_training_files_and_an_output_folder_that_cannot_be_made_are_named(tmp_path):
    (tmp_path / "d.en").write_text("Dog runs .\n", encoding="utf-8")
    (tmp_path / "d.fr").write_text("Chien court .\n", encoding="utf-8")
    result = _build("--corpus=text_files", "--source_language=en", "--target_language=fr",
                    f"--dev_source={tmp_path / 'd.en'}", f"--dev_target={tmp_path / 'd.fr'}",
                    f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and _last_line(result) == (
        "error: --corpus=text_files needs --train_source and --train_target: the training text the vocabularies are "
        "learned from")
    if os.path.isdir("/proc/self"):  # Linux: no folder can be made in /proc, whoever asks
        result = _build("--corpus=text_files", "--source_language=en", "--target_language=fr",
                        f"--train_source={tmp_path / 'd.en'}", f"--train_target={tmp_path / 'd.fr'}",
                        "--output_dir=/proc/x")
        assert result.returncode == 1 and _last_line(result) == (
            "error: --output_dir=/proc/x cannot be written: no folder can be made in /proc")
    assert not (tmp_path / "out").exists()
