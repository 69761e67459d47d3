"""`rnnsearch <command> [flags]`: one command for the whole tool, as `onmt-main` or `python -m joeynmt`.

    rnnsearch build-data --flagfile=configs/data/multi30k.flags --output_dir=work_dirs/data/multi30k
    rnnsearch train --flagfile=configs/multi30k_rnnsearch.flags --model_dir=work_dirs/multi30k_rnnsearch
    rnnsearch translate --model_dir=work_dirs/multi30k_rnnsearch < test.en > test.fr

`python -m rnnsearch_tf.train` (and `.translate`, `.score`, `.evaluate`, `.average_checkpoints`, `.shortlist`)
is the command of that name; `rnnsearch COMMAND --help` lists its flags. A command prints its progress and results only: TensorFlow's start-up messages are
hidden and a user error (a missing file, a bad value, a bad flag) ends in one `error: ...` line and exit
code 1; `--verbosity=1` (absl's flag) shows TensorFlow's messages and the traceback too (without it,
TensorFlow's native messages of the last command are in `NATIVE_LOG`, /tmp/rnnsearch-tf-UID.native.log).
"""

import importlib
import logging
import os
import sys
import tempfile

from absl import app, flags
from absl import logging as absl_logging

from rnnsearch_tf.cli.errors import parse_flags, with_one_line_errors

# Where TensorFlow's native messages go unless --verbosity is given.
NATIVE_LOG = os.path.join(tempfile.gettempdir(), f"rnnsearch-tf-{os.getuid()}.native.log")

COMMANDS = {
    "build-data": ("rnnsearch_tf.cli.build_data", "tokenize a parallel corpus, build vocabularies and TFRecord shards"),
    "select-data": ("rnnsearch_tf.cli.select_data", "keep the general-corpus pairs most like an in-domain corpus (Axelrod et al.)"),
    "tokenize": ("rnnsearch_tf.cli.tokenize", "tokenize (or detokenize) stdin to stdout as a model's text codec does"),
    "join-sentences": ("rnnsearch_tf.cli.join_sentences", "a long test set: consecutive test pairs joined into one"),
    "train": ("rnnsearch_tf.cli.train", "train RNNsearch or RNNencdec from a flagfile"),
    "average": ("rnnsearch_tf.cli.average_checkpoints", "average the last or best checkpoints of a run"),
    "translate": ("rnnsearch_tf.cli.translate", "translate a file with a model directory, an ensemble or an export"),
    "shortlist": ("rnnsearch_tf.cli.shortlist", "build a model directory's vocabulary shortlist for --shortlist"),
    "score": ("rnnsearch_tf.cli.score", "log p(y | x) of sentence pairs; rescore Moses n-best lists"),
    "evaluate": ("rnnsearch_tf.cli.evaluate", "the paper's tables and figures for one or several models"),
    "export": ("rnnsearch_tf.cli.export", "write a SavedModel for TensorFlow Serving"),
    "serve": ("rnnsearch_tf.cli.serve", "serve an export over TF Serving's gRPC and REST APIs"),
    "client": ("rnnsearch_tf.cli.client", "translate with a served model over gRPC or REST"),
}


# Commands end their process without the interpreter's teardown once they have written, closed and flushed
# everything: unloading TensorFlow's modules and graphs takes most of a second, longer than translating one
# sentence. `train` ends the ordinary way: its TensorBoard writers close in the teardown.
ORDINARY_EXIT = ("rnnsearch_tf.cli.train",)

# Commands that never import TensorFlow (the gRPC/REST client: its start-up is all it costs).
WITHOUT_TENSORFLOW = ("rnnsearch_tf.cli.client",)

# A command's help flags: absl's (whose `--help` exits with status 1, as for an error) and `-h`, as argparse's
# commands and OpenNMT's take it; help exits with status 0.
HELP_FLAGS = {"-h": "short", "-?": "short", "--help": "short", "--helpshort": "short", "--helpfull": "full"}

# The packages whose flags are a command's own (`--help` lists them); a process imports one command.
OUR_PACKAGES = ("rnnsearch_tf", "data_pipeline", "serving")


def import_tensorflow_without_matplotlib():
    """Imports TensorFlow (and with it Keras) while `import matplotlib` fails, then lets it work again.

    Keras imports matplotlib (pyplot, fonts, pyparsing) when it starts if it is installed, for its image
    galleries (`keras.src.visualization`): 0.4-0.5 s of the 2.1 s that `import tensorflow` takes here,
    paid by every command. Keras's galleries then do without it (we never call them); our own modules
    import matplotlib afterwards as usual (`evaluation.plots`).
    """
    if "tensorflow" in sys.modules or "matplotlib" in sys.modules:
        return
    sys.modules["matplotlib"] = None  # `import matplotlib...` raises ImportError, which Keras expects
    try:
        import tensorflow  # noqa: F401
    finally:
        del sys.modules["matplotlib"]


def run_command(module_name, argv=None):
    """Runs a command module's `main` under absl, its docstring as the `--help` text."""
    argv_seen = sys.argv if argv is None else argv
    verbose = _asks_for_verbosity(argv_seen)
    if not verbose:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        _hide_native_stderr()
    if module_name not in WITHOUT_TENSORFLOW:
        import_tensorflow_without_matplotlib()
    module = importlib.import_module(module_name)
    _make_our_flags_key_flags()
    if not verbose:
        _quiet_python_loggers()
    sys.modules["__main__"].__doc__ = module.__doc__
    try:
        help_asked = _asks_for_help(argv_seen)
        if help_asked:
            _print_help(help_asked)
            sys.exit(0)
        app.run(with_one_line_errors(module.main), argv=argv, flags_parser=parse_flags)
    except SystemExit as exit_request:
        if module_name in ORDINARY_EXIT:
            raise
        _exit_now(exit_request.code)


def _make_our_flags_key_flags():
    """absl's `--help` lists the key flags of the main module (named `sys.argv[0]`): a command's flags are
    defined in its module and in the shared ones it imports (`search_flags`, `config_flags`), so they are
    made key flags of the main module, where `--help` finds them."""
    for module, module_flags in flags.FLAGS.flags_by_module_dict().items():
        if module.split(".")[0] in OUR_PACKAGES:
            for flag in module_flags:
                flags.FLAGS.register_key_flag_for_module(sys.argv[0], flag)


def _exit_now(code):
    """Flushes what the command wrote and ends the process with `code` (SystemExit's rules)."""
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            pass
    absl_logging.flush()
    os._exit(code or 0)


def _asks_for_verbosity(argv):
    return any(arg.split("=")[0] in ("--verbosity", "-v", "--v") for arg in argv[1:])


def _asks_for_help(argv):
    """The help that a flag before any `--` asks for, "short" or "full", whatever else the line holds (as
    argparse answers `-h`); None without one."""
    for arg in argv[1:]:
        if arg == "--":
            return None
        if arg in HELP_FLAGS:
            return HELP_FLAGS[arg]
    return None


def _print_help(kind):
    """What absl's help flags print: the command's docstring and its own flags, or every flag (absl's own
    among them)."""
    app.define_help_flags()
    app.usage(shorthelp=kind == "short", writeto_stdout=True)
    if kind == "short":
        print("\nTry --helpfull to get a list of all flags.")


def _hide_native_stderr():
    """Sends what C++ writes to stderr (TensorFlow's CUDA, oneDNN and CPU notes, some written before its
    log level applies) to NATIVE_LOG, while Python's `sys.stderr` (our progress, warnings, errors,
    tracebacks) keeps the original stderr."""
    sys.stderr.flush()
    terminal = os.dup(2)
    sys.stderr = os.fdopen(terminal, "w", buffering=1, encoding="utf-8", errors="backslashreplace")
    absl_logging.get_absl_handler().python_handler.setStream(sys.stderr)
    native_log = os.open(NATIVE_LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(native_log, 2)
    os.close(native_log)


def _quiet_python_loggers():
    if "tensorflow" in sys.modules:
        import tensorflow as tf

        tf.get_logger().setLevel("ERROR")  # AutoGraph and tracing notes
        tf.autograph.set_verbosity(0)
        # Some TensorFlow modules log through absl's logger, ours too: e.g. loading a SavedModel warns of
        # "unsaved custom gradients" (the encoder's), which no search asks for.
        absl_logging.get_absl_logger().addFilter(_ErrorsOnlyFrom(os.path.dirname(tf.__file__)))


class _ErrorsOnlyFrom:
    """A logging filter that keeps a record from the code under `directory` only from level ERROR up."""

    def __init__(self, directory):
        self.directory = os.path.join(directory, "")

    def filter(self, record):
        return record.levelno >= logging.ERROR or not record.pathname.startswith(self.directory)


def usage():
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: rnnsearch <command> [flags]   (rnnsearch <command> --help for its flags)", "", "commands:"]
    lines += [f"  {name:<{width}}  {summary}" for name, (_, summary) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv=None):
    """The `rnnsearch` console script."""
    argv = list(sys.argv if argv is None else argv)
    if len(argv) < 2 or argv[1] in ("-h", "--help", "help"):
        print(usage())
        return 0 if len(argv) >= 2 else 2
    command = argv[1]
    if command not in COMMANDS:
        print(f"rnnsearch: unknown command {command!r}\n\n{usage()}", file=sys.stderr)
        return 2
    run_command(COMMANDS[command][0], [f"rnnsearch {command}", *argv[2:]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
