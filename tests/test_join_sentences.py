"""`rnnsearch join-sentences`: a long test set written from a registered corpus or from text files."""

import gzip
import json

from helpers.commands import run_command


def _run(*args):
    return run_command("join-sentences", *args)


def _write_gzip(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as stream:
        stream.writelines(line + "\n" for line in lines)


def test_a_registered_test_split_is_joined_into_files_for_evaluate(tmp_path):
    english = [f"A dog number {i} runs in the park." for i in range(1, 10)]  # 9 tokens each
    french = [f"Un chien numéro {i} court dans le parc." for i in range(1, 10)]
    _write_gzip(tmp_path / "data/multi30k/test_2016_flickr.en.gz", english)
    _write_gzip(tmp_path / "data/multi30k/test_2016_flickr.fr.gz", french)
    for split in ("train", "val", "test_2017_flickr"):  # present for the registry, not read
        _write_gzip(tmp_path / f"data/multi30k/{split}.en.gz", ["x"])
        _write_gzip(tmp_path / f"data/multi30k/{split}.fr.gz", ["x"])
    result = _run("--corpus=multi30k_enfr", "--split=test", "--sizes=2,4", f"--data_dir={tmp_path / 'data'}",
                  f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr[-2000:]
    sources = (tmp_path / "out/source.txt").read_text(encoding="utf-8").splitlines()
    targets = (tmp_path / "out/target.txt").read_text(encoding="utf-8").splitlines()
    assert sources[0] == f"{english[0]} {english[1]}" and targets[0] == f"{french[0]} {french[1]}"
    assert sources[-1] == " ".join(english[4:8]) and targets[-1] == " ".join(french[4:8])
    assert (tmp_path / "out/lines.txt").read_text().split() == ["1-2", "3-4", "5-6", "7-8", "1-4", "5-8"]
    summary = json.loads((tmp_path / "out/summary.json").read_text())
    assert summary["pairs_per_size"] == {"2": 4, "4": 2}
    assert summary["pairs_per_source_length"] == {"0-10": 0, "10-20": 4, "20-30": 0, "30-40": 2, "40-50": 0,
                                                  "50-60": 0, "60+": 0}
    assert summary["inputs"][0]["path"].endswith("test_2016_flickr.en.gz")
    assert "wrote 6 pairs from 9" in result.stdout


def test_text_files_and_bad_input(tmp_path):
    (tmp_path / "a.en").write_text("One.\nTwo.\nThree.\n", encoding="utf-8")
    (tmp_path / "a.fr").write_text("Un.\nDeux.\n", encoding="utf-8")
    result = _run(f"--source={tmp_path / 'a.en'}", f"--target={tmp_path / 'a.fr'}", f"--output_dir={tmp_path}/o")
    assert result.returncode == 1 and "--source_language is required with --source" in result.stderr
    languages = ("--source_language=en", "--target_language=fr")
    result = _run(f"--source={tmp_path / 'a.en'}", f"--target={tmp_path / 'a.fr'}", f"--output_dir={tmp_path}/o",
                  *languages)
    assert result.returncode == 1 and "line counts differ" in result.stderr and "a.fr has 2 lines" in result.stderr
    result = _run("--corpus=multi30k_enfr", "--split=nope", f"--data_dir={tmp_path}", f"--output_dir={tmp_path}/o")
    assert result.returncode == 1 and "has no split 'nope'" in result.stderr
    (tmp_path / "a.fr").write_text("Un.\nDeux.\nTrois.\n", encoding="utf-8")
    result = _run(f"--source={tmp_path / 'a.en'}", f"--target={tmp_path / 'a.fr'}", "--sizes=4",
                  f"--output_dir={tmp_path}/o", *languages)
    assert result.returncode == 1 and "too few for sizes [4]" in result.stderr
    result = _run(f"--source={tmp_path / 'a.en'}", f"--target={tmp_path / 'a.fr'}", "--sizes=3",
                  f"--output_dir={tmp_path}/o", *languages)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "o/target.txt").read_text(encoding="utf-8") == "Un. Deux. Trois.\n"


def test_german_and_chinese_sources_are_counted_in_their_own_units(tmp_path):
    german = ["Ein Mann, z.B. ein Koch, kocht.", "Zwei Hunde rennen."]  # 8 and 4 Moses tokens
    chinese = ["我很好。", "你呢？"]  # 4 and 3 characters
    (tmp_path / "a.de").write_text("".join(line + "\n" for line in german), encoding="utf-8")
    (tmp_path / "a.zh").write_text("".join(line + "\n" for line in chinese), encoding="utf-8")
    for source, target, languages, length, unit in (("a.de", "a.zh", ("de", "zh"), 12, "Moses tokens"),
                                                   ("a.zh", "a.de", ("zh", "de"), 7, "characters")):
        result = _run(f"--source={tmp_path / source}", f"--target={tmp_path / target}", "--sizes=2",
                      f"--source_language={languages[0]}", f"--target_language={languages[1]}",
                      f"--output_dir={tmp_path}/out_{source}")
        assert result.returncode == 0, result.stderr[-2000:]
        summary = json.loads((tmp_path / f"out_{source}" / "summary.json").read_text())
        assert summary["source_length"] == f"{unit} of the joined source"
        assert summary["pairs_per_source_length"]["10-20" if length >= 10 else "0-10"] == 1
    # Chinese sentences follow each other without a space, on either side; German ones with one
    assert (tmp_path / "out_a.zh/source.txt").read_text(encoding="utf-8") == "我很好。你呢？\n"
    assert (tmp_path / "out_a.de/target.txt").read_text(encoding="utf-8") == "我很好。你呢？\n"
    assert (tmp_path / "out_a.zh/target.txt").read_text(encoding="utf-8") == " ".join(german) + "\n"


def test_an_output_that_is_an_input_or_cannot_be_written_is_refused_before_any_work(tmp_path):
    (tmp_path / "source.txt").write_text("One.\nTwo.\n", encoding="utf-8")
    (tmp_path / "a.fr").write_text("Un.\nDeux.\n", encoding="utf-8")
    files = (f"--source={tmp_path / 'source.txt'}", f"--target={tmp_path / 'a.fr'}", "--source_language=en",
             "--target_language=fr", "--sizes=2")
    result = _run(*files, f"--output_dir={tmp_path}")
    assert result.returncode == 1 and result.stderr.strip().splitlines()[-1] == (
        f"error: --output_dir={tmp_path}: its source.txt is the input {tmp_path / 'source.txt'}, which writing it "
        "would empty: give another folder")
    assert (tmp_path / "source.txt").read_text(encoding="utf-8") == "One.\nTwo.\n"
    result = _run(*files, f"--output_dir={tmp_path / 'a.fr/joined'}")
    assert result.returncode == 1 and result.stderr.strip().splitlines()[-1] == (
        f"error: --output_dir={tmp_path / 'a.fr/joined'}: {tmp_path / 'a.fr'} is a file, not a folder")


def test_languages_other_than_the_registered_corpus_are_refused(tmp_path):
    result = _run("--corpus=multi30k_enfr", "--source_language=de", f"--data_dir={tmp_path}",
                  f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and "error: --source_language=de but corpus multi30k_enfr's is 'en'" in result.stderr
    assert not (tmp_path / "out").exists()


def test_pairs_with_an_empty_side_are_dropped_named_and_lines_txt_keeps_the_input_lines(tmp_path):
    """s.en's line 3 and t.fr's line 6 are empty: those pairs are dropped before the groups are cut, the printed
    line and summary.json say how many and which lines, and lines.txt names the input files' own lines."""
    (tmp_path / "s.en").write_text("One.\nTwo.\n\nFour.\nFive.\nSix.\nSeven.\n", encoding="utf-8")
    (tmp_path / "t.fr").write_text("Un.\nDeux.\nTrois.\nQuatre.\nCinq.\n\nSept.\n", encoding="utf-8")
    result = _run(f"--source={tmp_path / 's.en'}", f"--target={tmp_path / 't.fr'}", "--source_language=en",
                  "--target_language=fr", "--sizes=1,2,3", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "out/lines.txt").read_text().split() == [
        "1-1", "2-2", "4-4", "5-5", "7-7", "1-2", "4-5", "1-2,4-4"]
    assert (tmp_path / "out/source.txt").read_text(encoding="utf-8").splitlines()[-1] == "One. Two. Four."
    summary = json.loads((tmp_path / "out/summary.json").read_text())
    assert (summary["pairs_read"], summary["sentence_pairs"], summary["pairs"]) == (7, 5, 8)
    assert summary["dropped"] == {"empty_source": 1, "empty_target": 1}
    assert summary["dropped_lines"] == {"empty_source": [f"{tmp_path / 's.en'}:3"],
                                        "empty_target": [f"{tmp_path / 't.fr'}:6"]}
    assert result.stdout.strip().endswith(
        f"; dropped 2 of 7 pairs read: empty_source 1 (first: {tmp_path / 's.en'}:3), empty_target 1 (first: "
        f"{tmp_path / 't.fr'}:6)"), result.stdout


def test_a_size_given_twice_is_refused_in_one_line(tmp_path):
    (tmp_path / "s.en").write_text("One.\nTwo.\n", encoding="utf-8")
    (tmp_path / "t.fr").write_text("Un.\nDeux.\n", encoding="utf-8")
    result = _run(f"--source={tmp_path / 's.en'}", f"--target={tmp_path / 't.fr'}", "--source_language=en",
                  "--target_language=fr", "--sizes=2,2", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1 and result.stderr.strip().splitlines()[-1] == (
        "error: --sizes=2,2: size 2 is given twice: each size's groups are written once (--help lists the flags)")
    assert not (tmp_path / "out").exists()
