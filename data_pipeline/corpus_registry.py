"""The named corpora: WMT'14 En-Fr (the paper's), Multi30k task 1 En-Fr, Tatoeba fra-eng, and a user's files."""

import pathlib

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


def _multi30k(split):
    return CorpusPart(
        source=CorpusFile(f"multi30k/{split}.en.gz", f"{_MULTI30K}/{split}.en.gz"),
        target=CorpusFile(f"multi30k/{split}.fr.gz", f"{_MULTI30K}/{split}.fr.gz"),
    )


def _tatoeba(low, high):
    return CorpusPart(
        source=CorpusFile("tatoeba/fra-eng.tsv.gz", "https://www.manythings.org/anki/fra-eng.zip", "fra.txt"),
        hash_buckets=(low, high),
    )


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

MULTI30K_ENFR = ParallelCorpus(
    name="multi30k_enfr",
    source_language="en",
    target_language="fr",
    splits={
        "train": (_multi30k("train"),),
        "dev": (_multi30k("val"),),
        "test": (_multi30k("test_2016_flickr"),),
        "test2017": (_multi30k("test_2017_flickr"),),
    },
)

# Tatoeba has no official split. Pairs are split by md5(English sentence) % 1000: [0, 20) test,
# [20, 40) dev, [40, 1000) train (about 2% / 2% / 96%). Hashing the English side keeps all French
# translations of one English sentence in the same split, so no test source is seen in training.
TATOEBA_ENFR = ParallelCorpus(
    name="tatoeba_enfr",
    source_language="en",
    target_language="fr",
    splits={"train": (_tatoeba(40, 1000),), "dev": (_tatoeba(20, 40),), "test": (_tatoeba(0, 20),)},
)

CORPORA = {corpus.name: corpus for corpus in (WMT14_ENFR, MULTI30K_ENFR, TATOEBA_ENFR)}


def get_corpus(name):
    """The registered `ParallelCorpus` called `name`."""
    if name not in CORPORA:
        raise ValueError(f"unknown corpus {name!r}; registered: {sorted(CORPORA)} (or use text files)")
    return CORPORA[name]


def text_file_corpus(source_language, target_language, splits):
    """A user's corpus of line-aligned plain or gzip text files.

    Args:
        source_language: "en" or "fr".
        target_language: "en" or "fr".
        splits: split name -> (source path, target path); relative paths are taken from the working folder.

    Returns:
        `ParallelCorpus` named "text_files" with one part per split.
    """
    return ParallelCorpus(
        name="text_files",
        source_language=source_language,
        target_language=target_language,
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
