"""data_pipeline/data_files.py: resolve finds a corpus file under the data folder (or its uncompressed
copy, or an absolute path), downloads it from a real local archive (tar, zip, gzip, SGML) when allowed,
and names the path, the setting and the URL when it cannot; data_root_from_environment."""

import gzip
import tarfile
import zipfile

import pytest

from conftest import REPO_ROOT
from data_pipeline import CorpusFile
from data_pipeline import MissingDataError
from data_pipeline import data_files


def _write(path, lines):
    path.write_bytes(b"".join((line.encode() if isinstance(line, str) else line) + b"\n" for line in lines))
    return path


def test_a_directory_given_as_a_file_is_named_so(tmp_path):
    (tmp_path / "train.en").mkdir()
    with pytest.raises(MissingDataError, match=rf"{tmp_path / 'train.en'} is a directory"):
        data_files.resolve(CorpusFile(str(tmp_path / "train.en")), tmp_path, allow_download=False)



def test_missing_file_names_expected_path_and_setting(tmp_path):
    corpus_file = CorpusFile("wmt14/europarl.en.gz", url="https://www.statmt.org/x.tgz", member="x.en")
    with pytest.raises(MissingDataError, match=rf"{tmp_path}/wmt14/europarl.en.gz.*RNNSEARCH_DATA"):
        data_files.resolve(corpus_file, tmp_path, allow_download=False)



def test_uncompressed_copy_is_found(tmp_path):
    (tmp_path / "multi30k").mkdir()
    _write(tmp_path / "multi30k" / "val.en", ["hello"])
    path = data_files.resolve(CorpusFile("multi30k/val.en.gz"), tmp_path, allow_download=False)
    assert path == tmp_path / "multi30k" / "val.en"



def test_download_extracts_archive_member(tmp_path):
    member = _write(tmp_path / "newstest.en", ["Hello .", "World ."])
    with tarfile.open(tmp_path / "dev.tgz", "w:gz") as archive:
        archive.add(member, arcname="dev/newstest.en")
    corpus_file = CorpusFile("wmt14/newstest.en.gz", url=(tmp_path / "dev.tgz").as_uri(), member="dev/newstest.en")
    path = data_files.resolve(corpus_file, tmp_path / "data", allow_download=True)
    assert path == tmp_path / "data" / "wmt14" / "newstest.en.gz"
    assert gzip.decompress(path.read_bytes()) == b"Hello .\nWorld .\n"



def test_download_strips_sgml(tmp_path):
    with zipfile.ZipFile(tmp_path / "test.zip", "w") as archive:
        archive.writestr("t.sgm", '<doc>\n<seg id="1">Un .</seg>\n<seg id="2"> Deux </seg>\n</doc>\n')
    corpus_file = CorpusFile("t.fr", url=(tmp_path / "test.zip").as_uri(), member="t.sgm", sgml=True)
    assert data_files.resolve(corpus_file, tmp_path / "data", allow_download=True).read_text() == "Un .\nDeux\n"



def test_the_compressed_file_is_preferred_to_its_uncompressed_copy(tmp_path):
    _write(tmp_path / "val.en", ["plain"])
    (tmp_path / "val.en.gz").write_bytes(gzip.compress(b"compressed\n"))
    assert data_files.resolve(CorpusFile("val.en.gz"), tmp_path, allow_download=False) == tmp_path / "val.en.gz"
    # a file named without .gz has no other name to look for
    (tmp_path / "val.en").unlink()
    with pytest.raises(MissingDataError, match=rf"missing corpus file {tmp_path}/val.en:"):
        data_files.resolve(CorpusFile("val.en"), tmp_path, allow_download=False)


def test_an_absolute_path_needs_no_data_folder_and_a_relative_one_does(tmp_path):
    path = _write(tmp_path / "mine.en", ["hello"])
    assert data_files.resolve(CorpusFile(str(path)), None, allow_download=False) == path
    with pytest.raises(MissingDataError, match=r"no data folder: set RNNSEARCH_DATA \(or --data_dir\) to the folder "
                                               r"holding multi30k/val.en.gz"):
        data_files.resolve(CorpusFile("multi30k/val.en.gz"), None, allow_download=False)


def test_the_missing_file_message_says_why_it_was_not_downloaded(tmp_path):
    with pytest.raises(MissingDataError) as no_url:
        data_files.resolve(CorpusFile("mine/train.en"), tmp_path, allow_download=True)
    assert str(no_url.value) == (
        f"missing corpus file {tmp_path}/mine/train.en: expected under the data folder "
        f"(RNNSEARCH_DATA={tmp_path}); it has no download URL"
    )
    with pytest.raises(MissingDataError) as downloads_off:
        data_files.resolve(CorpusFile("m/val.en.gz", url="https://example.org/val.en.gz"), tmp_path, False)
    assert str(downloads_off.value).endswith(
        "; downloads are off (--allow_download); get it from https://example.org/val.en.gz"
    )
    assert not (tmp_path / "mine").exists() and not (tmp_path / "m").exists()


def test_download_of_a_gzip_url_is_stored_compressed_or_plain_as_its_path_says(tmp_path):
    (tmp_path / "val.en.gz").write_bytes(gzip.compress(b"A man .\nA dog .\n"))
    url = (tmp_path / "val.en.gz").as_uri()
    kept = data_files.resolve(CorpusFile("multi30k/val.en.gz", url=url), tmp_path / "data", allow_download=True)
    assert kept == tmp_path / "data" / "multi30k" / "val.en.gz"
    assert gzip.decompress(kept.read_bytes()) == b"A man .\nA dog .\n"
    plain = data_files.resolve(CorpusFile("plain/val.en", url=url), tmp_path / "data", allow_download=True)
    assert plain.read_bytes() == b"A man .\nA dog .\n"
    assert sorted(path.name for path in (tmp_path / "data").rglob("*")) == ["multi30k", "plain", "val.en", "val.en.gz"]


def test_download_decompresses_a_gzip_archive_member(tmp_path):
    member = tmp_path / "giga-fren.release2.fixed.en.gz"
    member.write_bytes(gzip.compress(b"Hello .\n"))
    with tarfile.open(tmp_path / "training-giga-fren.tar", "w") as archive:
        archive.add(member, arcname=member.name)
    corpus_file = CorpusFile("wmt14/giga.en.gz", url=(tmp_path / "training-giga-fren.tar").as_uri(), member=member.name)
    path = data_files.resolve(corpus_file, tmp_path / "data", allow_download=True)
    assert gzip.decompress(path.read_bytes()) == b"Hello .\n"


@pytest.mark.parametrize("kind", ["tgz", "zip"])
def test_an_archive_without_the_member_names_url_and_member_and_leaves_nothing(tmp_path, kind):
    other = _write(tmp_path / "other.en", ["Hello ."])
    archive_path = tmp_path / f"dev.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive_path, "w") as archive:
            archive.write(other, arcname="dev/other.en")
    else:
        with tarfile.open(archive_path, "w:gz") as archive:
            archive.add(other, arcname="dev/other.en")
    corpus_file = CorpusFile("wmt14/newstest.en.gz", url=archive_path.as_uri(), member="dev/newstest.en")
    with pytest.raises(MissingDataError, match=rf"{archive_path.as_uri()} holds no file dev/newstest.en"):
        data_files.resolve(corpus_file, tmp_path / "data", allow_download=True)
    assert list((tmp_path / "data" / "wmt14").iterdir()) == []  # no partial file, no scratch folder


def test_a_directory_member_of_a_tar_is_no_file(tmp_path):
    (tmp_path / "dev").mkdir()
    with tarfile.open(tmp_path / "dev.tgz", "w:gz") as archive:
        archive.add(tmp_path / "dev", arcname="dev")
    corpus_file = CorpusFile("wmt14/dev.en.gz", url=(tmp_path / "dev.tgz").as_uri(), member="dev")
    with pytest.raises(MissingDataError, match=r"dev.tgz holds no file dev$"):
        data_files.resolve(corpus_file, tmp_path / "data", allow_download=True)


def test_data_root_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNSEARCH_DATA", str(tmp_path / "corpora"))
    assert data_files.data_root_from_environment() == tmp_path / "corpora"  # named, even if not made yet
    monkeypatch.setenv("RNNSEARCH_DATA", "")
    monkeypatch.setattr(data_files, "DEFAULT_DATA_ROOT", tmp_path / "absent")
    assert data_files.data_root_from_environment() is None
    monkeypatch.delenv("RNNSEARCH_DATA")
    monkeypatch.setattr(data_files, "DEFAULT_DATA_ROOT", tmp_path)
    assert data_files.data_root_from_environment() == tmp_path


def test_the_default_data_root_is_shared_data_beside_the_checkout():
    assert data_files.DEFAULT_DATA_ROOT == REPO_ROOT.parent / "shared" / "data"
