"""DatasetBuilder on a toy corpus: exact vocabularies, records and metadata; bad input."""

import collections
import gzip
import json
import re

import numpy as np
import pytest
import sentencepiece
import tensorflow as tf

from data_pipeline import DatasetBuilder
from rnnsearch_tf.cli import build_data as build
from data_pipeline import corpus_registry
from data_pipeline.corpus_file import CorpusFile
from data_pipeline.corpus_part import CorpusPart
from data_pipeline.parallel_corpus import ParallelCorpus
from data_pipeline import text_codec
from data_pipeline.constants import EOS_ID
from data_pipeline.vocabulary import Vocabulary
from helpers.subword_test_data import build_subword_data

# Line by line: kept; empty source; 7 source tokens > max_length 4; invalid UTF-8 in the target
# (repaired to U+FFFD, kept); 50 characters > max_line_chars 40; a control character only (no tokens).
TOY_SOURCE = ["the cat .", "", "the dog sat on the mat .", "the cat", "x" * 50, "\x01"]
TOY_TARGET = [b"le chat .", b"vide", b"le chien .", b"le \xff chat", b"long", b"rien"]


def _write(path, lines):
    path.write_bytes(b"".join((line.encode() if isinstance(line, str) else line) + b"\n" for line in lines))
    return path


def _records(path):
    features = {name: tf.io.VarLenFeature(tf.int64) for name in ("source_ids", "target_ids")}
    records = []
    for serialized in tf.data.TFRecordDataset(str(path), compression_type="GZIP"):
        example = tf.io.parse_single_example(serialized, features)
        records.append(tuple(tuple(tf.sparse.to_dense(example[name]).numpy()) for name in features))
    return records


@pytest.fixture
def toy_build(tmp_path):
    corpus = corpus_registry.text_file_corpus(
        "en",
        "fr",
        {
            "train": (_write(tmp_path / "train.en", TOY_SOURCE), _write(tmp_path / "train.fr", TOY_TARGET)),
            "dev": (_write(tmp_path / "dev.en", ["the cat sat on the mat ."]), _write(tmp_path / "dev.fr", ["le chat ."])),
        },
    )
    output_dir = tmp_path / "out"
    builder = DatasetBuilder(
        corpus, output_dir, vocabulary_size=2, max_length=4, max_line_chars=40, num_shards=2, show_progress=False
    )
    return builder.build(), output_dir


def test_vocabularies_hold_the_most_frequent_tokens_of_kept_training_pairs(toy_build):
    _, output_dir = toy_build
    assert (output_dir / "source_vocab.tsv").read_text().splitlines() == [
        "<pad>\t0", "<s>\t0", "</s>\t2", "<unk>\t1", "cat\t2", "the\t2",
    ]
    assert (output_dir / "target_vocab.tsv").read_text().splitlines() == [
        "<pad>\t0", "<s>\t0", "</s>\t2", "<unk>\t2", "chat\t2", "le\t2",
    ]


def test_records_are_ids_ending_with_eos(toy_build):
    _, output_dir = toy_build
    train = _records(output_dir / "train-00000-of-00002.tfrecord.gz")
    train += _records(output_dir / "train-00001-of-00002.tfrecord.gz")
    # the cat . -> 5 4 <unk> </s>; le chat . -> 5 4 <unk> </s>; the cat -> 5 4 </s>; le \ufffd chat -> 5 <unk> 4 </s>
    assert sorted(train) == [((5, 4, 2), (5, 3, 4, 2)), ((5, 4, 3, 2), (5, 4, 3, 2))]
    # dev is not length-filtered: "the cat sat on the mat ." has 7 tokens.
    assert _records(output_dir / "dev-00000-of-00001.tfrecord.gz") == [((5, 4, 3, 3, 5, 3, 3, 2), (5, 4, 3, 2))]


def test_eval_splits_keep_their_raw_text_aligned_with_records(toy_build):
    metadata, output_dir = toy_build
    assert metadata["splits"]["dev"]["text_files"] == {"source": "dev.source.txt", "target": "dev.target.txt"}
    assert (output_dir / "dev.source.txt").read_text(encoding="utf-8") == "the cat sat on the mat .\n"
    assert (output_dir / "dev.target.txt").read_text(encoding="utf-8") == "le chat .\n"
    assert "text_files" not in metadata["splits"]["train"]
    assert not list(output_dir.glob("train.*.txt"))


def test_metadata_accounts_for_every_pair(toy_build):
    metadata, output_dir = toy_build
    assert json.loads((output_dir / "metadata.json").read_text()) == metadata
    train = metadata["splits"]["train"]
    assert (train["read"], train["kept"]) == (6, 2)
    assert train["dropped"] == {
        "empty_source": 1, "no_source_tokens": 1, "source_line_too_long": 1, "source_too_long": 1,
    }
    assert train["repaired"] == {"invalid_utf8_target": 1}
    assert train["first_repaired_lines"] == {"invalid_utf8_target": [f"{output_dir.parent / 'train.fr'}:4"]}
    assert [shard["records"] for shard in train["shards"]] == [1, 1]
    assert metadata["vocabularies"]["source"]["size"] == 6
    assert metadata["vocabularies"]["target"]["coverage"] == pytest.approx(4 / 6)
    assert metadata["filters"]["max_length"] == 4
    assert len(metadata["inputs"]) == 4 and all(len(entry["sha256"]) == 64 for entry in metadata["inputs"])


def test_vocabulary_from_keeps_the_given_ids_and_counts_the_words_outside(toy_build, tmp_path):
    _, parent = toy_build  # source vocabulary: <pad> <s> </s> <unk> cat the; target: ... chat le
    corpus = corpus_registry.text_file_corpus("en", "fr", {
        "train": (_write(tmp_path / "new.en", ["the cat ran .", "a cat ran"]),
                  _write(tmp_path / "new.fr", ["le chat court .", "un chat"])),
        "test": (_write(tmp_path / "test.en", ["the bird"]), _write(tmp_path / "test.fr", ["le oiseau"])),
    })
    output_dir = tmp_path / "new"
    metadata = DatasetBuilder(corpus, output_dir, vocabulary_size=100, num_shards=1, show_progress=False,
                              vocabulary_from=parent).build()
    for name in ("source_vocab.tsv", "target_vocab.tsv"):
        assert (output_dir / name).read_bytes() == (parent / name).read_bytes()
    assert sorted(_records(output_dir / "train-00000-of-00001.tfrecord.gz")) == [
        ((3, 4, 3, 2), (3, 4, 2)),  # a cat ran -> un chat
        ((5, 4, 3, 3, 2), (5, 4, 3, 3, 2)),  # the cat ran . -> le chat court .
    ]
    source, target = metadata["vocabularies"]["source"], metadata["vocabularies"]["target"]
    assert source["from"] == target["from"] == str(parent)
    assert source["size"] == 6 and source["sha256"] == json.loads((parent / "metadata.json").read_text())[
        "vocabularies"]["source"]["sha256"]
    # train en: ran x2, ".", "a" outside (4 of 7 tokens, 3 types); fr: court, ".", un (3 of 6, 3 types)
    assert source["outside"] == {"train": {"tokens": 4, "types": 3, "running_tokens": 7},
                                 "test": {"tokens": 1, "types": 1, "running_tokens": 2}}
    assert target["outside"] == {"train": {"tokens": 3, "types": 3, "running_tokens": 6},
                                 "test": {"tokens": 1, "types": 1, "running_tokens": 2}}
    assert source["coverage"] == pytest.approx(3 / 7)
    assert build.summary_line(metadata, output_dir).count(
        f"; outside the vocabularies of {parent}: train en 4 tokens (3 types) of 7, fr 3 tokens (3 types) of 6; "
        "test en 1 tokens (1 types) of 2, fr 1 tokens (1 types) of 2;") == 1


def test_vocabulary_from_refuses_other_languages_and_folders_without_vocabularies(toy_build, tmp_path):
    _, parent = toy_build
    files = {"train": (_write(tmp_path / "t.fr", ["le chat"]), _write(tmp_path / "t.en", ["the cat"]))}
    with pytest.raises(ValueError, match=r"metadata.json: source_language is 'en' but corpus .* is 'fr'"):
        DatasetBuilder(corpus_registry.text_file_corpus("fr", "en", files), tmp_path / "refused",
                       show_progress=False, vocabulary_from=parent).build()
    with pytest.raises(FileNotFoundError, match=rf"{tmp_path}/source_vocab.tsv is missing: vocabulary_from must be"):
        DatasetBuilder(corpus_registry.text_file_corpus("fr", "en", files), tmp_path / "refused",
                       show_progress=False, vocabulary_from=tmp_path).build()
    with pytest.raises(ValueError, match="text codec: subwords and lowercase cannot be given too"):
        DatasetBuilder(corpus_registry.text_file_corpus("en", "fr", files), tmp_path / "refused",
                       vocabulary_from=parent, subwords="sentencepiece")
    assert not (tmp_path / "refused").exists()


def test_vocabulary_from_takes_data_of_a_variety_for_its_language(tmp_path):
    """Data built with --source_language=cmn gives its vocabularies to a "zh" corpus (tatoeba_zhen's code):
    Mandarin is Chinese (`languages.same_language`); it was refused as another language."""
    characters = [chr(0x4E00 + i) for i in range(40)]
    lines = ["".join(characters[i:i + 8]) for i in range(0, 40, 4)]
    files = {"train": (_write(tmp_path / "t.cmn", lines), _write(tmp_path / "t.en", [f"line {i} ." for i in lines]))}
    DatasetBuilder(corpus_registry.text_file_corpus("cmn", "en", files), tmp_path / "cmn", subwords="sentencepiece",
                   subword_vocabulary_size=320, num_shards=1, show_progress=False).build()
    copied = DatasetBuilder(corpus_registry.text_file_corpus("zh", "en", files), tmp_path / "zh", num_shards=1,
                            show_progress=False, vocabulary_from=tmp_path / "cmn").build()
    assert copied["source_language"] == "zh" and copied["vocabularies"]["source"]["from"] == str(tmp_path / "cmn")


def test_line_count_mismatch_names_both_files_before_any_work(tmp_path):
    source = _write(tmp_path / "a.en", ["one", "two", "three"])
    target = _write(tmp_path / "a.fr", ["un", "deux"])
    corpus = corpus_registry.text_file_corpus("en", "fr", {"train": (source, target)})
    with pytest.raises(ValueError, match=rf"{source} has 3 lines, {target} has 2 lines"):
        DatasetBuilder(corpus, tmp_path / "out", show_progress=False).build()
    assert not (tmp_path / "out").exists() and not (tmp_path / ".out.incomplete").exists()


def test_an_output_dir_that_no_build_wrote_or_that_holds_an_input_is_refused_and_kept(tmp_path, caplog):
    mine = tmp_path / "mine"
    mine.mkdir()
    train = (_write(mine / "train.en", ["the cat ."]), _write(mine / "train.fr", ["le chat ."]))
    _write(tmp_path / "notes.txt", ["my notes"])
    corpus = corpus_registry.text_file_corpus("en", "fr", {"train": train})
    with pytest.raises(ValueError, match=rf"--output_dir={mine} holds the input {train[0]}: build-data replaces"):
        DatasetBuilder(corpus, mine, show_progress=False).build()
    outside = corpus_registry.text_file_corpus(
        "en", "fr", {"train": (_write(tmp_path / "t.en", ["the cat ."]), _write(tmp_path / "t.fr", ["le chat ."]))})
    other = tmp_path / "other"
    other.mkdir()
    _write(other / "notes.txt", ["my notes"])
    with pytest.raises(FileExistsError, match=rf"--output_dir={other} holds files but no metadata.json"):
        DatasetBuilder(outside, other, show_progress=False).build()
    with pytest.raises(NotADirectoryError, match=rf"--output_dir={tmp_path / 'notes.txt'} is a file"):
        DatasetBuilder(outside, tmp_path / "notes.txt", show_progress=False).build()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mine", "notes.txt", "other", "t.en", "t.fr"]
    assert [path.name for path in other.iterdir()] == ["notes.txt"]
    assert sorted(path.name for path in mine.iterdir()) == ["train.en", "train.fr"]
    built = tmp_path / "built"
    for _ in range(2):  # an earlier build is replaced
        DatasetBuilder(outside, built, show_progress=False).build()
    assert (built / "metadata.json").exists()
    (tmp_path / ".built.incomplete").mkdir()  # as a build killed before its end leaves it
    with caplog.at_level("WARNING"):
        DatasetBuilder(outside, built, show_progress=False).build()
    assert f"removing {tmp_path / '.built.incomplete'}, left by a build that did not finish" in caplog.text
    assert not (tmp_path / ".built.incomplete").exists()


def test_a_bad_line_met_while_reading_is_raised_as_it_is_and_nothing_is_left(tmp_path):
    tsv = _write(tmp_path / "pairs.tsv", ["the cat\tle chat", "no tab here", "the dog\tle chien"])
    corpus = ParallelCorpus("tsv", "en", "fr", {"train": (CorpusPart(source=CorpusFile(str(tsv))),)})
    with pytest.raises(ValueError, match=rf"^{tsv}:2: expected at least 2 tab-separated columns, found 1$"):
        DatasetBuilder(corpus, tmp_path / "out", show_progress=False).build()
    assert not (tmp_path / "out").exists()


def test_long_lines_are_dropped_counted_and_reported_on_the_progress_line(tmp_path, capsys):
    corpus, _, _ = _toy_corpus(tmp_path, ["the cat", "x" * 50, "the dog"], ["le chat", "long", "y" * 41])
    metadata = DatasetBuilder(corpus, tmp_path / "out", max_line_chars=40).build()
    assert metadata["splits"]["train"]["kept"] == 1
    assert metadata["splits"]["train"]["dropped"] == {"source_line_too_long": 1, "target_line_too_long": 1}
    assert "1 kept; dropped source_line_too_long 1, target_line_too_long 1\n" in capsys.readouterr().err


def _numbered_corpus(tmp_path, count):
    """Pair i: `s{i} w` -> `t{i} v`; every 50th pair also twice more, every 97th with a source too long for
    max_length 4 (dropped). Returns the corpus and the kept pairs' corpus numbers (repeats repeated)."""
    numbers = [i for i in range(count) for _ in range(3 if i % 50 == 0 else 1)]
    sources = [f"s{i} w" + (" w w w" if i % 97 == 0 else "") for i in numbers]
    corpus, _, _ = _toy_corpus(tmp_path, sources, [f"t{i} v" for i in numbers])
    return corpus, [i for i in numbers if i % 97]


def _train_records_as_numbers(output_dir):
    """Each train record of the shards in order as (source number, target number), checking its other ids."""
    vocabularies = {side: [token for token, _ in Vocabulary.read_entries(output_dir / f"{side}_vocab.tsv")]
                    for side in ("source", "target")}
    numbered = []
    for shard in sorted(output_dir.glob("train-*.tfrecord.gz")):
        for source_ids, target_ids in _records(shard):
            source = [vocabularies["source"][i] for i in source_ids]
            target = [vocabularies["target"][i] for i in target_ids]
            assert source[1:] == ["w", "</s>"] and target[1:] == ["v", "</s>"]
            numbered.append((int(source[0][1:]), int(target[0][1:])))
    return numbered


def test_the_train_split_holds_every_kept_pair_once_shuffled_across_buckets_and_shards(tmp_path):
    corpus, kept = _numbered_corpus(tmp_path, 1000)
    output_dir = tmp_path / "out"
    metadata = DatasetBuilder(corpus, output_dir, max_length=4, num_shards=3, vocabulary_size=5000,
                              shuffle_bucket_pairs=64, show_progress=False).build()
    numbered = _train_records_as_numbers(output_dir)
    assert collections.Counter(numbered) == collections.Counter((i, i) for i in kept)
    assert metadata["splits"]["train"]["kept"] == len(kept) == 1040 - 13  # 0 (three times) and 97, ..., 970
    assert [shard["records"] for shard in metadata["splits"]["train"]["shards"]] == [342, 342, 343]
    order = [source for source, _ in numbered]
    assert abs(np.corrcoef(order, range(len(order)))[0, 1]) < 0.1  # no trace of the corpus order
    assert all(max(order[start:stop]) - min(order[start:stop]) > 900 for start, stop in ((0, 342), (342, 684)))
    assert sorted(path.name for path in output_dir.iterdir()) == [
        "metadata.json", "source_vocab.tsv", "target_vocab.tsv",
        "train-00000-of-00003.tfrecord.gz", "train-00001-of-00003.tfrecord.gz", "train-00002-of-00003.tfrecord.gz",
    ]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.en", "a.fr", "out"]


def test_the_same_seed_gives_byte_identical_shards_another_seed_another_order(tmp_path):
    corpus, kept = _numbered_corpus(tmp_path, 300)
    shards = {}
    for name, seed in (("first", 11), ("again", 11), ("other", 12)):
        DatasetBuilder(corpus, tmp_path / name, max_length=4, num_shards=2, seed=seed, shuffle_bucket_pairs=50,
                       show_progress=False).build()
        shards[name] = [path.read_bytes() for path in sorted((tmp_path / name).glob("train-*.tfrecord.gz"))]
    assert len(shards["first"]) == 2 and shards["again"] == shards["first"]
    assert shards["other"] != shards["first"]
    first, other = _train_records_as_numbers(tmp_path / "first"), _train_records_as_numbers(tmp_path / "other")
    assert first != other and collections.Counter(first) == collections.Counter(other)


def _toy_corpus(tmp_path, source_lines, target_lines):
    source, target = _write(tmp_path / "a.en", source_lines), _write(tmp_path / "a.fr", target_lines)
    return corpus_registry.text_file_corpus("en", "fr", {"train": (source, target)}), source, target


def test_byte_order_mark_is_removed_and_counted(tmp_path):
    corpus, source, _ = _toy_corpus(tmp_path, [b"\xef\xbb\xbfthe cat", b"the dog"], [b"le chat", b"le chien"])
    metadata = DatasetBuilder(corpus, tmp_path / "out", show_progress=False).build()
    assert metadata["splits"]["train"]["first_repaired_lines"] == {"utf8_bom_source": [f"{source}:1"]}
    assert "\ufeff" not in (tmp_path / "out" / "source_vocab.tsv").read_text(encoding="utf-8")
    assert "\nthe\t2\n" in (tmp_path / "out" / "source_vocab.tsv").read_text(encoding="utf-8")


def test_a_corpus_without_usable_pairs_is_refused_naming_its_files(tmp_path):
    corpus, source, target = _toy_corpus(tmp_path, [" ", "\t"], ["  ", ""])
    with pytest.raises(ValueError, match=rf"^no usable training pair in {source}, {target}: 2 read, dropped "
                                         r"empty_source 2$"):
        DatasetBuilder(corpus, tmp_path / "out", show_progress=False).build()
    assert not (tmp_path / "out").exists()


def test_a_dev_or_test_split_without_usable_pairs_is_refused_naming_its_files(tmp_path, capsys):
    """Training's validation and a test's BLEU need a pair: a split of blank lines is found before anything is
    written (not at the first validation), and before the training split is read (the progress lines say which
    splits were)."""
    train = _write(tmp_path / "a.en", ["the cat"]), _write(tmp_path / "a.fr", ["le chat"])
    blank = _write(tmp_path / "blank.en", ["", ""]), _write(tmp_path / "blank.fr", ["", ""])
    empty = _write(tmp_path / "empty.en", []), _write(tmp_path / "empty.fr", [])
    for split, (source, target), reasons in (("dev", blank, ", dropped empty_source 2"), ("test", empty, "")):
        corpus = corpus_registry.text_file_corpus("en", "fr", {"train": train, split: (source, target)})
        with pytest.raises(ValueError, match=rf"^no usable {split} pair in {source}, {target}: "
                                             rf"{2 if reasons else 0} read{reasons}$"):
            DatasetBuilder(corpus, tmp_path / "out").build()
        assert not (tmp_path / "out").exists() and not (tmp_path / ".out.incomplete").exists()
        progress = capsys.readouterr().err
        assert f"[{split}] " in progress and "[train]" not in progress, progress


def test_gzip_is_read_by_content_and_a_truncated_one_is_named(tmp_path):
    compressed = gzip.compress(b"the cat\nthe dog\n")
    _write(tmp_path / "a.fr", ["le chat", "le chien"])
    (tmp_path / "a.en").write_bytes(compressed)  # gzip without the .gz suffix
    corpus = corpus_registry.text_file_corpus("en", "fr", {"train": (tmp_path / "a.en", tmp_path / "a.fr")})
    assert DatasetBuilder(corpus, tmp_path / "out", show_progress=False).build()["splits"]["train"]["kept"] == 2
    (tmp_path / "a.en").write_bytes(compressed[:-12])
    with pytest.raises(ValueError, match=rf"{tmp_path / 'a.en'}: .*truncated or corrupt gzip"):
        DatasetBuilder(corpus, tmp_path / "out2", show_progress=False).build()


def test_joined_training_pairs_are_added_within_max_length(tmp_path):
    # Pair i: i + 1 source tokens, i + 2 target tokens; max_length 8 lets 2 or 3 of the short ones join.
    sources = [" ".join(f"s{i}" for _ in range(i % 3 + 1)) for i in range(30)]
    targets = [" ".join(f"t{i}" for _ in range(i % 3 + 2)) for i in range(30)]
    splits = {"train": (_write(tmp_path / "train.en", sources), _write(tmp_path / "train.fr", targets))}
    corpus = corpus_registry.text_file_corpus("en", "fr", splits)
    plain = DatasetBuilder(corpus, tmp_path / "plain", max_length=8, num_shards=1, show_progress=False).build()
    joined = DatasetBuilder(corpus, tmp_path / "joined", max_length=8, num_shards=1, show_progress=False,
                            joined_share=0.25, max_joined_sentences=3).build()
    assert joined["splits"]["train"]["kept"] == 30 and joined["splits"]["train"]["joined"] == 10  # 10 of 40
    assert plain["splits"]["train"]["joined"] == 0
    assert joined["vocabularies"] == plain["vocabularies"]  # counted from the kept pairs only
    assert joined["filters"]["joined_share"] == 0.25 and joined["filters"]["max_joined_sentences"] == 3
    single = set(_records(tmp_path / "plain/train-00000-of-00001.tfrecord.gz"))
    records = _records(tmp_path / "joined/train-00000-of-00001.tfrecord.gz")
    assert len(records) == 40 and single <= set(records)
    vocabulary = [line.split("\t")[0] for line in (tmp_path / "joined/source_vocab.tsv").read_text().splitlines()]
    for source_ids, target_ids in set(records) - single:
        assert len(source_ids) <= 9 and len(target_ids) <= 9  # max_length tokens, then EOS
        words = [vocabulary[i] for i in source_ids[:-1]]
        numbers = list(dict.fromkeys(int(word[1:]) for word in words))
        assert 2 <= len(numbers) <= 3 and numbers == list(range(numbers[0], numbers[0] + len(numbers)))
        assert words == [f"s{n}" for n in numbers for _ in range(n % 3 + 1)]


def test_a_bad_joined_share_is_refused(tmp_path):
    corpus = corpus_registry.text_file_corpus("en", "fr", {})
    with pytest.raises(ValueError, match=r"joined_share must be in \[0, 1\), got 1.0"):
        DatasetBuilder(corpus, tmp_path / "out", joined_share=1.0)


@pytest.fixture(scope="module")
def subword_build(tmp_path_factory):
    folder = tmp_path_factory.mktemp("subwords")
    return build_subword_data(folder), folder


def test_a_subword_build_writes_the_pieces_of_its_sentencepiece_model(subword_build):
    data_dir, folder = subword_build
    metadata = json.loads((data_dir / "metadata.json").read_text())
    assert metadata["codec"] == {
        side: {"kind": "sentencepiece", "language": language, "vocabulary": f"{side}_vocab.tsv", "model": "spm.model"}
        for side, language in (("source", "en"), ("target", "fr"))
    }
    processor = sentencepiece.SentencePieceProcessor(model_file=str(data_dir / "spm.model"))
    pieces = [processor.IdToPiece(i) for i in range(processor.GetPieceSize())]
    for side, language in (("source", "en"), ("target", "fr")):
        entries = Vocabulary.read_entries(data_dir / f"{side}_vocab.tsv")  # the joint model: both sides' pieces
        assert [token for token, _ in entries] == pieces and metadata["vocabularies"][side]["coverage"] == 1.0
        dev = (folder / "raw" / f"dev.{language}").read_text().splitlines()
        records = _records(next(data_dir.glob("dev-*.tfrecord.gz")))
        column = 0 if side == "source" else 1
        assert [list(record[column]) for record in records] == [processor.encode(line) + [EOS_ID] for line in dev]
        train_counts = collections.Counter(
            piece for line in (folder / "raw" / f"train.{language}").read_text().splitlines()
            for piece in processor.encode(line, out_type=str))
        assert {token: count for token, count in entries[4:] if count} == dict(train_counts)


def test_per_language_unigram_models_and_a_copied_subword_codec(subword_build, tmp_path):
    data_dir, folder = subword_build
    separate = tmp_path / "separate"
    build_subword_data(separate, joint=False, subword_model="unigram")
    codec = json.loads((separate / "data" / "metadata.json").read_text())["codec"]
    assert [codec[side]["model"] for side in ("source", "target")] == ["source_spm.model", "target_spm.model"]
    pieces = {side: set(text_codec.sentencepiece_pieces(separate / "data" / f"{side}_spm.model")) for side in codec}
    assert "▁ch" in pieces["target"] - pieces["source"] and "th" in pieces["source"] - pieces["target"]
    files = {"train": (_write(tmp_path / "t.en", ["the red cat sleeps ."]), _write(tmp_path / "t.fr", ["le chat ."]))}
    copied = DatasetBuilder(corpus_registry.text_file_corpus("en", "fr", files), tmp_path / "copied",
                            show_progress=False, vocabulary_from=data_dir).build()
    assert copied["codec"] == json.loads((data_dir / "metadata.json").read_text())["codec"]
    assert (tmp_path / "copied" / "spm.model").read_bytes() == (data_dir / "spm.model").read_bytes()
    processor = sentencepiece.SentencePieceProcessor(model_file=str(data_dir / "spm.model"))
    records = [record for path in (tmp_path / "copied").glob("train-*") for record in _records(path)]
    assert records[0][0] == tuple(
        processor.encode("the red cat sleeps .") + [EOS_ID])


def test_lowercase_learns_pieces_and_words_of_the_lower_cased_text_and_records_it(tmp_path):
    files = {"train": (_write(tmp_path / "t.en", ["The Cat sleeps .", "THE DOG runs ."] * 40),
                       _write(tmp_path / "t.de", ["Die Katze schläft .", "DER HUND läuft ."] * 40))}
    corpus = corpus_registry.text_file_corpus("en", "de", files)
    subwords = DatasetBuilder(corpus, tmp_path / "pieces", lowercase=True, subwords="sentencepiece",
                              subword_vocabulary_size=400, show_progress=False).build()
    words = DatasetBuilder(corpus, tmp_path / "words", lowercase=True, show_progress=False).build()
    pieces = [piece for piece in text_codec.sentencepiece_pieces(tmp_path / "pieces" / "spm.model")
              if not re.fullmatch(r"<.*>", piece)]  # the reserved ones and the 256 bytes apart
    assert "▁katze" in pieces and not any(piece != piece.lower() for piece in pieces)
    vocabulary = [token for token, _ in Vocabulary.read_entries(tmp_path / "words" / "target_vocab.tsv")[4:]]
    assert sorted(vocabulary) == sorted(["die", "katze", "schläft", ".", "der", "hund", "läuft"])
    for metadata in (subwords, words):
        assert all(metadata["codec"][side]["lowercase"] for side in ("source", "target"))
    with pytest.raises(ValueError, match="vocabulary_from copies a model's text codec: subwords and lowercase"):
        DatasetBuilder(corpus, tmp_path / "copied", vocabulary_from=tmp_path / "words", lowercase=True)


def test_max_length_counts_pieces_with_subwords(tmp_path):
    files = {"train": (_write(tmp_path / "t.en", ["the cat", "Brakkenfeld"] * 50),
                       _write(tmp_path / "t.fr", ["le chat", "Brakkenfeld"] * 50))}
    metadata = DatasetBuilder(corpus_registry.text_file_corpus("en", "fr", files), tmp_path / "out", max_length=2,
                              show_progress=False, subwords="sentencepiece", subword_vocabulary_size=300).build()
    assert metadata["splits"]["train"]["kept"] == 50 and metadata["splits"]["train"]["dropped"] == {
        "source_too_long": 50}


def test_copy_pairs_make_up_the_copied_name_on_both_sides(tmp_path):
    files = {"train": (_write(tmp_path / "t.en", ["the cat sees Tom .", "the dog runs ."] * 40),
                       _write(tmp_path / "t.fr", ["le chat voit Tom .", "le chien court ."] * 40))}
    corpus = corpus_registry.text_file_corpus("en", "fr", files)
    options = dict(num_shards=1, show_progress=False, subwords="sentencepiece", subword_vocabulary_size=300)
    plain = DatasetBuilder(corpus, tmp_path / "plain", **options).build()
    built = DatasetBuilder(corpus, tmp_path / "copies", copy_share=0.5, **options).build()
    assert built["splits"]["train"]["kept"] == 80 and built["splits"]["train"]["copy_pairs"] == 80  # 2 a candidate
    assert built["filters"]["copy_share"] == 0.5 and built["vocabularies"] == plain["vocabularies"]
    assert "+ 80 copy pairs" in build.summary_line(built, "D")
    processor = sentencepiece.SentencePieceProcessor(model_file=str(tmp_path / "copies" / "spm.model"))
    pairs = [tuple(processor.decode(list(ids[:-1])) for ids in record)
             for record in _records(tmp_path / "copies/train-00000-of-00001.tfrecord.gz")]
    made_up = collections.Counter()
    for source, target in pairs:
        if source not in ("the cat sees Tom .", "the dog runs ."):
            name = source.split()[3]
            assert source == f"the cat sees {name} ." and target == f"le chat voit {name} ."
            assert name != "Tom" and name.isalpha() and name == name.capitalize()
            made_up[name] += 1
    assert sum(made_up.values()) == 80 and len(made_up) > 40  # a new name nearly every time
    again = DatasetBuilder(corpus, tmp_path / "again", copy_share=0.5, **options).build()
    assert again["splits"]["train"]["shards"] == built["splits"]["train"]["shards"]  # seeded: the same bytes


def test_copy_pairs_need_a_subword_codec_and_a_share_below_one(tmp_path):
    files = {"train": (_write(tmp_path / "t.en", ["Tom ."]), _write(tmp_path / "t.fr", ["Tom ."]))}
    corpus = corpus_registry.text_file_corpus("en", "fr", files)
    with pytest.raises(ValueError, match="copy_share needs a subword codec"):
        DatasetBuilder(corpus, tmp_path / "out", show_progress=False, copy_share=0.1).build()
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match=r"copy_share must be in \[0, 1\), got 1.0"):
        DatasetBuilder(corpus, tmp_path / "out", copy_share=1.0)


def test_text_with_tabs_and_line_separators_builds_with_subwords_cut_as_spaces(tmp_path):
    """SentencePiece would learn a tab as a piece, which neither the tab-separated scratch pair file nor the
    vocabulary can hold: the pieces are learned from, and the shards cut from, the text with spaces instead."""
    files = {"train": (_write(tmp_path / "t.en", ["the\tcat sleeps .", "the dog\u2028runs ."] * 40),
                       _write(tmp_path / "t.fr", ["le chat\tdort .", "le\x0bchien court ."] * 40))}
    metadata = DatasetBuilder(corpus_registry.text_file_corpus("en", "fr", files), tmp_path / "out", num_shards=1,
                              show_progress=False, subwords="sentencepiece", subword_vocabulary_size=300).build()
    assert metadata["splits"]["train"]["kept"] == 80
    pieces = text_codec.sentencepiece_pieces(tmp_path / "out" / "spm.model")
    assert not [piece for piece in pieces if re.search("[\t\x0b\u2028]", piece)]
    processor = sentencepiece.SentencePieceProcessor(model_file=str(tmp_path / "out" / "spm.model"))
    expected = {(tuple(processor.encode(source) + [EOS_ID]), tuple(processor.encode(target) + [EOS_ID]))
                for source, target in [("the cat sleeps .", "le chat dort ."), ("the dog runs .", "le chien court .")]}
    assert set(_records(tmp_path / "out" / metadata["splits"]["train"]["shards"][0]["file"])) == expected


def test_a_build_that_fails_removes_its_incomplete_folder_and_the_training_text_in_it(tmp_path):
    """SentencePiece refuses a vocabulary too small for the text after build-data wrote the training text for it
    in `.NAME.incomplete`: the failed build removes that folder (nothing in it was put in place), and an earlier
    build of the folder stays as it was."""
    characters = [chr(0x4E00 + i) for i in range(100)]
    lines = ["".join(characters[i:i + 10]) for i in range(0, 100, 10)] * 5
    files = {"train": (_write(tmp_path / "t.zh", lines), _write(tmp_path / "t.en", [f"Line {i}." for i in lines]))}
    corpus = corpus_registry.text_file_corpus("zh", "en", files)
    DatasetBuilder(corpus, tmp_path / "out", subwords="sentencepiece", subword_vocabulary_size=600,
                   show_progress=False).build()
    earlier = {path.name: path.read_bytes() for path in (tmp_path / "out").iterdir()}
    with pytest.raises(ValueError, match="--subword_vocabulary_size=300 is too small for this text"):
        DatasetBuilder(corpus, tmp_path / "out", subwords="sentencepiece", subword_vocabulary_size=300,
                       show_progress=False).build()
    assert not (tmp_path / ".out.incomplete").exists()
    assert {path.name: path.read_bytes() for path in (tmp_path / "out").iterdir()} == earlier


def test_joined_and_copy_pairs_are_each_their_share_of_the_written_records(tmp_path):
    """--joined_share=0.25 --copy_share=0.25 on 80 kept pairs: 160 records, 40 joined and 40 copy pairs, each a
    quarter of what the shards hold (not a quarter of the kept pairs and the one kind, 27 each of 134)."""
    files = {"train": (_write(tmp_path / "t.en", ["the cat sees Tom .", "the dog runs ."] * 40),
                       _write(tmp_path / "t.fr", ["le chat voit Tom .", "le chien court ."] * 40))}
    corpus = corpus_registry.text_file_corpus("en", "fr", files)
    built = DatasetBuilder(corpus, tmp_path / "out", num_shards=1, show_progress=False, subwords="sentencepiece",
                           subword_vocabulary_size=300, joined_share=0.25, copy_share=0.25).build()
    train = built["splits"]["train"]
    records = sum(shard["records"] for shard in train["shards"])
    assert records == len(_records(tmp_path / "out" / train["shards"][0]["file"])) == 160
    assert (train["kept"], train["joined"], train["copy_pairs"]) == (80, 40, 40)
    assert train["joined"] / records == train["copy_pairs"] / records == 0.25


def test_a_subword_build_records_the_pieces_its_models_made_beside_the_size_asked(tmp_path):
    """SentencePiece learns with hard_vocab_limit=False: a text with fewer pieces to learn gets a smaller model.
    metadata.json records the size asked and, as each vocabulary's size, the pieces made."""
    files = {"train": (_write(tmp_path / "t.en", ["the cat", "a dog"] * 50),
                       _write(tmp_path / "t.fr", ["le chat", "un chien"] * 50))}
    metadata = DatasetBuilder(corpus_registry.text_file_corpus("en", "fr", files), tmp_path / "out",
                              show_progress=False, subwords="sentencepiece", subword_vocabulary_size=8000).build()
    made = len(text_codec.sentencepiece_pieces(tmp_path / "out" / "spm.model"))
    assert metadata["subwords"]["vocabulary_size"] == 8000 and made < 8000
    assert metadata["vocabularies"]["source"]["size"] == metadata["vocabularies"]["target"]["size"] == made


def test_a_users_tatoeba_file_is_named_as_the_user_named_it(tmp_path):
    """--corpus=tatoeba_file with a Chinese file: the word-level refusal names --source_language, not a registered
    corpus the user never named (tatoeba_zhen)."""
    path = _write(tmp_path / "cmn.txt", ["Hi.\t嗨。"])
    corpus = corpus_registry.tatoeba_file_corpus(path, "zh", "en")
    with pytest.raises(ValueError, match=r"^--source_language='zh': Chinese is written without spaces"):
        DatasetBuilder(corpus, tmp_path / "out")
