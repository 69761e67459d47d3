"""The --source_language and --target_language flags of the commands that read text files: any language code,
checked when the flags are parsed (`data_pipeline.languages`), none assumed."""

from absl import flags

from data_pipeline import corpus_registry, languages


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
    """ValueError naming the flag where one of `holders` gives a language other than the registered `corpus`'s
    (`languages.same_language`: "cmn" agrees with a corpus's "zh"): a registered corpus knows its own languages, so
    a flag that differs would be ignored. The message names the registered corpora of the pair the flags ask for."""
    wanted = {holder.name: holder.value or getattr(corpus, holder.name) for holder in holders}
    for holder in holders:
        registered = getattr(corpus, holder.name)
        if holder.value is not None and not languages.same_language(holder.value, registered):
            of_pair = [name for name, other in corpus_registry.CORPORA.items()
                       if all(languages.same_language(getattr(other, side), code) for side, code in wanted.items())]
            hint = (f"name a corpus of that pair ({', '.join(of_pair)})" if of_pair
                    else "no registered corpus is of that pair: give its text files")
            raise ValueError(f"--{holder.name}={holder.value} but corpus {corpus.name}'s is {registered!r}: leave "
                             f"the flag out, or {hint}")
