"""What a model directory's flags.txt says of its training, for the benches that compare trainings."""


def sampling_alpha(flag_lines):
    """The `--subword_sampling_alpha` of a model directory's flags.txt lines (0.0 when absent: fixed pieces)."""
    prefix = "--subword_sampling_alpha="
    values = [float(line[len(prefix):]) for line in flag_lines if line.startswith(prefix)]
    return values[-1] if values else 0.0
