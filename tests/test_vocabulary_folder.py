"""data_pipeline/vocabulary_folder.py: the paths of a folder's two vocabulary files, as strings whether the
folder is given as a string or a `pathlib.Path` (what `DataDir` and `ModelDir` inherit)."""

import pytest

from data_pipeline.vocabulary_folder import VocabularyFolder


@pytest.mark.parametrize("as_given", [str, lambda path: path], ids=["string", "pathlib"])
def test_the_two_vocabulary_files_and_any_file_of_the_folder(tmp_path, as_given):
    folder = VocabularyFolder(as_given(tmp_path))
    assert folder.path == str(tmp_path)
    assert folder.source_vocabulary_file == str(tmp_path / "source_vocab.tsv")
    assert folder.target_vocabulary_file == str(tmp_path / "target_vocab.tsv")
    assert folder.file("metadata.json") == str(tmp_path / "metadata.json")
