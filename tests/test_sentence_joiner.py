"""SentenceJoiner: test pairs joined in consecutive groups, training pairs joined within a length."""

import itertools

import pytest

from data_pipeline.sentence_joiner import SentenceJoiner, line_runs, run_lines

SOURCES = [f"s{i} ." for i in range(1, 8)]  # 7 pairs
TARGETS = [f"t{i} ." for i in range(1, 8)]


def test_join_cuts_consecutive_groups_of_each_size_and_drops_a_short_last_group():
    joined = SentenceJoiner((2, 3)).join(SOURCES, TARGETS)
    assert [(pair.source, pair.lines, pair.sentences) for pair in joined] == [
        ("s1 . s2 .", (1, 2), 2), ("s3 . s4 .", (3, 4), 2), ("s5 . s6 .", (5, 6), 2),
        ("s1 . s2 . s3 .", (1, 2, 3), 3), ("s4 . s5 . s6 .", (4, 5, 6), 3),
    ]
    assert [pair.target for pair in joined][:2] == ["t1 . t2 .", "t3 . t4 ."]


def test_both_sides_are_joined_the_same_way_and_size_one_keeps_the_pairs():
    sources, targets = [" A dog runs. ", "Two men."], ["Un chien court.", " Deux hommes. "]
    assert SentenceJoiner((2,)).join(sources, targets)[0][:2] == ("A dog runs. Two men.", "Un chien court. Deux hommes.")
    assert [pair[:2] for pair in SentenceJoiner((1,)).join(sources, targets)] == [
        ("A dog runs.", "Un chien court."), ("Two men.", "Deux hommes."),
    ]


def test_each_side_is_joined_as_its_language_writes_sentences():
    sources, targets = ["Why me?", "I know nothing."], ["为什么是我？", "我一无所知。"]
    assert SentenceJoiner((2,), "en", "cmn").join(sources, targets)[0][:2] == (
        "Why me? I know nothing.", "为什么是我？我一无所知。")
    assert SentenceJoiner((2,), "zh", "en").join(targets, sources)[0][:2] == (
        "为什么是我？我一无所知。", "Why me? I know nothing.")


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="got 7 source sentences but 6 target sentences"):
        SentenceJoiner().join(SOURCES, TARGETS[:-1])
    with pytest.raises(ValueError, match="at least 1"):
        SentenceJoiner((0, 2))
    with pytest.raises(ValueError, match="^size 2 is given twice: each size's groups are written once$"):
        SentenceJoiner((2, 3, 2))
    with pytest.raises(ValueError, match="max_sentences must be at least 2"):
        SentenceJoiner.sample_joined_pairs([([1], [2])] * 3, 5, 50, 1, seed=0)


def _pieces(pairs):
    return [([10 * i + j for j in range(length)], [100 * i + j for j in range(length + 1)])
            for i, length in enumerate(pairs)]


def test_sampled_training_pairs_are_consecutive_pairs_within_the_maximum_length():
    pairs = _pieces([3, 5, 2, 7, 4, 6, 3, 2, 5, 4] * 5)
    joined = list(SentenceJoiner.sample_joined_pairs(pairs, 40, max_length=12, max_sentences=4, seed=3))
    assert len(joined) == 40
    sources = [source for source, _ in pairs]
    for source, target in joined:
        assert len(source) <= 12 and len(target) <= 12
        start = next(i for i, candidate in enumerate(sources) if candidate == source[: len(candidate)])
        taken, length = 0, 0
        while length < len(source):
            length += len(pairs[start + taken][0])
            taken += 1
        assert 2 <= taken <= 4
        assert source == sum((pairs[start + k][0] for k in range(taken)), [])
        assert target == sum((pairs[start + k][1] for k in range(taken)), [])


def test_sampling_is_seeded_and_gives_fewer_pairs_when_few_fit():
    pairs = _pieces([3, 5, 2, 7, 4, 6] * 10)
    first = list(SentenceJoiner.sample_joined_pairs(pairs, 20, 20, 5, seed=1))
    assert first == list(SentenceJoiner.sample_joined_pairs(pairs, 20, 20, 5, seed=1))
    assert first != list(SentenceJoiner.sample_joined_pairs(pairs, 20, 20, 5, seed=2))
    assert list(SentenceJoiner.sample_joined_pairs(_pieces([8, 8, 8]), 5, 15, 3, seed=0)) == []


def test_joined_reads_the_pairs_as_it_joins_them():
    """`joined` takes the pairs as they come, a group at a time: an endless stream of pairs gives its first
    groups, and a list gives what `join` does, size by size."""
    endless = ((number, (f"s{number} .", f"t{number} .")) for number in itertools.count(1))
    first = list(itertools.islice(SentenceJoiner((3,)).joined(endless), 2))
    assert [(pair.source, pair.target, pair.lines, pair.sentences) for pair in first] == [
        ("s1 . s2 . s3 .", "t1 . t2 . t3 .", (1, 2, 3), 3), ("s4 . s5 . s6 .", "t4 . t5 . t6 .", (4, 5, 6), 3)]


def test_a_group_keeps_the_lines_of_its_pairs_where_lines_were_dropped_before_it():
    """The pairs of lines 1, 2, 4 and 5 (line 3 dropped as it was read) make groups of consecutive pairs, each
    with its input lines."""
    numbered = [(1, ("a", "A")), (2, ("b", "B")), (4, ("d", "D")), (5, ("e", "E"))]
    assert [(pair.source, pair.lines) for pair in SentenceJoiner((3, 2)).joined(numbered)] == [
        ("a b d", (1, 2, 4)), ("a b", (1, 2)), ("d e", (4, 5))]


def test_lines_txt_runs_name_the_lines_of_a_pair_and_read_back():
    assert [line_runs(lines) for lines in ((1, 2), (1, 2, 4), (7,), (3, 4, 5, 9, 10))] == [
        "1-2", "1-2,4-4", "7-7", "3-5,9-10"]
    for lines in ((1, 2), (1, 2, 4), (7,), (3, 4, 5, 9, 10)):
        assert run_lines(line_runs(lines)) == lines
