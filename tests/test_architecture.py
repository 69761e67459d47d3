"""The house plan holds (`.importlinter`): every package imports only the packages below it, `serving` none of
`rnnsearch_tf`."""

import ast
import configparser
import importlib.util
import pathlib
import subprocess
import sys

from conftest import REPO_ROOT
from rnnsearch_tf.cli.main import COMMANDS


def test_imports_point_down():
    lint_imports = pathlib.Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint_imports), "--no-cache"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "2 kept, 0 broken" in result.stdout


def _layers():
    """The layers of the contract, top first, each a list of the modules or packages it joins with "|"."""
    contract = configparser.ConfigParser()
    contract.read(REPO_ROOT / ".importlinter")
    lines = contract["importlinter:contract:layers"]["layers"].strip().splitlines()
    return [[name.strip() for name in line.split("|")] for line in lines]


def test_the_commands_main_imports_by_name_are_below_it():
    """import-linter does not see `importlib.import_module(name)`: the contract puts `rnnsearch_tf.cli.main`
    on top, and each module it runs by name must exist in a layer below it."""
    top, *below = _layers()
    assert top == ["rnnsearch_tf.cli.main"]
    names = [name for layer in below for name in layer]
    for module_name, _ in COMMANDS.values():
        assert importlib.util.find_spec(module_name) is not None, module_name
        assert any(module_name == name or module_name.startswith(f"{name}.") for name in names), module_name


def test_every_module_of_the_command_line_is_a_layer():
    """The contract names the modules of rnnsearch_tf/cli one by one: a new one must be placed too."""
    names = {name for layer in _layers() for name in layer}
    modules = {f"rnnsearch_tf.cli.{path.stem}" for path in (REPO_ROOT / "rnnsearch_tf" / "cli").glob("*.py")}
    assert modules - {"rnnsearch_tf.cli.__init__"} <= names


def test_the_folders_own_their_file_names():
    """No file name of a model, data or export folder is written, in either quotes, outside the modules that own
    them (the folder classes and the constants they share): every other module asks `ModelDir`, `DataDir` or
    `ExportDir`."""
    from data_pipeline import constants, export_dir
    from rnnsearch_tf.models import model_dir

    names = {constants.METADATA_FILE, constants.MODEL_DATA_FILE, constants.MODEL_FILE, constants.FLAGS_FILE,
             constants.SOURCE_VOCABULARY_FILE, constants.TARGET_VOCABULARY_FILE, model_dir.PARENT_FILE,
             model_dir.TRAINING_STATE_FILE, model_dir.SHORTLIST_FILE, export_dir.BATCHING_PARAMETERS_FILE,
             export_dir.SAVED_MODEL_FILE, export_dir.ASSETS_FOLDER,
             *(part for path in (export_dir.VARIABLES_INDEX_FILE, export_dir.SETTINGS_FILE, export_dir.WARMUP_FILE)
               for part in pathlib.PurePath(path).parts)}
    owners = {"data_pipeline/constants.py", "data_pipeline/export_dir.py", "rnnsearch_tf/models/model_dir.py"}
    found = sorted(
        (str(path.relative_to(REPO_ROOT)), name)
        for package in ("data_pipeline", "rnnsearch_tf", "serving", "bench")
        for path in (REPO_ROOT / package).rglob("*.py") if str(path.relative_to(REPO_ROOT)) not in owners
        for name in names if any(f"{quote}{name}{quote}" in path.read_text(encoding="utf-8") for quote in "\"'")
    )
    assert found == []


def _code_lines(function):
    """Lines of a function's definition without its docstring."""
    lines = function.end_lineno - function.lineno + 1
    first = function.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines -= first.end_lineno - first.lineno + 1
    return lines


def test_no_function_is_longer_than_60_code_lines():
    """STYLE.md: functions short enough to read at once (decorators and docstring not counted)."""
    too_long = sorted(
        (str(path.relative_to(REPO_ROOT)), node.name, _code_lines(node))
        for package in ("data_pipeline", "rnnsearch_tf", "serving", "bench")
        for path in (REPO_ROOT / package).rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _code_lines(node) > 60
    )
    assert too_long == []
