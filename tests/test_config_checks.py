"""rnnsearch_tf/utils/config_checks.py: the first bad field is named, with its class, the rule and the value; a 0
that means unset becomes None."""

import dataclasses
import typing

import pytest

from rnnsearch_tf.utils.config_checks import check_at_least, check_choices, zero_means_unset


@dataclasses.dataclass
class Options:
    mode: str = dataclasses.field(default="fast", metadata={"choices": ("fast", "exact")})
    order: str = dataclasses.field(default="up", metadata={"choices": ["up", "down"]})
    name: str = "anything"  # no choices: never checked
    width: int = 3
    depth: float = 0.5


def test_values_among_their_choices_pass():
    check_choices(Options(mode="exact", order="down", name="not a choice anywhere"))


def test_the_first_field_outside_its_choices_is_named():
    with pytest.raises(ValueError, match=r"^Options\.mode must be one of \('fast', 'exact'\), got 'slow'$"):
        check_choices(Options(mode="slow", order="sideways"))
    with pytest.raises(ValueError, match=r"^Options\.order must be one of \('up', 'down'\), got 'sideways'$"):
        check_choices(Options(order="sideways"))


def test_the_minimum_itself_passes():
    check_at_least(Options(width=1, depth=1.0), 1, ("width", "depth"))
    check_at_least(Options(width=-5), 0, ())  # only the fields named are checked


def test_the_first_named_field_below_the_minimum_is_named():
    with pytest.raises(ValueError, match=r"^Options\.depth must be at least 1, got 0\.5$"):
        check_at_least(Options(width=0), 1, ("depth", "width"))
    with pytest.raises(ValueError, match=r"^Options\.width must be at least 0, got -1$"):
        check_at_least(Options(width=-1), 0, ("width", "depth"))


@dataclasses.dataclass(frozen=True)
class Limits:
    hours: typing.Optional[float] = None
    epochs: typing.Optional[int] = None


def test_zero_becomes_none_in_a_frozen_dataclass_and_other_values_stay():
    limits = Limits(hours=0.0, epochs=2)
    zero_means_unset(limits, ("hours", "epochs"))
    assert (limits.hours, limits.epochs) == (None, 2)
    untouched = Limits(hours=0.0)
    zero_means_unset(untouched, ("epochs",))  # only the fields named
    assert untouched.hours == 0.0


def test_a_negative_value_is_named():
    with pytest.raises(ValueError, match=r"^Limits\.epochs must be at least 0 \(0: unset\), got -1$"):
        zero_means_unset(Limits(epochs=-1), ("hours", "epochs"))
