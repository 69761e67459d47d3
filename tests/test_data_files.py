"""data_pipeline/data_files.py: resolve finds a corpus file under the data folder (or its uncompressed
copy, or an absolute path), else extracts it from its archive in the data folder (WMT'14's archives as a
user downloads them: tgz members, gzip inside a tar, SGML), else downloads it from a real local archive
(tar, zip, gzip, SGML) when allowed, keeping the archive for its other files, and names the path, the
archive, the setting and the URL when it cannot; data_root_from_environment."""

import gzip
import io
import tarfile
import zipfile

import pytest

from conftest import REPO_ROOT
from data_pipeline import CorpusFile
from data_pipeline import corpus_registry
from data_pipeline import MissingDataError
from data_pipeline import data_files
from helpers.wmt14_archives import corpus_files
from helpers.wmt14_archives import write_wmt14_archives


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


def test_a_missing_file_of_a_users_own_path_is_named_by_that_path_alone(tmp_path, monkeypatch):
    for data_root in (tmp_path / "data", None):  # not looked for in the data folder, so not said to be
        with pytest.raises(MissingDataError) as missing:
            data_files.resolve(CorpusFile(str(tmp_path / "nope.de")), data_root, allow_download=True)
        assert str(missing.value) == f"missing corpus file {tmp_path}/nope.de"
    monkeypatch.chdir(tmp_path)  # a relative --train_source is taken from the working folder
    corpus = corpus_registry.text_file_corpus("de", "en", {"train": ("nope.de", "nope.en")})
    with pytest.raises(MissingDataError, match=rf"^missing corpus file {tmp_path.resolve()}/nope.de$"):
        data_files.resolve(corpus.splits["train"][0].source, tmp_path / "data", allow_download=False)


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
def test_an_archive_without_the_member_names_archive_and_member_and_leaves_only_the_archive(tmp_path, kind):
    other = _write(tmp_path / "other.en", ["Hello ."])
    archive_path = tmp_path / f"dev.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive_path, "w") as archive:
            archive.write(other, arcname="dev/other.en")
    else:
        with tarfile.open(archive_path, "w:gz") as archive:
            archive.add(other, arcname="dev/other.en")
    corpus_file = CorpusFile("wmt14/newstest.en.gz", url=archive_path.as_uri(), member="dev/newstest.en")
    kept = tmp_path / "data" / "wmt14" / archive_path.name  # downloaded, kept under its own name
    with pytest.raises(MissingDataError) as missing:
        data_files.resolve(corpus_file, tmp_path / "data", allow_download=True)
    assert str(missing.value) == f"{kept} holds no file dev/newstest.en"
    assert list((tmp_path / "data" / "wmt14").iterdir()) == [kept]  # no partial file, no scratch folder


def test_a_directory_member_of_a_tar_is_no_file(tmp_path):
    (tmp_path / "dev").mkdir()
    with tarfile.open(tmp_path / "dev.tgz", "w:gz") as archive:
        archive.add(tmp_path / "dev", arcname="dev")
    corpus_file = CorpusFile("wmt14/dev.en.gz", url=(tmp_path / "dev.tgz").as_uri(), member="dev")
    with pytest.raises(MissingDataError, match=r"dev.tgz holds no file dev$"):
        data_files.resolve(corpus_file, tmp_path / "data", allow_download=True)


def _lines_of(corpus_file):
    """Two lines per WMT'14 file that name it (accents and SGML's spaces around a segment included)."""
    return [f"{corpus_file.path} première ligne .", f"  {corpus_file.member} line two  "]


def _expected_lines(corpus_file):
    lines = _lines_of(corpus_file)
    return [line.strip() for line in lines] if corpus_file.sgml else lines


@pytest.mark.parametrize("folder", ["wmt14", "."])
def test_every_wmt14_file_is_read_from_the_archives_a_user_downloads_then_from_the_extracted_files(tmp_path, folder):
    data = tmp_path / "data"
    archives = write_wmt14_archives(data / folder, _lines_of)
    assert sorted(archives) == [
        "dev.tgz", "test-full.tgz", "training-giga-fren.tar", "training-parallel-commoncrawl.tgz",
        "training-parallel-europarl-v7.tgz", "training-parallel-nc-v9.tgz", "training-parallel-un.tgz",
    ]
    for corpus_file in corpus_files():  # tgz members, gzip members of a tar, SGML members
        path = data_files.resolve(corpus_file, data, allow_download=False)
        assert path == data / corpus_file.path  # cached where the registry expects it
        assert gzip.decompress(path.read_bytes()).decode().splitlines() == _expected_lines(corpus_file)
    for archive in archives.values():
        archive.unlink()
    for corpus_file in corpus_files():  # the extracted layout alone
        path = data_files.resolve(corpus_file, data, allow_download=False)
        assert gzip.decompress(path.read_bytes()).decode().splitlines() == _expected_lines(corpus_file)
    assert sorted(path.name for path in (data / "wmt14").iterdir()) == sorted(
        corpus_file.path.split("/")[1] for corpus_file in corpus_files())  # no scratch file left


def test_a_member_missing_from_a_local_archive_is_named_with_the_archive(tmp_path):
    archives = write_wmt14_archives(tmp_path / "wmt14", _lines_of)
    newstest2011 = CorpusFile("wmt14/newstest2011.en.gz", "https://www.statmt.org/wmt14/dev.tgz", "dev/newstest2011.en")
    with pytest.raises(MissingDataError) as missing:
        data_files.resolve(newstest2011, tmp_path, allow_download=True)  # the local archive, never the URL
    assert str(missing.value) == f"{archives['dev.tgz']} holds no file dev/newstest2011.en"
    assert sorted((tmp_path / "wmt14").iterdir()) == sorted(archives.values())


def test_a_missing_wmt14_file_names_its_archive_and_where_it_was_looked_for(tmp_path):
    europarl = corpus_registry.WMT14_ENFR.splits["train"][0].source
    with pytest.raises(MissingDataError) as missing:
        data_files.resolve(europarl, tmp_path, allow_download=False)
    assert str(missing.value) == (
        f"missing corpus file {tmp_path}/wmt14/europarl-v7.fr-en.en.gz: expected under the data folder "
        f"(RNNSEARCH_DATA={tmp_path}), or its archive training-parallel-europarl-v7.tgz (member "
        f"training/europarl-v7.fr-en.en) in {tmp_path}/wmt14 or {tmp_path}; downloads are off (--allow_download); "
        "get it from https://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz"
    )


def test_an_archive_two_files_share_is_downloaded_once(tmp_path):
    published = write_wmt14_archives(tmp_path / "statmt", _lines_of)["dev.tgz"]
    newstest2012 = corpus_registry.WMT14_ENFR.splits["dev"][0]
    source, target = (CorpusFile(f.path, published.as_uri(), f.member) for f in newstest2012.files)
    data = tmp_path / "data"
    assert data_files.resolve(source, data, allow_download=True) == data / "wmt14" / "newstest2012.en.gz"
    assert (data / "wmt14" / "dev.tgz").read_bytes() == published.read_bytes()  # kept under its own name
    published.unlink()  # the URL now fails: the second file must come from the kept archive
    path = data_files.resolve(target, data, allow_download=True)
    assert gzip.decompress(path.read_bytes()).decode().splitlines() == _lines_of(newstest2012.target)


def test_a_truncated_archive_is_named_in_one_line(tmp_path):
    archive = write_wmt14_archives(tmp_path / "wmt14", _lines_of)["training-parallel-europarl-v7.tgz"]
    archive.write_bytes(archive.read_bytes()[:60])
    europarl = corpus_registry.WMT14_ENFR.splits["train"][0].source
    with pytest.raises(ValueError, match=rf"^{archive}: .*\(reading training/europarl-v7.fr-en.en: a truncated or "
                                         r"corrupt archive; download it again\)$"):
        data_files.resolve(europarl, tmp_path, allow_download=False)
    assert not (tmp_path / "wmt14" / "europarl-v7.fr-en.en.gz").exists()


def test_a_truncated_gzip_member_of_a_tar_is_named_and_not_kept(tmp_path):
    giga_fren = corpus_registry.WMT14_ENFR.splits["train"][4].source
    member = gzip.compress("Bonjour .\n".encode() * 1000)[:-20]  # its end cut off
    info = tarfile.TarInfo(giga_fren.member)
    info.size = len(member)
    with tarfile.open(tmp_path / "training-giga-fren.tar", "w") as archive:
        archive.addfile(info, io.BytesIO(member))
    with pytest.raises(ValueError, match=rf"^{tmp_path}/training-giga-fren.tar: .*\(reading "
                                         r"giga-fren.release2.fixed.en.gz: a truncated or corrupt archive"):
        data_files.resolve(giga_fren, tmp_path, allow_download=False)
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["training-giga-fren.tar", "wmt14"]


def test_data_root_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNSEARCH_DATA", str(tmp_path / "corpora"))
    assert data_files.data_root_from_environment() == tmp_path / "corpora"  # named, even if not made yet
    assert data_files.data_root_from_environment(str(tmp_path / "given")) == tmp_path / "given"  # --data_dir first
    monkeypatch.setenv("RNNSEARCH_DATA", "")
    monkeypatch.setattr(data_files, "DEFAULT_DATA_ROOT", tmp_path / "absent")
    assert data_files.data_root_from_environment() is None
    monkeypatch.delenv("RNNSEARCH_DATA")
    monkeypatch.setattr(data_files, "DEFAULT_DATA_ROOT", tmp_path)
    assert data_files.data_root_from_environment() == tmp_path


def test_the_default_data_root_is_shared_data_beside_the_checkout():
    assert data_files.DEFAULT_DATA_ROOT == REPO_ROOT.parent / "shared" / "data"
