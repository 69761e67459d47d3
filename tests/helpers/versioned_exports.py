"""Versions of the tiny export that translate differently (other random weights), to copy into a base path
the way a user drops a new version in: the tests of version switching (tests/test_served_model.py,
tests/test_model_manager.py)."""

import os
import shutil

import numpy as np

from helpers.serving_test_utils import SEARCH_OPTIONS, write_model_dir

_STAGED = {}
# Sentences every version translates; their translations tell the versions apart.
PROBES = ["the cat sees the big dog .", "a small green house ?", "dog", "the house sees a cat"]


def staged_versions(tmp_path_factory, count=3):
    """{version: version folder} of `count` exports (versions 1..count, each with its own weights), made once
    per session in a folder no server watches."""
    if count not in _STAGED:
        from rnnsearch_tf.inference.translator import Translator
        from serving import export

        root = tmp_path_factory.mktemp("versions")
        staged = {}
        for version in range(1, count + 1):
            model_dir = write_model_dir(root / f"model_{version}", seed=10 + version)
            translator = Translator.from_model_dir(model_dir, **SEARCH_OPTIONS)
            staged[version] = export.export(translator, str(root / "exports"), version)
        _STAGED[count] = staged
    return _STAGED[count]


def copy_version(staged, version, base_path, complete=True):
    """Copies staged `version` into `base_path/<version>`; `complete=False` leaves out variables/ (a copy still
    under way). Returns the folder."""
    target = os.path.join(base_path, str(version))
    ignore = None if complete else shutil.ignore_patterns("variables")
    shutil.copytree(staged[version], target, ignore=ignore)
    return target


def expected_translations(staged):
    """{version: [translation of each of PROBES]} as each staged version answers alone."""
    from serving.servable import Servable

    expected = {}
    for version, path in staged.items():
        servable = Servable(os.path.dirname(path), "rnnsearch", version=version)
        outputs = servable.predict("translate", {"text": np.array([probe.encode() for probe in PROBES], object)})
        expected[version] = [text.decode("utf-8") for text in outputs["translation"]]
    return expected
