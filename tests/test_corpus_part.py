"""data_pipeline/corpus_part.py: the files a part reads, one tab-separated file or two aligned files in
(source, target) order."""

from data_pipeline.corpus_file import CorpusFile
from data_pipeline.corpus_part import CorpusPart


def test_a_tsv_part_reads_one_file_and_an_aligned_part_its_source_then_its_target():
    tsv = CorpusFile("tatoeba/fra-eng.tsv")
    assert CorpusPart(tsv, tsv_columns=(1, 0)).files == (tsv,)
    source, target = CorpusFile("multi30k/train.en.gz"), CorpusFile("multi30k/train.fr.gz")
    assert CorpusPart(source, target).files == (source, target)
    assert CorpusPart(target, source).files == (target, source)
