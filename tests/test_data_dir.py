"""data_pipeline/data_dir.py: DataDir file names, read_metadata, and check_shards naming the missing,
extra or changed shard of a real data directory."""

import glob
import json
import shutil

import pytest

from data_pipeline import CorruptShardError
from data_pipeline.constants import EOS_ID
from data_pipeline.data_dir import DataDir
from helpers.shard_test_data import write_shards


@pytest.fixture
def data_dir(tmp_path):
    """Three train shards of six pairs, listed with their sha256 in metadata.json."""
    pairs = [([10 + i, EOS_ID], [20 + i, EOS_ID]) for i in range(6)]
    write_shards(tmp_path, pairs, num_shards=3, metadata=True)
    return DataDir(tmp_path)


def test_file_names_of_the_layout(tmp_path):
    data_dir = DataDir(tmp_path)
    assert DataDir.shard_name("train", 3, 8) == "train-00003-of-00008.tfrecord.gz"
    assert DataDir.text_name("test2017", "target") == "test2017.target.txt"
    assert data_dir.text_file("dev", "source") == str(tmp_path / "dev.source.txt")
    assert data_dir.metadata_file == str(tmp_path / "metadata.json")
    assert data_dir.shard_pattern("dev") == str(tmp_path / "dev-*.tfrecord.gz")
    assert (data_dir.source_vocabulary_file, data_dir.target_vocabulary_file) == (
        str(tmp_path / "source_vocab.tsv"), str(tmp_path / "target_vocab.tsv"),
    )


def test_shard_pattern_matches_every_shard_name_and_no_other_split(data_dir, tmp_path):
    assert sorted(glob.glob(data_dir.shard_pattern("train"))) == [
        str(tmp_path / DataDir.shard_name("train", index, 3)) for index in range(3)
    ]
    assert glob.glob(data_dir.shard_pattern("dev")) == []


def test_read_metadata_round_trips_and_a_missing_file_says_how_to_build_it(data_dir, tmp_path):
    assert data_dir.read_metadata() == json.loads((tmp_path / "metadata.json").read_text())
    with pytest.raises(FileNotFoundError, match=rf"{tmp_path}/other/metadata.json is missing: --data_dir must be "
                                                r"the --output_dir of `rnnsearch build-data`"):
        DataDir(tmp_path / "other").read_metadata()


def test_a_missing_folder_names_the_earlier_build_a_killed_build_data_left_beside_it(data_dir, tmp_path):
    replaced = tmp_path / ".other.replaced"
    assert DataDir.replaced_folder(tmp_path / "other") == str(replaced)
    assert DataDir.replaced_folder(f"{tmp_path / 'other'}/") == str(replaced)
    replaced.mkdir()
    with pytest.raises(FileNotFoundError, match=rf"`rnnsearch build-data` \(a build-data killed while replacing "
                                                rf"it left the earlier build in {replaced}: move it back, or build "
                                                r"again\)"):
        DataDir(tmp_path / "other").read_metadata()


def test_test_splits_are_the_others_than_train_and_dev_in_order(data_dir, tmp_path):
    assert data_dir.test_splits() == []  # train only
    metadata = json.loads((tmp_path / "metadata.json").read_text())
    metadata["splits"] = dict(train=metadata["splits"]["train"], dev={}, test={}, test2017={})
    (tmp_path / "metadata.json").write_text(json.dumps(metadata))
    assert data_dir.test_splits() == ["test", "test2017"]


def test_records_are_the_pairs_listed_for_a_splits_shards(data_dir):
    assert data_dir.records("train") == 6


def test_check_shards_accepts_the_shards_as_built(data_dir):
    data_dir.check_shards(["train"])
    data_dir.check_shards([])


def test_check_shards_names_a_split_metadata_does_not_have(data_dir, tmp_path):
    with pytest.raises(CorruptShardError, match=rf"{tmp_path}/metadata.json has no split 'dev'; it has \['train'\]"):
        data_dir.check_shards(["train", "dev"])


def test_check_shards_names_a_missing_shard(data_dir, tmp_path):
    (tmp_path / "train-00001-of-00003.tfrecord.gz").unlink()
    with pytest.raises(CorruptShardError, match=rf"lists 3 train shards and {tmp_path}/train-00001-of-00003"
                                                r".tfrecord.gz is missing: rebuild"):
        data_dir.check_shards(["train"])


def test_check_shards_names_a_shard_not_listed(data_dir, tmp_path):
    shutil.copy(tmp_path / "train-00000-of-00003.tfrecord.gz", tmp_path / "train-00000-of-00004.tfrecord.gz")
    with pytest.raises(CorruptShardError, match=rf"{tmp_path}/train-00000-of-00004.tfrecord.gz is not listed there"):
        data_dir.check_shards(["train"])


def test_check_shards_names_a_changed_shard(data_dir, tmp_path):
    shard = tmp_path / "train-00002-of-00003.tfrecord.gz"
    shard.write_bytes(shard.read_bytes() + b"\0")
    with pytest.raises(CorruptShardError, match=rf"corrupt TFRecord shard {shard}"):
        data_dir.check_shards(["train"])
