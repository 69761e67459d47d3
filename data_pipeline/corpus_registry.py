"""The named corpora: WMT'14 En-Fr (the paper's), Multi30k task 1 in every pair of its languages, Tatoeba
files of manythings.org (registered: French and Chinese, each way; any other one a user downloads), and a
user's own files."""

import itertools
import pathlib

from data_pipeline import languages
from data_pipeline.corpus_file import CorpusFile
from data_pipeline.corpus_part import CorpusPart
from data_pipeline.parallel_corpus import ParallelCorpus

_STATMT = "https://www.statmt.org"
_MULTI30K = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw"


def _wmt_pair(local_stem, url, member_stem, suffix=""):
    """A WMT En-Fr pair `wmt14/<local_stem>.{en,fr}.gz` from archive members `<member_stem>.{en,fr}<suffix>`."""
    return CorpusPart(
        source=CorpusFile(f"wmt14/{local_stem}.en.gz", url, f"{member_stem}.en{suffix}"),
        target=CorpusFile(f"wmt14/{local_stem}.fr.gz", url, f"{member_stem}.fr{suffix}"),
    )


def _newstest(year):
    return _wmt_pair(f"newstest{year}", f"{_STATMT}/wmt14/dev.tgz", f"dev/newstest{year}")


def _multi30k_file(split, language):
    return CorpusFile(f"multi30k/{split}.{language}.gz", f"{_MULTI30K}/{split}.{language}.gz")


# Multi30k task 1's captions in the languages of its releases; line i of every language is the same image's.
# Czech has no 2017 test set.
MULTI30K_LANGUAGES = ("en", "fr", "de", "cs")
_MULTI30K_SPLITS = {"train": "train", "dev": "val", "test": "test_2016_flickr", "test2017": "test_2017_flickr"}
_MULTI30K_WITHOUT = {"cs": ("test2017",)}


def multi30k(source_language, target_language):
    """Multi30k task 1 from `source_language` to `target_language` (two of `MULTI30K_LANGUAGES`), named
    `multi30k_<source><target>`: train, dev (val), test (test_2016_flickr) and, where both have it, test2017."""
    splits = {
        split: (CorpusPart(source=_multi30k_file(stem, source_language), target=_multi30k_file(stem, target_language)),)
        for split, stem in _MULTI30K_SPLITS.items()
        if split not in _MULTI30K_WITHOUT.get(source_language, ()) + _MULTI30K_WITHOUT.get(target_language, ())
    }
    return ParallelCorpus(f"multi30k_{source_language}{target_language}", source_language, target_language, splits)


# Tatoeba has no official split. Pairs are split by md5(English sentence) % 1000: [0, 20) test, [20, 40) dev,
# [40, 1000) train (about 2% / 2% / 96%). Hashing the English side keeps all translations of one English
# sentence in the same split, so no test source is seen in training, and the splits are the same both ways.
_TATOEBA_SPLITS = {"train": (40, 1000), "dev": (20, 40), "test": (0, 20)}
_ENGLISH = "en"


def tatoeba(tsv_file, source_language, target_language, name=None):
    """A manythings.org Tatoeba file (`XXX-eng`: English, a tab, the other language, and in current downloads a
    tab and the attribution) read from `source_language` to `target_language`, one of which is English.

    Args:
        tsv_file: `CorpusFile` of the tab-separated pairs (the `.txt` in the zip a user downloads, or it gzipped).
        source_language, target_language: codes; the English one reads the first column, the other the second.
        name: the corpus's name; default `tatoeba_<source><target>`, a registered corpus's.
    """
    if _ENGLISH not in (source_language, target_language) or source_language == target_language:
        raise ValueError(f"a Tatoeba file pairs English with one other language; got {source_language!r} -> "
                         f"{target_language!r} for {tsv_file.path}")
    columns = (0, 1) if source_language == _ENGLISH else (1, 0)
    name = name or f"tatoeba_{source_language}{target_language}"
    splits = {split: (CorpusPart(source=tsv_file, tsv_columns=columns, hash_buckets=buckets),)
              for split, buckets in _TATOEBA_SPLITS.items()}
    return ParallelCorpus(name, source_language, target_language, splits)


def _manythings(file_code, language):
    """The Tatoeba corpora of manythings' `<file_code>-eng` file, English <-> `language`, both ways."""
    tsv_file = CorpusFile(f"tatoeba/{file_code}-eng.tsv.gz", f"https://www.manythings.org/anki/{file_code}-eng.zip",
                          f"{file_code}.txt")
    return (tatoeba(tsv_file, _ENGLISH, language), tatoeba(tsv_file, language, _ENGLISH))


# Bahdanau et al. 2014, Section 4.1: Europarl, News Commentary, UN and two crawled corpora (Common
# Crawl, the 10^9 French-English "Gigaword" corpus), as listed for WMT'14; dev = newstest2012 + 2013,
# test = newstest2014. (The paper then reduced the 850M words to 348M with Axelrod et al.'s data
# selection: `rnnsearch select-data`, data_pipeline/data_selection.py.) Each file is read from `wmt14/<stem>.{en,fr}.gz` under the data
# folder, else extracted there from its archive as statmt.org publishes it (`data_files.archive_name`, e.g.
# training-giga-fren.tar) when that lies in `<data>/wmt14/` or `<data>/`, else downloaded with --allow_download.
WMT14_ENFR = ParallelCorpus(
    name="wmt14_enfr",
    source_language="en",
    target_language="fr",
    splits={
        "train": (
            _wmt_pair(
                "europarl-v7.fr-en",
                f"{_STATMT}/wmt13/training-parallel-europarl-v7.tgz",
                "training/europarl-v7.fr-en",
            ),
            _wmt_pair(
                "news-commentary-v9.fr-en",
                f"{_STATMT}/wmt14/training-parallel-nc-v9.tgz",
                "training/news-commentary-v9.fr-en",
            ),
            _wmt_pair("undoc.2000.fr-en", f"{_STATMT}/wmt13/training-parallel-un.tgz", "un/undoc.2000.fr-en"),
            _wmt_pair(
                "commoncrawl.fr-en", f"{_STATMT}/wmt13/training-parallel-commoncrawl.tgz", "commoncrawl.fr-en"
            ),
            _wmt_pair(
                "giga-fren.release2.fixed",
                f"{_STATMT}/wmt10/training-giga-fren.tar",
                "giga-fren.release2.fixed",
                suffix=".gz",
            ),
        ),
        "dev": (_newstest(2012), _newstest(2013)),
        "test": (
            CorpusPart(
                source=CorpusFile(
                    "wmt14/newstest2014.en.gz",
                    f"{_STATMT}/wmt14/test-full.tgz",
                    "test-full/newstest2014-fren-src.en.sgm",
                    sgml=True,
                ),
                target=CorpusFile(
                    "wmt14/newstest2014.fr.gz",
                    f"{_STATMT}/wmt14/test-full.tgz",
                    "test-full/newstest2014-fren-ref.fr.sgm",
                    sgml=True,
                ),
            ),
        ),
    },
)

MULTI30K_ENFR = multi30k("en", "fr")
# manythings' fra-eng and cmn-eng files (Mandarin, written "zh" as sacreBLEU and SentencePiece users write it).
TATOEBA_ENFR, TATOEBA_FREN = _manythings("fra", "fr")
TATOEBA_ENZH, TATOEBA_ZHEN = _manythings("cmn", "zh")

CORPORA = {
    corpus.name: corpus
    for corpus in (WMT14_ENFR, TATOEBA_ENFR, TATOEBA_FREN, TATOEBA_ENZH, TATOEBA_ZHEN)
    + tuple(multi30k(source, target) for source, target in itertools.permutations(MULTI30K_LANGUAGES, 2))
}


def get_corpus(name):
    """The registered `ParallelCorpus` called `name`."""
    if name not in CORPORA:
        raise ValueError(f"unknown corpus {name!r}; registered: {sorted(CORPORA)} (or use text files)")
    return CORPORA[name]


def text_file_corpus(source_language, target_language, splits):
    """A user's corpus of line-aligned plain or gzip text files.

    Args:
        source_language: a language code.
        target_language: a language code.
        splits: split name -> (source path, target path); relative paths are taken from the working folder.

    Returns:
        `ParallelCorpus` named "text_files" with one part per split.
    """
    return ParallelCorpus(
        name="text_files",
        source_language=languages.check(source_language, "--source_language"),
        target_language=languages.check(target_language, "--target_language"),
        splits={
            split: (
                CorpusPart(
                    source=CorpusFile(str(pathlib.Path(source).resolve())),
                    target=CorpusFile(str(pathlib.Path(target).resolve())),
                ),
            )
            for split, (source, target) in splits.items()
        },
    )


def tatoeba_file_corpus(path, source_language, target_language):
    """A Tatoeba file a user downloaded from manythings.org (`deu.txt` of `deu-eng.zip`, plain or gzip), from
    `source_language` to `target_language` (one of them "en"), split as the registered Tatoeba corpora. Named
    "tatoeba_file", as the user names it (`build-data --corpus=tatoeba_file`), not after a registered corpus of
    the same languages, which a message or metadata.json would then name."""
    return tatoeba(CorpusFile(str(pathlib.Path(path).resolve())), languages.check(source_language, "--source_language"),
                   languages.check(target_language, "--target_language"), name="tatoeba_file")
