"""Checks shared by the config dataclasses."""

import dataclasses


def check_choices(config):
    """Raises ValueError naming the first field whose value is not among its metadata's `choices`."""
    for field in dataclasses.fields(config):
        choices = field.metadata.get("choices")
        if choices is not None and getattr(config, field.name) not in choices:
            raise ValueError(
                f"{type(config).__name__}.{field.name} must be one of {tuple(choices)}, got "
                f"{getattr(config, field.name)!r}"
            )


def check_at_least(config, minimum, names):
    """Raises ValueError naming the first of the fields `names` whose value is below `minimum`."""
    for name in names:
        value = getattr(config, name)
        if value < minimum:
            raise ValueError(f"{type(config).__name__}.{name} must be at least {minimum}, got {value}")


def zero_means_unset(config, names):
    """Optional numeric fields `names`: a negative value raises ValueError naming the field, and 0 becomes None, as if
    the flag were left out (Marian's `--after-epochs 0`), so that a command line can lift a flagfile's limit."""
    for name in names:
        value = getattr(config, name)
        if value is not None and value < 0:
            raise ValueError(f"{type(config).__name__}.{name} must be at least 0 (0: unset), got {value}")
        if value == 0:
            object.__setattr__(config, name, None)  # frozen dataclasses too
