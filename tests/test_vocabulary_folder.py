"""data_pipeline/vocabulary_folder.py: the paths of a folder's two vocabulary files, as strings whether the
folder is given as a string or a `pathlib.Path` (what `DataDir` and `ModelDir` inherit), and which of them
differs from another folder's."""

import pytest

from data_pipeline.vocabulary_folder import VocabularyFolder


@pytest.mark.parametrize("as_given", [str, lambda path: path], ids=["string", "pathlib"])
def test_the_two_vocabulary_files_and_any_file_of_the_folder(tmp_path, as_given):
    folder = VocabularyFolder(as_given(tmp_path))
    assert folder.path == str(tmp_path)
    assert folder.source_vocabulary_file == str(tmp_path / "source_vocab.tsv")
    assert folder.target_vocabulary_file == str(tmp_path / "target_vocab.tsv")
    assert folder.file("metadata.json") == str(tmp_path / "metadata.json")


def test_the_first_vocabulary_that_differs_from_another_folders(tmp_path):
    folders = {}
    for name, source, target in (("a", "x\ny\n", "u\n"), ("b", "x\ny\n", "u\n"), ("c", "x\ny\n", "v\n"),
                                 ("d", "y\nx\n", "v\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "source_vocab.tsv").write_text(source)
        (tmp_path / name / "target_vocab.tsv").write_text(target)
        folders[name] = VocabularyFolder(tmp_path / name)
    assert folders["a"].differing_vocabulary(folders["b"]) is None
    assert folders["a"].differing_vocabulary(folders["c"]) == "target"
    assert folders["a"].differing_vocabulary(folders["d"]) == "source"  # the same words in another order
    assert folders["c"].vocabulary_file("target") == str(tmp_path / "c" / "target_vocab.tsv")
