"""data_pipeline/pair_reader.py: PairReader on real plain, gzip and TSV files (pairs, drops and repairs
counted by reason, hash buckets, errors naming file and line), and count_lines, open_binary, sha256."""

import gzip
import hashlib

import pytest

from data_pipeline import CorpusFile
from data_pipeline import CorpusPart
from data_pipeline import PairReader
from data_pipeline import pair_reader


def _write(path, lines):
    path.write_bytes(b"".join((line.encode() if isinstance(line, str) else line) + b"\n" for line in lines))
    return path


def _reader(tmp_path, source_lines, target_lines, max_line_chars=100):
    source, target = _write(tmp_path / "a.en", source_lines), _write(tmp_path / "a.fr", target_lines)
    part = CorpusPart(source=CorpusFile(str(source)), target=CorpusFile(str(target)))
    return PairReader(part, [source, target], max_line_chars=max_line_chars), source, target


def _tsv_reader(path, **part_options):
    return PairReader(CorpusPart(source=CorpusFile(str(path)), **part_options), [path], max_line_chars=100)


def test_malformed_tsv_line_names_file_and_line(tmp_path):
    path = _write(tmp_path / "pairs.tsv", ["Hi.\tSalut.", "no tab here"])
    reader = PairReader(CorpusPart(source=CorpusFile(str(path))), [path], max_line_chars=100)
    with pytest.raises(ValueError, match=rf"{path}:2: expected at least 2 tab-separated columns"):
        list(reader)


def test_pairs_of_two_files_are_read_line_by_line_without_line_breaks(tmp_path):
    reader, _, _ = _reader(tmp_path, [b"the cat .\r", "a\u2028b", "caf\u00e9"], ["le chat .", "a b", "caf\u00e9 \t"])
    assert list(reader) == [("the cat .", "le chat ."), ("a\u2028b", "a b"), ("caf\u00e9", "caf\u00e9 \t")]
    assert (reader.read, dict(reader.dropped), dict(reader.repaired)) == (3, {}, {})


def test_every_dropped_pair_is_counted_by_its_first_reason(tmp_path):
    sources = ["kept", "", " \t", "ok", "x" * 11, "ok", "x" * 10, ""]
    targets = ["garde", "vide", "", "  ", "long", "y" * 11, "y" * 10, " "]
    reader, _, _ = _reader(tmp_path, sources, targets, max_line_chars=10)
    assert list(reader) == [("kept", "garde"), ("x" * 10, "y" * 10)]
    assert dict(reader.dropped) == {
        "empty_source": 3, "empty_target": 1, "source_line_too_long": 1, "target_line_too_long": 1,
    }
    assert reader.read == 2 + sum(reader.dropped.values()) == 8


def test_invalid_utf8_is_replaced_and_its_first_five_lines_are_named(tmp_path):
    sources = [b"caf\xc3"] + [f"s{i}".encode() for i in range(2, 9)]
    targets = [b"mauvais \xfe"] * 7 + [b"bon"]
    reader, source, target = _reader(tmp_path, sources, targets)
    pairs = list(reader)
    assert pairs[0] == ("caf\ufffd", "mauvais \ufffd") and pairs[7] == ("s8", "bon")
    assert len(pairs) == reader.read == 8
    assert reader.repaired == {"invalid_utf8_source": 1, "invalid_utf8_target": 7}
    assert reader.repaired_lines == {
        "invalid_utf8_source": [f"{source}:1"],
        "invalid_utf8_target": [f"{target}:{number}" for number in (1, 2, 3, 4, 5)],
    }


def test_a_byte_order_mark_opening_a_file_is_removed_and_counted(tmp_path):
    reader, source, target = _reader(
        tmp_path, [b"\xef\xbb\xbfthe cat", b"\xef\xbb\xbfthe dog"], [b"\xef\xbb\xbfle chat", b"le chien"]
    )
    assert list(reader) == [("the cat", "le chat"), ("\ufeffthe dog", "le chien")]  # only the file's first bytes
    assert reader.repaired == {"utf8_bom_source": 1, "utf8_bom_target": 1}
    assert reader.repaired_lines == {"utf8_bom_source": [f"{source}:1"], "utf8_bom_target": [f"{target}:1"]}


def test_different_line_counts_are_refused_on_construction_naming_both_files(tmp_path):
    with pytest.raises(ValueError, match=r"line counts differ: .*a.en has 3 lines, .*a.fr has 2 lines"):
        _reader(tmp_path, ["one", "two", "three"], ["un", "deux"])


def test_gzip_files_are_read_by_content_whatever_their_name(tmp_path):
    source = tmp_path / "a.en"
    source.write_bytes(gzip.compress(b"the cat\nthe dog"))  # no .gz suffix, no final newline
    target = _write(tmp_path / "a.fr.gz", ["le chat", "le chien"])  # plain text despite .gz
    part = CorpusPart(source=CorpusFile(str(source)), target=CorpusFile(str(target)))
    assert list(PairReader(part, [source, target], max_line_chars=100)) == [
        ("the cat", "le chat"), ("the dog", "le chien"),
    ]


def test_tsv_columns_choose_source_and_target(tmp_path):
    path = _write(tmp_path / "pairs.tsv", [b"\xef\xbb\xbfHi.\tSalut.\tCC-BY 2.0", "Run!\tCours !\tCC-BY 2.0"])
    assert list(_tsv_reader(path)) == [("Hi.", "Salut."), ("Run!", "Cours !")]
    reader = _tsv_reader(path, tsv_columns=(1, 0))
    assert list(reader) == [("Salut.", "Hi."), ("Cours !", "Run!")]
    assert reader.repaired_lines == {"utf8_bom_target": [f"{path}:1"]}
    with pytest.raises(ValueError, match=rf"{path}:1: expected at least 4 tab-separated columns, found 3"):
        list(_tsv_reader(path, tsv_columns=(0, 3)))


def test_hash_buckets_split_by_source_sentence_and_only_count_their_own_pairs(tmp_path):
    lines = [f"sentence {i}\tphrase {i}" for i in range(40)] + ["sentence 7\tautre phrase 7"]
    path = _write(tmp_path / "pairs.tsv", lines)
    readers = [_tsv_reader(path, hash_buckets=buckets) for buckets in ((0, 500), (500, 1000))]
    low, high = (list(reader) for reader in readers)
    # md5(English sentence) % 1000, as corpus_registry documents the Tatoeba split; corpus order is kept
    in_low = lambda line: int(hashlib.md5(line.split("\t")[0].encode()).hexdigest(), 16) % 1000 < 500
    assert low == [tuple(line.split("\t")) for line in lines if in_low(line)]
    assert low and high and sorted(low + high) == sorted(tuple(line.split("\t")) for line in lines)
    assert (readers[0].read, readers[1].read) == (len(low), len(high))
    assert {source for source, _ in low}.isdisjoint(source for source, _ in high)


def test_count_lines_counts_a_last_line_without_newline(tmp_path):
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "ended").write_bytes(b"a\nb\n")
    (tmp_path / "open").write_bytes(b"a\nb")
    (tmp_path / "blank").write_bytes(b"\n\n\n")
    (tmp_path / "zipped").write_bytes(gzip.compress(b"a\n" * 70000 + b"last"))
    counts = {name: pair_reader.count_lines(tmp_path / name) for name in ("empty", "ended", "open", "blank", "zipped")}
    assert counts == {"empty": 0, "ended": 2, "open": 2, "blank": 3, "zipped": 70001}


def test_a_truncated_gzip_is_named_when_read(tmp_path):
    path = tmp_path / "a.en.gz"
    path.write_bytes(gzip.compress(b"the cat\n" * 100)[:-12])
    with pytest.raises(ValueError, match=rf"{path}: .*\(a truncated or corrupt gzip file\)"):
        pair_reader.count_lines(path)


def test_sha256_of_the_file_bytes(tmp_path):
    (tmp_path / "abc").write_bytes(b"abc")
    (tmp_path / "empty").write_bytes(b"")
    # FIPS 180-2 test vectors
    assert pair_reader.sha256(tmp_path / "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert pair_reader.sha256(tmp_path / "empty") == (
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )


def test_numbered_pairs_keep_their_file_lines_and_dropped_lines_are_named_once_per_reason(tmp_path):
    sources = ["one", "", "three", "four", "five", "", "", "", "", "", "", "twelve"]
    targets = ["un", "deux", "trois", " ", "cinq", "", "", "", "", "", "", "douze"]
    reader, source, target = _reader(tmp_path, sources, targets)
    expected = [(1, ("one", "un")), (3, ("three", "trois")), (5, ("five", "cinq")), (12, ("twelve", "douze"))]
    assert list(reader.numbered()) == expected and reader.lines == 12
    assert list(reader) == [pair for _, pair in expected]  # a second pass names no line twice
    assert reader.dropped_lines == {"empty_source": [f"{source}:{number}" for number in (2, 6, 7, 8, 9)],
                                    "empty_target": [f"{target}:4"]}
    path = _write(tmp_path / "pairs.tsv", [f"sentence {i}\tphrase {i}" for i in range(40)])
    low = _tsv_reader(path, hash_buckets=(0, 500))
    assert [(number, pair) for number, pair in low.numbered()] == [
        (number, (f"sentence {number - 1}", f"phrase {number - 1}")) for number in range(1, 41)
        if int(hashlib.md5(f"sentence {number - 1}".encode()).hexdigest(), 16) % 1000 < 500]  # the file's lines


def test_split_pairs_with_lines_count_the_lines_of_its_parts_one_after_another(tmp_path):
    for part in ("first", "second"):
        (tmp_path / part).mkdir()
    first, first_source, _ = _reader(tmp_path / "first", ["a", "", "c"], ["A", "B", "C"])
    second, _, second_target = _reader(tmp_path / "second", ["d", "e"], ["", "E"])
    pairs = pair_reader.SplitPairs([first, second], with_lines=True)
    assert list(pairs) == [(1, ("a", "A")), (3, ("c", "C")), (5, ("e", "E"))]
    assert list(pair_reader.SplitPairs([first, second])) == [("a", "A"), ("c", "C"), ("e", "E")]
    assert pairs.summary()["dropped"] == {"empty_source": 1, "empty_target": 1}
    assert pairs.summary()["dropped_lines"] == {"empty_source": [f"{first_source}:2"],
                                                "empty_target": [f"{second_target}:1"]}
