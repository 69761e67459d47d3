"""Shared pytest fixtures."""

import os
import pathlib
import signal
import subprocess
import sys
import tempfile

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
# The commands' caches (`--function_cache`'s default) go to a folder of this test session, not the user's, removed
# when the session's process exits (each xdist worker has its own).
_CACHE_HOME = tempfile.TemporaryDirectory(prefix="rnnsearch-tests-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME.name
# A suite started in the background (`cmd &`, `nohup`) inherits SIGINT ignored, which `StopRequest` rightly leaves
# ignored; the tests of stopping send themselves SIGINT and SIGTERM, so they start from Python's own handlers.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.fixture(scope="session", autouse=True)
def graphs_without_grappler():
    """The tests' own graphs run as `translate` runs its cached search (`utils/function_cache.py`): without Grappler,
    TensorFlow's rewriting of a graph at its first run, which had hidden a failure `translate` met (an RNNencdec
    model's constrained search: CHANGELOG, Fixed). The commands and servers the tests start are processes of their
    own and run as a user's do: a served SavedModel with Grappler."""
    import tensorflow as tf

    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})


# Files of minutes, handed to the test workers before the others: with `--dist loadfile` a file runs on one
# worker, and one of them handed out last keeps the other worker idle until it ends (xdist's own order, most
# tests first, put test_learning.py, two tests and ~2 minutes, among the last). `scripts/test.sh` keeps this
# order (`--no-loadscope-reorder`). The first two hold `large` tests only (`-m large`: the quickstart first).
# test_served_model.py makes the versioned exports (`helpers.versioned_exports`, made once) while the other worker
# trains: test_model_manager.py and test_model_service.py, side by side in the files' order, both read them, and
# one worker had waited 15 s for the other to make them.
FIRST_FILES = (
    "test_quickstart.py", "test_learning.py", "test_trainer.py", "test_fault_tolerance.py", "test_served_model.py",
    "test_shortlist.py",
)


def pytest_collection_modifyitems(items):
    """The tests of `FIRST_FILES` first, in that order; the others after them in their own order."""
    rank = {name: position for position, name in enumerate(FIRST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(FIRST_FILES)))


def fresh_python(script):
    """The words `script` prints when a new Python interpreter runs it in the repository (what a command
    imports can only be seen in a process that imported nothing before it); TensorFlow's log quiet."""
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, check=True,
        env={"TF_CPP_MIN_LOG_LEVEL": "3", "PATH": "/usr/bin:/bin"},
    )
    return result.stdout.split()


@pytest.fixture(scope="session")
def data_root():
    """The folder of real corpora (RNNSEARCH_DATA, else ../shared/data beside the checkout)."""
    root = pathlib.Path(os.environ.get("RNNSEARCH_DATA", REPO_ROOT.parent / "shared" / "data"))
    if not (root / "MANIFEST.md").exists() and not (root / "multi30k").exists():
        pytest.skip(f"no corpora under {root}: set RNNSEARCH_DATA to the data folder")
    return root


@pytest.fixture(scope="session")
def toy_data(tmp_path_factory):
    """The toy corpus built by `data_pipeline` (`helpers.toy_translation.build_toy_data`; its raw text in ../raw),
    made once per test session and read by every worker (`helpers.made_once`): tests never write in it."""
    from helpers.made_once import made_once
    from helpers.toy_translation import build_toy_data

    return pathlib.Path(made_once(tmp_path_factory, "toy", lambda folder: str(build_toy_data(folder))))


@pytest.fixture(scope="session")
def trained_toy_model(tmp_path_factory, toy_data):
    """The model directory of a tiny RNNsearch trained on the toy corpus until it translates it (dev BLEU above 30;
    `helpers.trained_toy_model`), made once per test session: tests never write in it."""
    from helpers.trained_toy_model import trained_model_dir

    return trained_model_dir(tmp_path_factory, toy_data)


@pytest.fixture(scope="session")
def tiny_model_dirs(tmp_path_factory):
    """{"rnnsearch", "rnnencdec"}: model directories of a tiny random-weight RNNsearch and RNNencdec
    (`helpers.serving_test_utils.write_model_dir`, seeds 3 and 4), made once per test worker."""
    from helpers.serving_test_utils import write_model_dir

    root = tmp_path_factory.mktemp("tiny_models")
    return {"rnnsearch": write_model_dir(root / "search"),
            "rnnencdec": write_model_dir(root / "encdec", "rnnencdec", seed=4)}


@pytest.fixture(scope="session")
def tiny_translators(tiny_model_dirs):
    """{"rnnsearch", "rnnencdec", "ensemble"}: `Translator`s (SEARCH_OPTIONS, 5 alternatives) of `tiny_model_dirs`
    and of the ensemble of both, made once per test worker: their functions are traced once for every file that
    calls them (tests/test_translator.py, tests/test_translator_constraints.py)."""
    from helpers.serving_test_utils import SEARCH_OPTIONS
    from rnnsearch_tf.inference.translator import Translator

    search_dir, encdec_dir = tiny_model_dirs["rnnsearch"], tiny_model_dirs["rnnencdec"]
    return {name: Translator.from_model_dir(path, num_alternatives=5, **SEARCH_OPTIONS) for name, path in (
        ("rnnsearch", search_dir), ("rnnencdec", encdec_dir), ("ensemble", f"{search_dir}+{encdec_dir}"))}


@pytest.fixture(scope="session")
def exported_translator(tmp_path_factory):
    """The `Translator` (SEARCH_OPTIONS) of `helpers.serving_test_utils.exported_model`'s model directory, the
    Python path the tests compare its export with; made once per test worker (its functions traced once)."""
    from helpers.serving_test_utils import SEARCH_OPTIONS, exported_model
    from rnnsearch_tf.inference.translator import Translator

    return Translator.from_model_dir(exported_model(tmp_path_factory)[0], **SEARCH_OPTIONS)


@pytest.fixture(scope="session")
def german_english(tmp_path_factory, data_root):
    """(data_dir, model_dir) of a tiny German -> English word-level model trained on Multi30k's first pairs by
    `build-data` and `train` (`helpers.other_languages`), made once per test session: tests never write in it."""
    from helpers import other_languages

    return other_languages.german_english(tmp_path_factory, data_root)


@pytest.fixture(scope="session")
def chinese_english(tmp_path_factory, data_root):
    """(data_dir, model_dir) of a tiny Chinese -> English SentencePiece model trained on Tatoeba's first cmn-eng
    lines (`helpers.other_languages`), made once per test session: tests never write in it."""
    from helpers import other_languages

    return other_languages.chinese_english(tmp_path_factory, data_root)


@pytest.fixture(scope="session")
def english_chinese(tmp_path_factory, data_root):
    """(data_dir, model_dir) of an English -> Chinese SentencePiece model of random weights on the same lines
    (`helpers.other_languages`), made once per test session: tests never write in it."""
    from helpers import other_languages

    return other_languages.english_chinese(tmp_path_factory, data_root)


@pytest.fixture(scope="session")
def german_english_export(tmp_path_factory, german_english):
    """The export folder of `german_english`'s model by `rnnsearch export`, made once per test session."""
    from helpers import other_languages

    return other_languages.exported(tmp_path_factory, "german-english", german_english.model_dir)


@pytest.fixture(scope="session")
def chinese_english_export(tmp_path_factory, chinese_english):
    """The export folder of `chinese_english`'s model by `rnnsearch export`, made once per test session."""
    from helpers import other_languages

    return other_languages.exported(tmp_path_factory, "chinese-english", chinese_english.model_dir)
