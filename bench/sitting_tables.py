"""The Markdown rows of one CPU kind's tables in docs/performance.md, and its README column, from its results files.

    python -m bench.sitting_tables --name=xeon_amx        # after `python -m bench.sitting` on that CPU

Prints, from `peer_comparison_NAME.json`, `peer_comparison_NAME_bf16.json`, `command_latency_NAME.json`,
`profile_NAME.json` and `profile_NAME_bf16.json` (those present): each table of *Beside the peer*, *What the user
waits for* and *Where the time goes* with its header, and the cells of the README's speed column; with
`--write=docs/performance.md` each table of the page with the same header is replaced by it. The prose around
them (what the numbers mean, the sitting's times, what changed since the last one) is still written by hand;
`tests/test_sitting_tables.py` checks that docs/performance.md shows these rows as printed here.
"""

import json
import pathlib

from absl import app, flags

from bench.bench_flags import register_check
from bench.provenance import cpu_kind
from rnnsearch_tf.cli.errors import parse_flags, with_one_line_errors

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
# Issue 62's targets: training and decoding rates over the peer's, whole commands' times over the peer's.
RATE_TARGET = 1.5
ONE_SENTENCE_TARGET = 1.2
TEST_SET_TARGET = 0.5
REDUCED_PRECISION_TARGET = 0.33  # issue 63: a test set with bf16 or int8 weights
CLIENT_TARGET_S = 0.5  # one sentence through `rnnsearch client`, seconds
FAMILIES = {"xeon": "Xeon", "epyc": "EPYC", "cpu": "CPU"}


def label(name):
    """`xeon_amx` -> `Xeon-AMX`: a CPU kind as docs/performance.md names it."""
    family, _, matmuls = name.partition("_")
    return f"{FAMILIES.get(family, family)}-{matmuls.upper()}" if matmuls else FAMILIES.get(family, family)


def row(*cells):
    """A Markdown table row; an empty cell is one space, as the tables here write it."""
    return "|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|"


def separator(columns):
    return "|" + "---|" * columns


def _ratio(value):
    text = f"{value:.2f}x"
    return f"**{text}**" if value >= RATE_TARGET else text


def comparison_rows(report, kind_label, bf16=False):
    """The table of *Beside the peer*: the peer, ours, ours with early stopping, the ratios."""
    peer, ours, early = report["peer"], report["ours"], report["ours"]["early_stopping"]
    flops, ratios = report["flops_per_target_token"], report["ratios_ours_over_peer"]

    def system(side, name):
        return [f"{side['train_tgt_tok_per_s']:,.0f}", f"{side['train_sents_per_s']:.1f}",
                f"{flops[name] / 1e6:.1f} M", f"{side['fraction_of_peak_matmul']:.2f}",
                f"{side['translate_sents_per_s']:.1f}", f"{side['translate_tgt_tok_per_s']:,.0f}",
                f"{side['detokenized_bleu']:.2f}"]

    decoding = f"{_ratio(ratios['translate_sents_per_s'])} ({ratios['translate_sents_per_s_early_stopping']:.2f}x)"
    return [
        row(f"system ({kind_label}{', bf16' if bf16 else ''})", "training target tok/s", "sentences/s", "FLOP/token",
            "of peak matmul", "decoding sent/s", "decoding tok/s", "test_2016 BLEU"),
        separator(8),
        row(f"OpenNMT-py, emb 256, hidden 512{' (float32)' if bf16 else ''}", *system(peer, "peer")),
        row("ours at the peer's decoder size, " + ("`--precision=auto` (bf16)" if bf16 else "float32"),
            *system(ours, "ours")),
        row("the same model with `--early_stopping`" + ("" if bf16 else " (OpenNMT-py's stopping rule)"),
            *[""] * 4, f"{early['translate_sents_per_s']:.1f}", f"{early['translate_tgt_tok_per_s']:,.0f}",
            f"{early['detokenized_bleu']:.2f}"),
        row("ratio over the peer", _ratio(ratios["train_tgt_tok_per_s"]), "", "", "", decoding,
            f"{ratios['translate_tgt_tok_per_s']:.2f}x", ""),
    ]


def _verdict(value, target, name="", unit=""):
    return f"≤ {target}{unit}{name}: {'met' if value <= target else 'not met'}"


# Our translate cases of `bench.command_latency`: (case, system) -> (the row's label, its target cell).
COMMAND_ROWS = {
    "one_sentence": [
        ("ours", "translate one sentence, whole vocabulary (`--noshortlist`)", [ONE_SENTENCE_TARGET]),
        ("ours_shortlist", "the same over the model directory's shortlist (what `translate` does)",
         [ONE_SENTENCE_TARGET]),
        ("ours_bf16", "the same, bf16 weights (`--precision=mixed_bfloat16`)", []),
        ("ours_int8", "the same, int8 weights (`--quantize=int8`)", []),
        ("ours_int8_bf16", "the same, int8 weights widened to bf16", []),
    ],
    "test_set": [
        ("ours", "translate test_2016 (1000 sentences, batches of 80), whole vocabulary", [TEST_SET_TARGET]),
        ("ours_shortlist", "the same over the shortlist", [TEST_SET_TARGET]),
        ("ours_bf16", "the same, bf16 weights", [TEST_SET_TARGET, REDUCED_PRECISION_TARGET]),
        ("ours_int8", "the same, int8 weights", [REDUCED_PRECISION_TARGET]),
        ("ours_int8_bf16", "the same, int8 weights widened to bf16", [REDUCED_PRECISION_TARGET]),
    ],
}


def command_rows(report, kind_label):
    """The table of *What the user waits for*: our whole commands beside the peer's, and the REST client."""
    rows = [row(f"command ({kind_label})", "ours (s)", "peak MiB", "first command (s)", "the peer (s)", "peak MiB",
                "ours / peer", "target"), separator(8)]
    for case, systems in COMMAND_ROWS.items():
        result = report["cases"][case]
        for system, text, targets in systems:
            if system not in result:
                continue
            ours, peer, ratio = result[system], result["peer"], result[f"ratio_{system}_over_peer"]
            verdicts = [_verdict(ratio, target, " (issue 63)" if target == REDUCED_PRECISION_TARGET and
                                 len(targets) > 1 else "") for target in targets]
            rows.append(row(text, f"{ours['wall_s']:.2f}", str(ours["peak_mib"]), f"{ours['first_run_s']:.2f}",
                            f"{peer['wall_s']:.2f}", str(peer["peak_mib"]), f"{ratio:.2f}", "; ".join(verdicts)))
    client = report["cases"].get("client_one_sentence")
    if client:
        wall = client["ours"]["wall_s"]
        rows.append(row("`rnnsearch client --rest_url=...` of one sentence, `rnnsearch serve` running", f"{wall:.2f}",
                        str(client["ours"]["peak_mib"]), "", "", "", "", _verdict(wall, CLIENT_TARGET_S, unit=" s")))
    return rows


PROFILE_STEPS = {"train": ("training update", "loss", "optimizer"), "decode": ("beam-5 decoding step", "search", None)}


def profile_rows(report, bf16=False):
    """Rows of the table of *Where the time goes*: each step, ours and (float32 only) the peer's; none without a
    report."""
    rows = []
    if not report:
        return rows
    for step, (text, own, optimizer) in PROFILE_STEPS.items():
        for side in ("ours", "peer"):
            if side not in report.get(step, {}):
                continue
            result = report[step][side]
            ms, matmul = result["categories_ms"], result["matmul"]
            system = "OpenNMT-py" if side == "peer" else "ours, bf16 (`--precision=mixed_bfloat16`)" if bf16 else "ours"
            categories = [ms["matmul"], ms["gated_unit"], ms["attention"], ms["readout"], ms[own]]
            rows.append(row(
                text, system, f"{result['wall_ms']['median']:.1f}", *[f"{value:.1f}" for value in categories],
                f"{ms[optimizer]:.1f}" if optimizer else "–",
                *[f"{ms[name]:.1f}" for name in ("loop_control", "between_ops", "other")],
                f"{matmul['gflop_per_s']:.0f} of {matmul['limit_gflop_per_s']:.0f} ({matmul['fraction_of_limit']:.2f})",
                f"{matmul['wall_gflop_per_s']:.0f} ({matmul['wall_fraction_of_limit']:.2f})"))
    return rows


def profile_header(kind_label):
    return [row(f"step ({kind_label})", "system", "wall ms, median", "matmul", "gated unit", "attention", "readout",
                "loss / search", "optimizer", "loop control", "between ops", "other",
                "matmul GFLOP/s, of the limit at its shapes",
                "matmul FLOPs over the wall time, GFLOP/s (of the limit)"), separator(14)]


def readme_cells(float32, bf16, commands):
    """The README speed column's cells, top to bottom (None where a file is missing)."""
    def rates(key, bf16_name):
        if not float32:
            return None
        text = f"{float32['ratios_ours_over_peer'][key]:.2f}x the peer"
        return text + (f"; {bf16_name}: {bf16['ratios_ours_over_peer'][key]:.2f}x" if bf16 else "")

    cells = [rates("train_tgt_tok_per_s", "bf16 (`--precision=auto`)"), rates("translate_sents_per_s", "bf16")]
    if not commands:
        return cells + [None] * 3
    cases = commands["cases"]
    one, test = cases["one_sentence"], cases["test_set"]
    cells.append(f"{one['ours_shortlist']['wall_s']:.2f} s / {one['peer']['wall_s']:.2f} s")
    bf16_weights = f" (bf16 weights: {test['ours_bf16']['wall_s']:.2f} s)" if "ours_bf16" in test else ""
    cells.append(f"{test['ours_shortlist']['wall_s']:.2f} s / {test['peer']['wall_s']:.2f} s{bf16_weights}")
    client = cases.get("client_one_sentence")
    cells.append(f"{client['ours']['wall_s']:.2f} s" if client else None)
    return cells


def tables(name, results_dir):
    """{"peer_comparison", "peer_comparison_bf16", "command_latency", "profile", "readme"}: each a list of lines, for
    the files of `name` in `results_dir` (a table whose file is missing is left out)."""
    def load(stem):
        path = pathlib.Path(results_dir) / f"{stem}.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None

    kind_label = label(name)
    float32, bf16 = load(f"peer_comparison_{name}"), load(f"peer_comparison_{name}_bf16")
    commands, profile, profile_bf16 = load(f"command_latency_{name}"), load(f"profile_{name}"), load(
        f"profile_{name}_bf16")
    found = {
        "peer_comparison": float32 and comparison_rows(float32, kind_label),
        "peer_comparison_bf16": bf16 and comparison_rows(bf16, kind_label, bf16=True),
        "command_latency": commands and command_rows(commands, kind_label),
        "profile": (profile or profile_bf16) and profile_header(kind_label) + profile_rows(profile)
        + profile_rows(profile_bf16, bf16=True),
        "readme": (float32 or commands) and [cell or "" for cell in readme_cells(float32, bf16, commands)],
    }
    return {key: lines for key, lines in found.items() if lines}


def replace_tables(text, found):
    """`text` with each table of `found` (its header line and the rows below it) put in place of the table with the
    same header; the names of the tables it has no header for."""
    lines, missing = text.split("\n"), []
    for key, table in found.items():
        if key == "readme":
            continue
        if table[0] not in lines:
            missing.append(key)
            continue
        start = lines.index(table[0])
        end = next((index for index in range(start, len(lines)) if not lines[index].startswith("|")), len(lines))
        lines[start:end] = table
    return "\n".join(lines), missing


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    name = _NAME.value or cpu_kind()
    found = tables(name, _RESULTS_DIR.value)
    if not found:
        raise app.UsageError(f"no results files of {name} in {_RESULTS_DIR.value} (run `python -m bench.sitting`)")
    for key, lines in found.items():
        print(f"## {key}\n" + "\n".join(lines) + "\n")
    if _WRITE.value:
        page = pathlib.Path(_WRITE.value)
        text, missing = replace_tables(page.read_text(encoding="utf-8"), found)
        page.write_text(text, encoding="utf-8")
        if missing:
            print(f"{page}: no table with the header of {', '.join(missing)}: add it by hand (printed above)")


if __name__ == "__main__":
    # Flags only when run as a command: tests import this module beside bench.sitting, whose flags share names.
    _NAME = flags.DEFINE_string("name", None, "The CPU kind in the files' names (default: provenance.cpu_kind()).")
    _RESULTS_DIR = flags.DEFINE_string("results_dir", "bench/results", "Where the results files are.")
    _WRITE = flags.DEFINE_string("write", None, "Replace the tables of this kind in this page (docs/performance.md): "
                                 "each table whose header line is the one printed here.")
    register_check(_WRITE, lambda path: pathlib.Path(path).read_text(encoding="utf-8"))
    app.run(with_one_line_errors(main), flags_parser=parse_flags)
