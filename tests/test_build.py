"""`rnnsearch build-data` on the real Multi30k, as users run it."""

import json
import os
import subprocess
import sys

from conftest import REPO_ROOT


def test_build_multi30k_leaves_shards_vocabularies_and_metadata(data_root, tmp_path):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT), RNNSEARCH_DATA=str(data_root))
    completed = subprocess.run(
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
        assert build_data._VOCABULARY_SIZE.value == 7
    finally:
        flags.FLAGS.unparse_flags()
