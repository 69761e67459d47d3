"""Consecutive batches of an iterable, read in one pass: how the corpus tools hold a bounded part of any corpus."""

import itertools


def batched(items, size):
    """Lists of `size` consecutive items of `items` (the last one shorter), read lazily: `itertools.batched`
    of Python 3.12, which 3.11 lacks."""
    if size < 1:
        raise ValueError(f"batch size must be at least 1, got {size}")
    iterator = iter(items)
    while batch := list(itertools.islice(iterator, size)):
        yield batch
