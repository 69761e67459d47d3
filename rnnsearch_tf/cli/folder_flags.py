"""The folder flags of the commands, each named and described here once: --model_dir (a model directory, an
ensemble, or a comma list of them), --saved_model (an export instead of --model_dir), --output_dir (the folder a
command writes) and --data_dir (a folder of corpus files, or a built data directory).

A command calls the `define_*` functions of the flags it takes when it is imported; `rnnsearch` imports one
command a process (`main.run_command`), as absl refuses a flag defined twice. `rnnsearch train` takes its
--model_dir and --data_dir from `TrainingConfig`'s fields (`config_flags`).
"""

from absl import flags

from data_pipeline.data_files import DATA_ENVIRONMENT_VARIABLE
from rnnsearch_tf.models.model_dir import ENSEMBLE_SEPARATOR


def define_model_dir(use=None, ensemble=False, comma_list=False, required=False, flag_values=flags.FLAGS):
    """The --model_dir FlagHolder: a model directory written by training (`ModelDir`).

    Args:
        use: what the command does with it, when its name does not say (e.g. tokenize's "instead of --lang, its
            text codec"); appended to the help.
        ensemble: several directories joined by "+" decode as an ensemble (`ModelDir.split`).
        comma_list: a comma list of them (`flags.DEFINE_list`, whose help says so), e.g. the models evaluate
            compares.
        required: the command stops at parsing without it.

    Example: `define_model_dir(ensemble=True)` is --model_dir of translate, "Model directory written by training;
    several joined by + decode as an ensemble."
    """
    help_text = "Model directories written by training" if comma_list else "Model directory written by training"
    if use:
        help_text += f": {use}"
    if ensemble:
        help_text += f"; several joined by {ENSEMBLE_SEPARATOR} decode as an ensemble"
    define = flags.DEFINE_list if comma_list else flags.DEFINE_string
    return define("model_dir", None, f"{help_text}.", flag_values=flag_values, required=required)


def define_saved_model(flag_values=flags.FLAGS):
    """The --saved_model FlagHolder: an export of `rnnsearch export`, read instead of --model_dir."""
    return flags.DEFINE_string(
        "saved_model", None, "Instead of --model_dir: an export of `rnnsearch export` (base path or version folder); "
        "its search options are those fixed at export: the search flags, --checkpoint, --precision, --quantize and "
        "--function_cache are refused with it.", flag_values=flag_values,
    )


def define_output_dir(holds, flag_values=flags.FLAGS):
    """The --output_dir FlagHolder, required: the folder the command writes, which `holds` what it names (e.g.
    "shards, vocabularies and metadata.json")."""
    return flags.DEFINE_string("output_dir", None, f"Folder for {holds}.", flag_values=flag_values, required=True)


def define_corpus_folder(flag_values=flags.FLAGS):
    """The --data_dir FlagHolder of the commands that read corpora: the folder of corpus files, `RNNSEARCH_DATA`
    when not given (`data_files.data_root_from_environment`)."""
    return flags.DEFINE_string(
        "data_dir", None, f"Folder of corpus files; default: ${DATA_ENVIRONMENT_VARIABLE}.", flag_values=flag_values
    )


def define_data_dir(use, flag_values=flags.FLAGS):
    """The --data_dir FlagHolder of a command that reads a data directory (`DataDir`) written by
    `rnnsearch build-data`; `use` says what the command reads in it, and its default."""
    return flags.DEFINE_string(
        "data_dir", None, f"Data directory written by `rnnsearch build-data`: {use}.", flag_values=flag_values
    )
