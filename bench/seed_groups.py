"""Runs of one recipe that differ only in their seed, summarised: the mean and range of their BLEU.

Two configs trained for a few minutes differ by less than a BLEU, and so do two seeds of one config (where
the time budget ends moves it too): a difference counts only beside that spread. `bench.subwords --groups`
writes these summaries next to its per-model rows.
"""

import statistics


def parse_groups(entries, measured):
    """{group: [model names]} of `name=model+model+...` entries (the `--groups` flag), each model one of
    `measured` (the names of the models the bench measures)."""
    groups = {}
    for entry in entries:
        name, _, members = entry.partition("=")
        if not name or not members:
            raise ValueError(f"--groups entry {entry!r}: expected NAME=MODEL+MODEL+...")
        groups[name] = members.split("+")
        missing = [member for member in groups[name] if member not in measured]
        if missing:
            raise ValueError(f"group {name!r} names models that are not measured: {missing}")
    return groups


def summarize_groups(models, groups):
    """{group: {"members", "seeds", "updates", "bleu": {split: {"mean", "min", "max"}}, "equal_updates_bleu"}}.

    `models` is `bench.subwords`'s per-model report: each with "training" (its "updates" and "seed") and
    "bleu" (and optionally "equal_updates"."bleu") as {split: {"searched": BLEU}}; `groups` as `parse_groups`
    returns them.
    """
    summaries = {}
    for group, members in groups.items():
        runs = [models[member] for member in members]
        summaries[group] = {
            "members": members,
            "seeds": [run["training"].get("seed") for run in runs],
            "updates": [run["training"]["updates"] for run in runs],
            "bleu": _spread([run["bleu"] for run in runs]),
        }
        if all("equal_updates" in run for run in runs):
            summaries[group]["equal_updates_bleu"] = _spread([run["equal_updates"]["bleu"] for run in runs])
    return summaries


def _spread(scores):
    """{split: {"mean", "min", "max"}} of the searched BLEU of runs, each {split: {"searched": BLEU}}."""
    spread = {}
    for split in scores[0]:
        values = [score[split]["searched"] for score in scores]
        spread[split] = {"mean": round(statistics.fmean(values), 2), "min": min(values), "max": max(values)}
    return spread
