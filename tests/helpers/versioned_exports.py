"""Versions of the tiny export that translate differently (other random weights), to copy into a base path
the way a user drops a new version in: the tests of version switching (tests/test_served_model.py,
tests/test_model_manager.py)."""

import os
import shutil

from helpers.made_once import made_once
from helpers.serving_test_utils import SEARCH_OPTIONS, write_model_dir

# Sentences every version translates; their translations tell the versions apart.
PROBES = ["the cat sees the big dog .", "a small green house ?", "dog", "the house sees a cat"]


def staged_versions(tmp_path_factory, count=3):
    """{version: version folder} of `count` exports (versions 1..count, each with its own weights), made once
    per session in a folder no server watches."""
    staged = _made(tmp_path_factory, count)["folders"]
    return {int(version): path for version, path in staged.items()}


def _made(tmp_path_factory, count):
    return made_once(tmp_path_factory, f"versions-{count}", lambda root: _export_versions(root, count))


def _export_versions(root, count):
    """Exports versions 1..count into root/exports, each with the weights of its own model directory, and
    translates PROBES with each version's translator. One `Translator` exports them all, each checkpoint read
    into its model in turn: the search graphs of the versions are the same, and its functions are traced for
    the first export only. Returns {"folders": {version: folder}, "translations": {version: [text]}}."""
    import tensorflow as tf

    from rnnsearch_tf.inference.translator import Translator
    from rnnsearch_tf.models.model_dir import ModelDir
    from serving import export

    translator, made = None, {"folders": {}, "translations": {}}
    for version in range(1, count + 1):
        model_dir = write_model_dir(root / f"model_{version}", seed=10 + version)
        if translator is None:
            translator = Translator.from_model_dir(model_dir, **SEARCH_OPTIONS)
        else:
            checkpoint_path = ModelDir(model_dir).checkpoint_path()
            status = tf.train.Checkpoint(model=translator.model).read(checkpoint_path)
            status.expect_partial().assert_existing_objects_matched()
            translator.checkpoint_path = checkpoint_path
        made["folders"][version] = export.export(translator, str(root / "exports"), version)
        translations = translator.translate(tf.constant(PROBES))["translation"].numpy()
        made["translations"][version] = [text.decode("utf-8") for text in translations]
    return made


def copy_version(staged, version, base_path, complete=True):
    """Copies staged `version` into `base_path/<version>`; `complete=False` leaves out variables/ (a copy still
    under way). Returns the folder."""
    target = os.path.join(base_path, str(version))
    ignore = None if complete else shutil.ignore_patterns("variables")
    shutil.copytree(staged[version], target, ignore=ignore)
    return target


def expected_translations(tmp_path_factory, staged):
    """{version: [translation of each of PROBES]} by each staged version's translator, which its export answers
    (tests/test_export.py: a fresh process's signatures equal the Python path)."""
    translations = _made(tmp_path_factory, len(staged))["translations"]
    return {int(version): texts for version, texts in translations.items()}
