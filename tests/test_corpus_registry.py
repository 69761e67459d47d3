"""data_pipeline/corpus_registry.py: the registered corpora (languages, splits, the paper's WMT'14 parts,
the Tatoeba hash split) and get_corpus; text_file_corpus makes a user's files a corpus whose pairs read
back."""

import pytest

from data_pipeline import PairReader
from data_pipeline import corpus_registry
from data_pipeline import data_files


def _write(path, lines):
    path.write_bytes(b"".join((line.encode() if isinstance(line, str) else line) + b"\n" for line in lines))
    return path


def test_tatoeba_split_is_disjoint_and_complete(data_root):
    splits = corpus_registry.get_corpus("tatoeba_enfr").splits
    sources, read = {}, 0
    for split, (part,) in splits.items():
        path = data_files.resolve(part.source, data_root, allow_download=False)
        reader = PairReader(part, [path], max_line_chars=10000)
        sources[split] = {source for source, _ in reader}
        read += reader.read
    assert read == 167130  # every line lands in exactly one split
    assert not sources["train"] & sources["test"] and not sources["dev"] & sources["test"]
    assert not sources["train"] & sources["dev"]
    assert 2000 < len(sources["test"]) < len(sources["dev"]) * 2



def test_get_corpus_returns_each_registered_corpus_and_names_the_others():
    multi30k = {f"multi30k_{source}{target}" for source in ("en", "fr", "de", "cs")
                for target in ("en", "fr", "de", "cs") if source != target}
    assert set(corpus_registry.CORPORA) == multi30k | {"tatoeba_enfr", "tatoeba_fren", "tatoeba_enzh", "tatoeba_zhen",
                                                       "wmt14_enfr"}
    assert corpus_registry.get_corpus("wmt14_enfr") is corpus_registry.WMT14_ENFR
    assert corpus_registry.get_corpus("multi30k_enfr") == corpus_registry.MULTI30K_ENFR
    with pytest.raises(ValueError, match=r"unknown corpus 'wmt15'; registered: \['multi30k_csde', .*'wmt14_enfr'\] "
                                         r"\(or use text files\)"):
        corpus_registry.get_corpus("wmt15")


@pytest.mark.parametrize("name", sorted(corpus_registry.CORPORA))
def test_every_corpus_is_named_after_its_direction_with_aligned_files(name):
    corpus = corpus_registry.get_corpus(name)
    assert name.endswith(f"_{corpus.source_language}{corpus.target_language}")
    assert {"train", "dev", "test"} <= set(corpus.splits)
    for parts in corpus.splits.values():
        for part in parts:
            assert all(not file.path.startswith("/") and file.url.startswith("https://") for file in part.files)
            if part.target is not None:  # two files: the same stem, source then target language, from one place
                source, target = f".{corpus.source_language}.", f".{corpus.target_language}."
                assert part.source.path.replace(source, target) == part.target.path
                assert part.target.url in (part.source.url, part.source.url.replace(source, target))
                assert part.source.sgml == part.target.sgml


@pytest.mark.parametrize("name", sorted(name for name in corpus_registry.CORPORA if name.startswith("multi30k")))
def test_every_multi30k_pair_reads_the_same_captions_in_its_languages(data_root, name):
    corpus = corpus_registry.get_corpus(name)
    (part,) = corpus.splits["test"]
    pairs = list(PairReader.of_part(part, data_root, 10000))
    assert len(pairs) == 1000
    english = "en" in (corpus.source_language, corpus.target_language)
    assert ("test2017" in corpus.splits) == ("cs" not in (corpus.source_language, corpus.target_language))
    if english:  # the first caption of test_2016 in English
        assert "A man in an orange hat starring at something." in pairs[0]


def test_tatoeba_splits_hash_the_english_side_so_both_directions_split_alike(data_root):
    english_to_chinese = corpus_registry.get_corpus("tatoeba_enzh").splits["test"][0]
    chinese_to_english = corpus_registry.get_corpus("tatoeba_zhen").splits["test"][0]
    forward = list(PairReader.of_part(english_to_chinese, data_root, 10000))
    backward = list(PairReader.of_part(chinese_to_english, data_root, 10000))
    assert forward == [(english, chinese) for chinese, english in backward] and 200 < len(forward) < 800
    assert any("\u4e00" <= character <= "\u9fff" for character in forward[0][1])  # the Chinese side


def test_a_users_tatoeba_file_pairs_english_with_its_other_column(tmp_path):
    path = _write(tmp_path / "deu.txt", [f"Hello {i}.\tHallo {i}.\tCC-BY 2.0 (France) Attribution: tatoeba.org #{i}"
                                         for i in range(3000)])
    corpus = corpus_registry.tatoeba_file_corpus(path, "de", "en")
    assert (corpus.name, corpus.source_language, corpus.target_language) == ("tatoeba_file", "de", "en")
    assert corpus_registry.tatoeba_file_corpus(path, "zh", "en").name == "tatoeba_file"  # not tatoeba_zhen's name
    read = {split: list(PairReader(part, [path], 1000)) for split, (part,) in corpus.splits.items()}
    assert sum(len(pairs) for pairs in read.values()) == 3000 and read["test"] and read["dev"]
    assert all(source.startswith("Hallo") and target.startswith("Hello") for source, target in read["train"])
    with pytest.raises(ValueError, match="a Tatoeba file pairs English with one other language; got 'de' -> 'fr'"):
        corpus_registry.tatoeba_file_corpus(path, "de", "fr")
    with pytest.raises(ValueError, match="--source_language='german' is not a language code"):
        corpus_registry.tatoeba_file_corpus(path, "german", "en")


def test_a_tatoeba_line_with_one_column_is_named_with_its_line_number(tmp_path):
    path = _write(tmp_path / "cmn.txt", ["Hi.\t嗨。", "Run!", "Stop!\t住手！"])
    (part,) = corpus_registry.tatoeba_file_corpus(path, "en", "zh").splits["train"]
    with pytest.raises(ValueError, match=rf"{path}:2: expected at least 2 tab-separated columns, found 1"):
        list(PairReader(part, [path], 1000))


def test_wmt14_has_the_papers_training_corpora_and_newstest_dev_and_test():
    splits = corpus_registry.WMT14_ENFR.splits
    assert [part.source.path for part in splits["train"]] == [
        "wmt14/europarl-v7.fr-en.en.gz",
        "wmt14/news-commentary-v9.fr-en.en.gz",
        "wmt14/undoc.2000.fr-en.en.gz",
        "wmt14/commoncrawl.fr-en.en.gz",
        "wmt14/giga-fren.release2.fixed.en.gz",
    ]
    assert splits["train"][4].source.member == "giga-fren.release2.fixed.en.gz"  # gzip inside the tar
    assert [part.source.path for part in splits["dev"]] == ["wmt14/newstest2012.en.gz", "wmt14/newstest2013.en.gz"]
    (test,) = splits["test"]
    assert test.source.sgml and test.source.member == "test-full/newstest2014-fren-src.en.sgm"
    assert test.target.member == "test-full/newstest2014-fren-ref.fr.sgm"


def test_wmt14_files_are_the_members_of_the_archives_a_user_downloads():
    members = {}
    for parts in corpus_registry.WMT14_ENFR.splits.values():
        for part in parts:
            for corpus_file in part.files:
                members.setdefault(data_files.archive_name(corpus_file), []).append(corpus_file.member)
    assert members == {
        "training-parallel-europarl-v7.tgz": ["training/europarl-v7.fr-en.en", "training/europarl-v7.fr-en.fr"],
        "training-parallel-nc-v9.tgz": ["training/news-commentary-v9.fr-en.en", "training/news-commentary-v9.fr-en.fr"],
        "training-parallel-un.tgz": ["un/undoc.2000.fr-en.en", "un/undoc.2000.fr-en.fr"],
        "training-parallel-commoncrawl.tgz": ["commoncrawl.fr-en.en", "commoncrawl.fr-en.fr"],
        "training-giga-fren.tar": ["giga-fren.release2.fixed.en.gz", "giga-fren.release2.fixed.fr.gz"],
        "dev.tgz": ["dev/newstest2012.en", "dev/newstest2012.fr", "dev/newstest2013.en", "dev/newstest2013.fr"],
        "test-full.tgz": ["test-full/newstest2014-fren-src.en.sgm", "test-full/newstest2014-fren-ref.fr.sgm"],
    }
    assert data_files.archive_name(corpus_registry.MULTI30K_ENFR.splits["dev"][0].source) is None  # a file URL
    assert data_files.archive_name(corpus_registry.TATOEBA_ENFR.splits["dev"][0].source) == "fra-eng.zip"


def test_tatoeba_buckets_tile_the_thousand_hash_values():
    splits = corpus_registry.TATOEBA_ENFR.splits
    buckets = {split: part.hash_buckets for split, (part,) in splits.items()}
    assert buckets == {"test": (0, 20), "dev": (20, 40), "train": (40, 1000)}
    assert {part.source.member for (part,) in splits.values()} == {"fra.txt"}
    assert all(part.target is None and part.tsv_columns == (0, 1) for (part,) in splits.values())


def test_multi30k_test_splits_are_flickr_2016_and_2017():
    splits = corpus_registry.MULTI30K_ENFR.splits
    assert [parts[0].target.path for parts in splits.values()] == [
        "multi30k/train.fr.gz",
        "multi30k/val.fr.gz",
        "multi30k/test_2016_flickr.fr.gz",
        "multi30k/test_2017_flickr.fr.gz",
    ]
    assert list(splits) == ["train", "dev", "test", "test2017"]


def test_text_file_corpus_resolves_relative_paths_and_its_pairs_read_back(tmp_path, monkeypatch):
    _write(tmp_path / "train.en", ["the cat .", "a dog ."])
    _write(tmp_path / "train.fr", ["le chat .", "un chien ."])
    _write(tmp_path / "dev.en", ["hello"])
    _write(tmp_path / "dev.fr", ["bonjour"])
    monkeypatch.chdir(tmp_path)
    corpus = corpus_registry.text_file_corpus(
        "fr", "en", {"train": ("train.fr", tmp_path / "train.en"), "dev": ("dev.fr", "dev.en")}
    )
    assert (corpus.name, corpus.source_language, corpus.target_language) == ("text_files", "fr", "en")
    (train,) = corpus.splits["train"]
    assert (train.source.path, train.target.path) == (str(tmp_path / "train.fr"), str(tmp_path / "train.en"))
    assert train.source.url is None and train.hash_buckets is None
    monkeypatch.chdir("/")
    read = {}
    for split, (part,) in corpus.splits.items():
        paths = [data_files.resolve(file, None, allow_download=False) for file in part.files]
        read[split] = list(PairReader(part, paths, max_line_chars=100))
    assert read == {"train": [("le chat .", "the cat ."), ("un chien .", "a dog .")], "dev": [("bonjour", "hello")]}
