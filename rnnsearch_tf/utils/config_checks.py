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
