"""`rnnsearch <command> [flags]`: one command for the whole tool, as `onmt-main` or `python -m joeynmt`.

    rnnsearch build-data --flagfile=configs/data/multi30k.flags --output_dir=work_dirs/data/multi30k
    rnnsearch train --flagfile=configs/multi30k_rnnsearch.flags --model_dir=work_dirs/multi30k_rnnsearch
    rnnsearch translate --model_dir=work_dirs/multi30k_rnnsearch < test.en > test.fr

Each command is also `python -m MODULE` with the module named in `COMMANDS`; `rnnsearch COMMAND --help`
lists its flags.
"""

import importlib
import sys

from absl import app

COMMANDS = {
    "build-data": ("data_pipeline.build", "tokenize a parallel corpus, build vocabularies and TFRecord shards"),
    "tokenize": ("data_pipeline.tokenize", "Moses-tokenize (or detokenize) stdin to stdout"),
    "train": ("rnnsearch_tf.cli.train", "train RNNsearch or RNNencdec from a flagfile"),
    "average": ("rnnsearch_tf.cli.average_checkpoints", "average the last or best checkpoints of a run"),
    "translate": ("rnnsearch_tf.cli.translate", "translate a file with a model directory, an ensemble or an export"),
    "score": ("rnnsearch_tf.cli.score", "log p(y | x) of sentence pairs; rescore Moses n-best lists"),
    "evaluate": ("rnnsearch_tf.cli.evaluate", "the paper's tables and figures for one or several models"),
    "export": ("serving.export", "write a SavedModel for TensorFlow Serving"),
    "serve": ("serving.local_server", "serve an export over TF Serving's gRPC and REST APIs"),
}


def run_command(module_name, argv=None):
    """Runs a command module's `main` under absl, its docstring as the `--help` text."""
    module = importlib.import_module(module_name)
    sys.modules["__main__"].__doc__ = module.__doc__
    app.run(module.main, argv=argv)


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
