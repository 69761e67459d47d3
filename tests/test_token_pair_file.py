"""TokenPairFile: a split's token pairs read in order and by index from disk, as SentenceJoiner draws them."""

import pytest

from data_pipeline.sentence_joiner import SentenceJoiner
from data_pipeline.token_pair_file import TokenPairFile, line_pair, pair_line

PAIRS = [([b"the", b"cat"], [b"le", b"chat"]), ([b"a", b"\xc3\xa9t\xc3\xa9"], [b"un", b"\xc3\xa9t\xc3\xa9"]),
         ([b"dogs"], [b"des", b"chiens", b"."])]


@pytest.fixture
def token_file(tmp_path):
    path = tmp_path / ".train.tokens"
    path.write_bytes(b"".join(pair_line(source, target) + b"\n" for source, target in PAIRS))
    with TokenPairFile(path) as pairs:
        yield pairs


def test_a_line_holds_both_sides_and_reads_back():
    assert pair_line([b"the", b"cat"], [b"le", b"chat"]) == b"the cat\tle chat"
    assert all(line_pair(pair_line(*pair)) == pair for pair in PAIRS)


def test_pairs_are_read_by_index_and_slice(token_file):
    assert len(token_file) == 3
    assert [token_file[i] for i in range(3)] == PAIRS and token_file[-1] == PAIRS[2]
    assert token_file[1:3] == PAIRS[1:3] and token_file[2:9] == PAIRS[2:] and token_file[2:1] == []
    assert list(token_file.lines()) == [pair_line(*pair) for pair in PAIRS]
    with pytest.raises(IndexError, match=r"\.train\.tokens: pair 3 of 3"):
        token_file[3]


def test_the_index_is_on_disk_while_open_and_removed_on_close(token_file):
    assert token_file[0] == PAIRS[0]
    assert token_file.index_path.stat().st_size == 4 * 8  # the start of each line, then the end
    token_file.close()
    assert not token_file.index_path.exists()
    assert token_file[2] == PAIRS[2]  # written again


def test_appended_lines_are_read_after_the_index_is_written_again(token_file):
    assert len(token_file) == 3
    assert token_file.append(iter([pair_line([b"x"], [b"y"])])) == 1
    assert len(token_file) == 3  # the pairs there were when reading by index began
    token_file.close()
    assert len(token_file) == 4 and token_file[3] == ([b"x"], [b"y"])


def test_joined_pairs_drawn_from_the_file_are_those_drawn_from_a_list(tmp_path):
    pairs = [([f"s{i}".encode()] * (i % 3 + 1), [f"t{i}".encode()] * (i % 4 + 1)) for i in range(200)]
    path = tmp_path / "tokens"
    path.write_bytes(b"".join(pair_line(*pair) + b"\n" for pair in pairs))
    with TokenPairFile(path) as from_disk:
        drawn = list(SentenceJoiner.sample_joined_pairs(from_disk, 40, 8, 4, seed=5))
        assert drawn == list(SentenceJoiner.sample_joined_pairs(pairs, 40, 8, 4, seed=5))


def test_a_last_line_without_line_break_is_refused(tmp_path):
    (tmp_path / "tokens").write_bytes(b"a\tb\nc\td")
    with pytest.raises(ValueError, match="tokens: its last line has no line break"):
        len(TokenPairFile(tmp_path / "tokens"))
