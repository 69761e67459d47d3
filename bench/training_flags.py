"""What a model directory's flags.txt says of its training, for the benches that compare trainings."""


def sampling_alpha(flag_lines):
    """The `--subword_sampling_alpha` of a model directory's flags.txt lines (0.0 when absent: fixed pieces)."""
    return _last_value(flag_lines, "subword_sampling_alpha", float, 0.0)


def training_seed(flag_lines):
    """The `--seed` of a model directory's flags.txt lines (None when absent: not recorded)."""
    return _last_value(flag_lines, "seed", int, None)


def _last_value(flag_lines, name, convert, default):
    """The last value given to `--name` in flag lines, converted; `default` without one (absl keeps the last)."""
    prefix = f"--{name}="
    values = [convert(line[len(prefix):]) for line in flag_lines if line.startswith(prefix)]
    return values[-1] if values else default
