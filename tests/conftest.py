"""Shared pytest fixtures."""

import os
import pathlib

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def data_root():
    """The folder of real corpora (RNNSEARCH_DATA, else ../shared/data beside the checkout)."""
    root = pathlib.Path(os.environ.get("RNNSEARCH_DATA", REPO_ROOT.parent / "shared" / "data"))
    if not (root / "MANIFEST.md").exists() and not (root / "multi30k").exists():
        pytest.skip(f"no corpora under {root}: set RNNSEARCH_DATA to the data folder")
    return root
