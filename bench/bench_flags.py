"""What the benches' flags share: `NAME=VALUE,...` lists (`--trials=baseline=work_dirs/t0,...`,
`--eval_dirs=test_2016:DIR`) and checks of the folders and files they name, both done when the command line is
parsed.

A bad entry, or a value its check refuses, ends the command in one `error: flag --NAME=VALUE: ...` line
(`rnnsearch_tf.cli.errors.parse_flags`) before the bench starts, not in a traceback where the bench first splits the
entry or opens the file.
"""

import pathlib

from absl import flags


class NamedListParser(flags.ListParser):
    """A comma list of `NAME<separator>VALUE` entries -> [(NAME, VALUE)] in their order (a NAME may repeat).

    Args:
        separator: what parts each entry's name from its value (its first occurrence does).
        value_name: the value's name in messages (`MODEL_DIR`).
        check: `check(value)` raises ValueError or OSError saying what is wrong with a value; None: any value.
    """

    def __init__(self, separator="=", value_name="VALUE", check=None):
        super().__init__()
        self.separator = separator
        self.value_name = value_name
        self.check = check

    def parse(self, argument):
        pairs = []
        for entry in super().parse(argument):
            name, separator, value = entry.partition(self.separator)
            if not (name and separator and value):
                raise ValueError(f"{entry!r} is not NAME{self.separator}{self.value_name}")
            if self.check:
                try:
                    self.check(value)
                except OSError as error:  # absl reports a parser's ValueError as the flag's
                    raise ValueError(str(error)) from error
            pairs.append((name, value))
        return pairs

    def flag_type(self):
        return f"comma list of NAME{self.separator}{self.value_name}"


class NamedListSerializer(flags.ArgumentSerializer):
    """[(NAME, VALUE)] -> `NAME=VALUE,...`, as the command line gives it."""

    def __init__(self, separator):
        self.separator = separator

    def serialize(self, value):
        return ",".join(f"{name}{self.separator}{entry}" for name, entry in value)


def define_named_list(name, default, help, separator="=", value_name="VALUE", check=None, required=False,
                      flag_values=flags.FLAGS):
    """A flag whose value is [(NAME, VALUE)] of `--name=NAME=VALUE,...` (see NamedListParser); its FlagHolder."""
    return flags.DEFINE(NamedListParser(separator, value_name, check), name, default, help, flag_values=flag_values,
                        serializer=NamedListSerializer(separator), required=required)


def register_check(flag, check):
    """Checks `flag`'s value (a FlagHolder's) when the command line is parsed: `check(value)` raises ValueError or
    OSError saying what is wrong (`ModelDir(path).read_data_info`, `DataDir(path).read_metadata`); None passes."""

    def checker(value):
        if value is not None:
            try:
                check(value)
            except (OSError, ValueError) as error:
                raise flags.ValidationError(str(error)) from error
        return True

    flags.register_validator(flag, checker)


def evaluate_output_folder(folder):
    """A NamedListParser check: `folder` holds what `rnnsearch evaluate --output_dir=FOLDER` wrote."""
    from rnnsearch_tf.evaluation.evaluator import METRICS_FILE  # here: the evaluator imports TensorFlow

    if not (pathlib.Path(folder) / METRICS_FILE).is_file():
        raise ValueError(f"{folder} has no {METRICS_FILE}: not an `rnnsearch evaluate --output_dir` folder")


def without_flags(argv, names):
    """`argv` (command-line arguments) without the flags `names`, spelled `--NAME=VALUE` or `--NAME VALUE`: what a
    bench passes on to a process of its own that must not get them (`bench.train_throughput`'s per preset)."""
    arguments, skip_value = [], False
    for argument in argv:
        if skip_value:
            skip_value = False
        elif argument in {f"--{name}" for name in names}:
            skip_value = True
        elif not argument.startswith(tuple(f"--{name}=" for name in names)):
            arguments.append(argument)
    return arguments
