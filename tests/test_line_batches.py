"""data_pipeline.line_batches: consecutive batches read lazily, in one pass."""

import itertools

import pytest

from data_pipeline.line_batches import batched


def test_batches_keep_every_item_in_order_and_only_the_last_is_short():
    assert list(batched(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(batched([], 3)) == []
    assert list(batched("ab", 5)) == [["a", "b"]]


def test_an_endless_iterable_is_read_one_batch_at_a_time():
    counter = itertools.count()
    first = next(batched(counter, 4))
    assert first == [0, 1, 2, 3] and next(counter) == 4


def test_a_batch_size_below_one_is_refused():
    with pytest.raises(ValueError, match="at least 1, got 0"):
        next(batched([1], 0))
