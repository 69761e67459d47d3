"""rnnsearch_tf/cli/folder_flags.py: --model_dir, --saved_model, --output_dir and --data_dir, defined in one module
for every command that takes them, with the help and the checks written there."""

import pathlib
import re

import pytest
from absl import flags

from conftest import fresh_python
from rnnsearch_tf.cli import folder_flags
from rnnsearch_tf.cli.main import COMMANDS

FOLDER_FLAGS = "rnnsearch_tf.cli.folder_flags"
CONFIG_FLAGS = "rnnsearch_tf.cli.config_flags"  # train's, generated from `TrainingConfig`

# The module that defines each folder flag a command takes.
DEFINED_BY = {
    "build-data": {"output_dir": FOLDER_FLAGS, "data_dir": FOLDER_FLAGS},
    "select-data": {"output_dir": FOLDER_FLAGS, "data_dir": FOLDER_FLAGS},
    "join-sentences": {"output_dir": FOLDER_FLAGS, "data_dir": FOLDER_FLAGS},
    "tokenize": {"model_dir": FOLDER_FLAGS},
    "train": {"model_dir": CONFIG_FLAGS, "data_dir": CONFIG_FLAGS},
    "average": {"model_dir": FOLDER_FLAGS},
    "translate": {"model_dir": FOLDER_FLAGS, "saved_model": FOLDER_FLAGS},
    "shortlist": {"model_dir": FOLDER_FLAGS, "data_dir": FOLDER_FLAGS},
    "score": {"model_dir": FOLDER_FLAGS, "saved_model": FOLDER_FLAGS},
    "evaluate": {"model_dir": FOLDER_FLAGS, "output_dir": FOLDER_FLAGS},
    "export": {"model_dir": FOLDER_FLAGS},
    "serve": {},
    "client": {},
}


def test_every_command_is_listed():
    assert set(DEFINED_BY) == set(COMMANDS)


def test_no_command_defines_a_folder_flag_itself():
    # Static, over every command module: a command that wrote its own DEFINE_string("model_dir", ...) would
    # bring back a second help text and a second rule.
    own = re.compile(r"DEFINE_\w+\(\s*[\"'](model_dir|saved_model|output_dir|data_dir)[\"']")
    cli = pathlib.Path(folder_flags.__file__).parent
    offenders = [f"{path.name}: {match.group(1)}" for path in sorted(cli.glob("*.py"))
                 if path.name != "folder_flags.py" for match in own.finditer(path.read_text())]
    assert offenders == []


@pytest.mark.parametrize("command", ["translate", "build-data", "train"])
def test_a_command_takes_its_folder_flags_from_one_module(command):
    # One process per command, as `rnnsearch` runs them: two commands in one process define a flag twice.
    script = (
        "import importlib\n"
        "from absl import flags\n"
        f"importlib.import_module({COMMANDS[command][0]!r})\n"
        "for name in ('model_dir', 'saved_model', 'output_dir', 'data_dir'):\n"
        "    module = flags.FLAGS.find_module_defining_flag(name)\n"
        "    if module:\n"
        "        print(name, module)\n"
    )
    words = fresh_python(script)
    assert dict(zip(words[::2], words[1::2])) == DEFINED_BY[command]


def _parsed(*args, define):
    """The FlagValues holding the flags `define(flag_values)` makes, parsed from `args`."""
    flag_values = flags.FlagValues()
    define(flag_values)
    flag_values(["command", *args])
    return flag_values


def test_model_dir_says_what_the_command_accepts():
    def helps(**options):
        flag_values = flags.FlagValues()
        folder_flags.define_model_dir(flag_values=flag_values, **options)
        return flag_values["model_dir"].help

    assert helps() == "Model directory written by training."
    assert helps(ensemble=True) == "Model directory written by training; several joined by + decode as an ensemble."
    assert helps(use="instead of --lang, its text codec") == (
        "Model directory written by training: instead of --lang, its text codec.")
    assert helps(use="each a line in Figure 2", ensemble=True, comma_list=True) == (
        "Model directories written by training: each a line in Figure 2; several joined by + decode as an ensemble.")


def test_a_comma_list_of_model_dirs_keeps_each_ensemble_whole():
    flag_values = _parsed("--model_dir=runs/a+runs/b,runs/c",
                          define=lambda values: folder_flags.define_model_dir(comma_list=True, flag_values=values))
    assert flag_values.model_dir == ["runs/a+runs/b", "runs/c"]


@pytest.mark.parametrize("define, name", [
    (lambda values: folder_flags.define_model_dir(required=True, flag_values=values), "model_dir"),
    (lambda values: folder_flags.define_output_dir("report.md", flag_values=values), "output_dir"),
])
def test_a_required_folder_stops_the_command_at_parsing(define, name):
    with pytest.raises(flags.IllegalFlagValueError, match=f"flag --{name}=None: Flag --{name} must have a value"):
        _parsed(define=define)
    assert getattr(_parsed(f"--{name}=somewhere", define=define), name) == "somewhere"


def test_optional_folders_default_to_none():
    def define(flag_values):
        folder_flags.define_model_dir(flag_values=flag_values)
        folder_flags.define_saved_model(flag_values=flag_values)
        folder_flags.define_corpus_folder(flag_values=flag_values)

    flag_values = _parsed(define=define)
    assert (flag_values.model_dir, flag_values.saved_model, flag_values.data_dir) == (None, None, None)


def test_the_help_names_what_each_folder_holds():
    flag_values = flags.FlagValues()
    folder_flags.define_output_dir("shards, vocabularies and metadata.json", flag_values=flag_values)
    folder_flags.define_saved_model(flag_values=flag_values)
    assert flag_values["output_dir"].help == "Folder for shards, vocabularies and metadata.json."
    assert flag_values["saved_model"].help.startswith("Instead of --model_dir: an export of `rnnsearch export`")

    corpus_folder, data_dir = flags.FlagValues(), flags.FlagValues()
    folder_flags.define_corpus_folder(flag_values=corpus_folder)
    folder_flags.define_data_dir("its train shards are counted", flag_values=data_dir)
    assert corpus_folder["data_dir"].help == "Folder of corpus files; default: $RNNSEARCH_DATA."
    assert data_dir["data_dir"].help == (
        "Data directory written by `rnnsearch build-data`: its train shards are counted.")
