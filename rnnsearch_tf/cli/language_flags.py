"""The --source_language and --target_language flags of the commands that read text files: any language code,
checked when the flags are parsed (`data_pipeline.languages`), none assumed."""

from absl import flags

from data_pipeline import languages


def _checked(code):
    """A flag validator: True for no value or a language code, else absl's error in one line with the reason."""
    reason = None if code is None else languages.why_not(code)
    if reason is not None:
        raise flags.ValidationError(reason)
    return True


def define_language_flags(what):
    """(--source_language, --target_language) FlagHolders, no default, for `what` (e.g. "text files").

    Example: `--source_language=xx` stops at parsing with
    "flag --source_language=xx: not a language code: give an ISO 639-1 code, ...".
    """
    holders = []
    for side in ("source", "target"):
        holders.append(flags.DEFINE_string(
            f"{side}_language", None,
            f"{side.capitalize()} language of {what}: an ISO 639-1 code (ISO 639-3 for a language without one), "
            f"e.g. {languages.EXAMPLES}."))
        flags.register_validator(f"{side}_language", _checked)
    return tuple(holders)


def required_languages(holders, what):
    """The two codes of `holders`, or ValueError naming the missing flag: text carries no language of its own."""
    for holder in holders:
        if holder.value is None:
            raise ValueError(f"--{holder.name} is required with {what}")
    return tuple(holder.value for holder in holders)


def check_agree(holders, corpus):
    """ValueError naming the flag where one of `holders` gives a language other than the registered `corpus`'s:
    a registered corpus knows its own languages, so a flag that differs would be ignored."""
    for holder in holders:
        registered = getattr(corpus, holder.name)
        if holder.value not in (None, registered):
            raise ValueError(f"--{holder.name}={holder.value} but corpus {corpus.name}'s is {registered!r}: leave "
                             f"the flag out, or name the corpus of that pair (e.g. "
                             f"{corpus.name.rsplit('_', 1)[0]}_<source><target>)")
