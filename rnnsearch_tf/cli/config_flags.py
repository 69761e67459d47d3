"""absl flags generated from the config dataclasses, so that every default and help text is written once.

Each field of a config dataclass becomes a flag of the same name, with the field's default, the text of
its entry in the class docstring's `Args:` section as help, and `DEFINE_enum` where the field's
metadata names its `choices`. Entry points define the flags at import and build the config with
`config_from_flags`.
"""

import dataclasses
import re
import typing

from absl import flags

_DEFINE_BY_TYPE = {
    bool: flags.DEFINE_bool,
    int: flags.DEFINE_integer,
    float: flags.DEFINE_float,
    str: flags.DEFINE_string,
}


def define_config_flags(config_class, skip=(), flag_values=flags.FLAGS):
    """Defines one flag per field of `config_class` (except `skip`); returns `{name: FlagHolder}`.

    Fields without a default (required by the dataclass) get a `None` default and are marked required.
    """
    helps = field_helps(config_class)
    holders = {}
    for field in dataclasses.fields(config_class):
        if field.name in skip:
            continue
        value_type = _value_type(field.type)
        required = field.default is dataclasses.MISSING
        default = None if required else field.default
        help_text = helps.get(field.name) or field.name
        choices = field.metadata.get("choices")
        if choices is not None:
            holder = flags.DEFINE_enum(field.name, default, list(choices), help_text, flag_values=flag_values)
        else:
            holder = _DEFINE_BY_TYPE[value_type](field.name, default, help_text, flag_values=flag_values)
        if required:
            flags.mark_flag_as_required(field.name, flag_values=flag_values)
        holders[field.name] = holder
    return holders


def given_flags(holders):
    """The names ("--name") of those of `holders` (FlagHolders) set to other than their defaults: what a command
    that would not read them refuses, rather than ignore (a flagfile listing every flag at its default passes)."""
    return [f"--{holder.name}" for holder in holders if holder.value != holder.default]


def write_flagfile(path, holders, values):
    """Writes those of `holders` (FlagHolders) with a value to `path` as a flagfile, one `--name=value` a line,
    `values` ({name: value}) replacing a flag's own (or setting one left unset): the absolute paths a command's
    record holds, so that `--flagfile=path` reads the same from any working directory."""
    lines = [f"--{holder.name}={values[holder.name]}" if values.get(holder.name) is not None else holder.serialize()
             for holder in holders if values.get(holder.name) is not None or holder.value is not None]
    with open(path, "w", encoding="utf-8") as stream:
        stream.writelines(line + "\n" for line in lines)


def config_from_flags(config_class, holders, **values):
    """`config_class` built from the flags' values, plus `values` for the fields without a flag."""
    return config_class(**{name: holder.value for name, holder in holders.items()}, **values)


def field_helps(config_class):
    """`{field name: help text}` from the `Args:` section of the class docstring: an entry is `name: text`,
    continued on more deeply indented lines."""
    lines = (config_class.__doc__ or "").splitlines()
    helps, name, indent, in_args = {}, None, None, False
    for line in lines:
        stripped = line.strip()
        if stripped == "Args:":
            in_args = True
            continue
        if not in_args or not stripped:
            continue
        line_indent = len(line) - len(line.lstrip())
        entry = re.match(r"^([a-z_][a-z0-9_]*): (.*)$", stripped)
        if entry and (indent is None or line_indent <= indent):
            indent = line_indent
            name = entry.group(1)
            helps[name] = entry.group(2)
        elif indent is not None and line_indent > indent:
            helps[name] += " " + stripped
        else:
            break
    return helps


def _value_type(annotation):
    """int for `int` and `typing.Optional[int]`, and so on."""
    if annotation in _DEFINE_BY_TYPE:
        return annotation
    arguments = [argument for argument in typing.get_args(annotation) if argument is not type(None)]
    if len(arguments) == 1 and arguments[0] in _DEFINE_BY_TYPE:
        return arguments[0]
    raise TypeError(f"no flag type for the config field type {annotation!r}")
