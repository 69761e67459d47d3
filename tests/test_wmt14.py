"""WMT'14 En-Fr (`wmt14_enfr`) end to end from the archives a user downloads, as users run it: a data folder
holding the registry's seven archives (five training corpora, dev.tgz with newstest2012/2013, test-full.tgz
with the SGML newstest2014) made of real Multi30k and newstest sentences at test time, then
`rnnsearch build-data --flagfile=configs/data/wmt14_enfr.flags`, two updates of
`--flagfile=configs/rnnsearch50.flags` (the paper's model, unchanged) and `rnnsearch evaluate` on the SGML
test set. Minutes of the paper's model on a CPU: `large`. The archive reading itself is tested in
test_data_files.py (default suite)."""

import gzip
import json
import os
import sys

import pytest

from conftest import REPO_ROOT
from helpers.wmt14_archives import corpus_files
from helpers.wmt14_archives import write_wmt14_archives
from helpers import preimported

TRAIN_PAIRS_PER_CORPUS = 60  # x 5 corpora: more pairs than configs/data/wmt14_enfr.flags has shards (256)
DEV_PAIRS_PER_YEAR = 20
TEST_PAIRS = 16


def _read_lines(path, count):
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [next(lines).rstrip("\n") for _ in range(count)]


def _fixture_lines(data_root):
    """{registry file path: its lines}: the five training corpora share out Multi30k's first training pairs;
    newstest2012/2013/2014 are the real test sets' first lines."""
    multi30k = {side: _read_lines(data_root / "multi30k" / f"train.{side}.gz", 5 * TRAIN_PAIRS_PER_CORPUS)
                for side in ("en", "fr")}
    lines, next_line = {}, {"en": 0, "fr": 0}
    for corpus_file in corpus_files():
        stem, side = corpus_file.path.removesuffix(".gz").rsplit(".", 1)
        if stem.startswith("wmt14/newstest"):
            count = TEST_PAIRS if stem.endswith("2014") else DEV_PAIRS_PER_YEAR
            lines[corpus_file.path] = _read_lines(data_root / f"{stem}.{side}.gz", count)
        else:
            start = next_line[side]
            lines[corpus_file.path] = multi30k[side][start:start + TRAIN_PAIRS_PER_CORPUS]
            next_line[side] += TRAIN_PAIRS_PER_CORPUS
    return lines


def _run(module, *args, data=None):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    if data is not None:
        environment["RNNSEARCH_DATA"] = str(data)
    completed = preimported.run([sys.executable, "-m", module, *args], cwd=REPO_ROOT, env=environment,
                                capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stderr[-4000:]
    return completed


@pytest.mark.large
def test_wmt14_from_its_archives_builds_trains_the_papers_model_and_evaluates_on_sgml_newstest2014(
        data_root, tmp_path):
    lines = _fixture_lines(data_root)
    data = tmp_path / "downloads"
    write_wmt14_archives(data / "wmt14", lambda corpus_file: lines[corpus_file.path])
    built, model, evaluation = tmp_path / "data", tmp_path / "model", tmp_path / "evaluation"

    _run("rnnsearch_tf.cli.main", "build-data", "--flagfile=configs/data/wmt14_enfr.flags", f"--output_dir={built}",
         data=data)
    metadata = json.loads((built / "metadata.json").read_text())
    assert {split: values["read"] for split, values in metadata["splits"].items()} == {
        "train": 5 * TRAIN_PAIRS_PER_CORPUS, "dev": 2 * DEV_PAIRS_PER_YEAR, "test": TEST_PAIRS}
    assert (built / "test.source.txt").read_text(encoding="utf-8").splitlines() == lines["wmt14/newstest2014.en.gz"]
    assert (built / "test.target.txt").read_text(encoding="utf-8").splitlines() == lines["wmt14/newstest2014.fr.gz"]
    assert all((data / corpus_file.path).is_file() for corpus_file in corpus_files())  # extracted once, kept

    trained = _run("rnnsearch_tf.train", "--flagfile=configs/rnnsearch50.flags", f"--data_dir={built}",
                   f"--model_dir={model}", "--train_steps=2", "--validate_every=0", "--checkpoint_every=2")
    assert json.loads(trained.stdout)["step"] == 2
    assert json.loads((model / "model.json").read_text())["config"]["hidden_dim"] == 1000  # the paper's model

    _run("rnnsearch_tf.cli.main", "evaluate", f"--model_dir={model}", f"--source={built / 'test.source.txt'}",
         f"--reference={built / 'test.target.txt'}", f"--output_dir={evaluation}", "--beam_size=2",
         "--noprogress")
    (scores,) = json.loads((evaluation / "metrics.json").read_text(encoding="utf-8"))["models"].values()
    assert scores["sentences"] == TEST_PAIRS == len(lines["wmt14/newstest2014.en.gz"])
    assert 0 <= scores["bleu"] <= 100
    assert scores["checkpoint"].endswith("ckpt-2")
