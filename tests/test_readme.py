"""The README and docs/ show what the benchmarks measured (`bench/results/*.json`), and their links resolve.

Every results file is checked by the test for its kind; a file of no known kind fails
`test_every_results_file_is_checked`. A number is shown when a table cell equals it as formatted here,
so a row whose number differs from the JSON fails.
"""

import json
import pathlib
import re

import pytest

from conftest import REPO_ROOT

ROOT = pathlib.Path(REPO_ROOT)
RESULTS = sorted((ROOT / "bench" / "results").glob("*.json"))
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
README_MAX_LINES = 260


def _table_rows(*paths):
    return [[cell.strip().strip("*") for cell in line.strip().strip("|").split("|")]
            for path in paths for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("|")]


TABLE_ROWS = _table_rows(*PAGES)
PERFORMANCE_ROWS = _table_rows(README, ROOT / "docs" / "performance.md")


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _row_with(*values, rows=TABLE_ROWS):
    return [row for row in rows if all(value in row for value in values)]


# Results files whose kind is the start of their name (the bench that writes them).
_KINDS_BY_NAME = ("decode_throughput", "train_throughput", "data_pipeline", "search_sweep", "command_latency",
                  "serving_load", "shortlist", "finetune", "long_inputs",
                  "quickstart_curves", "data_selection", "scale", "two_workers", "constraints",
                  "confidence", "subword_sampling", "gemm_limits", "profile",
                  "decode_precision")


def _kind(path):
    report = _load(path)
    if path.name.startswith("long_sentences"):
        return "long_sentences"
    if path.name.startswith("subwords"):
        return "subwords"
    if path.name.startswith("verbatim"):
        return "verbatim"
    if path.name.startswith("language_pairs"):
        return "language_pairs"
    if "models" in report:
        return "evaluation"
    if path.name.startswith("peer_comparison"):
        return "peer_comparison"
    if "peer" in report and "test_2016_bleu" in report:
        return "peer_run"
    return next((kind for kind in _KINDS_BY_NAME if path.name.startswith(kind)), None)


def _of_kind(kind):
    return [path for path in RESULTS if _kind(path) == kind]


def _ids(path):
    return path.name


def test_every_results_file_is_checked():
    assert RESULTS, "no bench/results/*.json"
    unchecked = [path.name for path in RESULTS if _kind(path) is None]
    assert not unchecked, f"no test checks these results files against the README and docs/: {unchecked}"


@pytest.mark.parametrize("path", RESULTS, ids=_ids)
def test_every_results_file_says_where_it_was_measured(path):
    provenance = _load(path).get("provenance")
    assert provenance, f"{path.name}: no provenance"
    assert re.fullmatch(r"[0-9a-f]{40}", provenance["commit"]), provenance["commit"]
    assert re.match(r"\d{4}-\d{2}-\d{2}", provenance["date"]), provenance["date"]
    assert provenance["cpu"] and isinstance(provenance["cpu_flags"], list), provenance


@pytest.mark.parametrize("path", _of_kind("evaluation"), ids=_ids)
def test_every_evaluated_model_has_its_row(path):
    for name, model in _load(path)["models"].items():
        test_sets = [key for key in model if key.startswith("test_")]
        values = [f"{model[test_set]['bleu']:.2f}" for test_set in test_sets]
        if all("chrf" in model[test_set] for test_set in test_sets):
            values.append(" / ".join(f"{model[test_set]['chrf']:.2f}" for test_set in test_sets))
        if model["updates"] is not None:
            values += [str(model["updates"]), f"{model['hours']:.2f}", f"{model['best_dev_bleu']:.2f}"]
        assert _row_with(*values), f"{path.name}: no table row shows {name}'s {values}"


@pytest.mark.parametrize("path", _of_kind("evaluation"), ids=_ids)
def test_unk_replaced_cells_show_the_bench_json(path):
    """A row's "UNK replaced" cell, right of a model's test_2016 "All" and "No UNK", is its JSON's, "–" where the
    JSON has none (a model without attention: no alignment to copy a source word from)."""
    for name, model in _load(path)["models"].items():
        scores = model.get("test_2016", {})
        if scores.get("bleu_no_unk") is None:
            continue
        replaced = scores.get("bleu_unk_replaced")
        expected = "–" if replaced is None else f"{replaced:.2f}"
        pair = [f"{scores['bleu']:.2f}", f"{scores['bleu_no_unk']:.2f}"]
        cells = [row[i + 2] for row in TABLE_ROWS for i in range(len(row) - 2) if row[i : i + 2] == pair]
        assert all(cell == expected for cell in cells), f"{path.name}: {name}'s UNK replaced {cells}, not {expected}"


@pytest.mark.parametrize("path", _of_kind("peer_run"), ids=_ids)
def test_the_peers_own_run_has_its_row(path):
    report = _load(path)
    values = [str(report["steps"]), f"{report['test_2016_bleu']:.2f}", f"{report['test_2017_bleu']:.2f}"]
    assert _row_with(*values), f"{path.name}: no table row shows the peer's {values}"


@pytest.mark.parametrize("path", _of_kind("peer_comparison"), ids=_ids)
def test_peer_comparison_rows_show_the_bench_json(path):
    report = _load(path)
    for side in ("peer", "ours"):
        values = [f"{report[side]['train_tgt_tok_per_s']:,.0f}", f"{report[side]['translate_sents_per_s']:.1f}",
                  f"{report[side]['detokenized_bleu']:.2f}"]
        assert _row_with(*values, rows=PERFORMANCE_ROWS), (
            f"{path.name}: no row of README.md or docs/performance.md shows the {side} numbers {values}")
    early = report["ours"].get("early_stopping")
    if early:
        values = [f"{early['translate_sents_per_s']:.1f}", f"{early['detokenized_bleu']:.2f}"]
        assert _row_with(*values, rows=PERFORMANCE_ROWS), f"{path.name}: no row shows early stopping's {values}"


@pytest.mark.parametrize("path", _of_kind("decode_throughput"), ids=_ids)
def test_decoding_rows_show_the_bench_json(path):
    report = _load(path)
    beams = [key for key in report if key.startswith("beam_") and key[5:].isdigit()]
    assert beams, f"{path.name}: no beam_N entries"
    for beam in beams:
        for test_set, result in report[beam].items():
            if test_set in ("model_step_ms", "export_variables_bytes"):  # the rest are test sets
                continue
            values = [beam[5:], f"{result['checkpoint']['sentences_per_s']:.1f}",
                      f"{result['checkpoint']['tokens_per_s']:,}", f"{result['saved_model']['sentences_per_s']:.1f}",
                      f"{result['checkpoint_one_sentence_at_a_time']['sentences_per_s']:.1f}"]
            assert _row_with(*values), f"{path.name}: no table row shows {beam} on {test_set}: {values}"


@pytest.mark.parametrize("path", _of_kind("train_throughput"), ids=_ids)
def test_training_rows_show_the_bench_json(path):
    report = _load(path)
    for preset in report if isinstance(report, list) else [report]:
        values = [f"{preset['target_tokens_per_s']:,}", f"{preset['sentences_per_s']}",
                  f"{preset['peak_rss_gib']:.2f}", f"{preset['fraction_of_matmul_limit']:.3f}",
                  f"{preset['median_step_seconds']:.2f}"]
        assert _row_with(*values), f"{path.name}: no table row shows the {preset['preset']} preset's {values}"


@pytest.mark.parametrize("path", _of_kind("data_pipeline"), ids=_ids)
def test_data_pipeline_rows_show_the_bench_json(path):
    report = _load(path)
    rates = {"build pairs/s": report["build"]["pairs_per_s"],
             "tokenizer sentences/s": report["tokenizer_sentences_per_s"],
             "sorted windows target tokens/s": report["sorted_window_batches_80x20"]["target_tokens_per_s"],
             "token-count batches target tokens/s": report["token_count_batches_4000"]["target_tokens_per_s"]}
    for name, rate in rates.items():
        assert _row_with(f"{rate:,}"), f"{path.name}: no table row shows {name} {rate:,}"


@pytest.mark.parametrize("path", _of_kind("search_sweep"), ids=_ids)
def test_search_sweep_rows_show_the_bench_json(path):
    """One row per beam and normalisation: beam | normalisation | BLEU at each length bound, largest bound first."""
    bleu = {}
    for setting in _load(path)["results"]:
        normalization = setting["length_normalization"]
        if normalization == "gnmt":
            normalization = f"gnmt α {setting['length_penalty_alpha']}"
        bleu.setdefault((str(setting["beam_size"]), normalization), {})[setting["maximum_length_a"]] = setting["bleu"]
    for (beam, normalization), by_bound in bleu.items():
        expected = [beam, normalization] + [f"{by_bound[bound]:.2f}" for bound in sorted(by_bound, reverse=True)]
        assert [row for row in TABLE_ROWS if row[:len(expected)] == expected], (
            f"{path.name}: no table row is {expected}")


def test_readme_is_a_front_door():
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail to docs/ (at most {README_MAX_LINES})"


def _slug(heading):
    """GitHub's anchor for a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path):
    return {_slug(line.lstrip("#")) for line in _outside_code(path) if re.match(r"#{1,6} ", line)}


def _outside_code(path):
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield line


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_an_existing_file(page):
    broken = []
    for line in _outside_code(page):
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
                continue
            file_part, _, anchor = target.partition("#")
            linked = (page.parent / file_part).resolve() if file_part else page
            if not linked.exists():
                broken.append(target)
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{target} (no such heading)")
    assert not broken, f"{page.relative_to(ROOT)}: broken links {broken}"


@pytest.mark.parametrize("path", _of_kind("command_latency"), ids=_ids)
def test_command_rows_show_the_bench_json(path):
    for case, result in _load(path)["cases"].items():
        for system in [name for name in result if name.startswith("ours")]:  # ours, ours_shortlist, ours_bf16, ...
            values = [f"{result[system]['wall_s']:.2f}", str(result[system]["peak_mib"])]
            if "peer" in result:
                values += [f"{result['peer']['wall_s']:.2f}", f"{result[f'ratio_{system}_over_peer']:.2f}"]
            assert _row_with(*values, rows=PERFORMANCE_ROWS), f"{path.name}: no row shows {system} {case}: {values}"


@pytest.mark.parametrize("path", _of_kind("shortlist"), ids=_ids)
def test_shortlist_rows_show_the_bench_json(path):
    splits = _load(path)["splits"].values()
    for name in next(iter(splits)):  # the decoders, and "peer" where the peer decoded test_2016 beside them
        values = [f"{split[name][key]:{spec}}" for split in splits if name in split
                  for key, spec in (("bleu", ".2f"), ("sentences_per_s", ".1f"), ("over_peer", ".2f"))
                  if key in split[name]]
        assert _row_with(*values), f"{path.name}: no table row shows {name}: {values}"


@pytest.mark.parametrize("path", _of_kind("serving_load"), ids=_ids)
def test_serving_rows_show_the_bench_json(path):
    report = _load(path)
    assert _row_with(f"{report['cold_first_request_ms']:.1f}", rows=PERFORMANCE_ROWS), f"{path.name}: cold start"
    for setting in ("unbatched", "batched", "batched_32", "version_switch"):
        result = report[setting]
        values = [f"{result['first_request_ms']:.1f}"] if "first_request_ms" in result else []
        for clients in ("clients_32", "clients_32_grpc"):
            if clients in result:
                values += [f"{result[clients]['sents_per_s']:.1f}", f"{result[clients]['of_offline']:.2f}",
                           f"{result[clients]['p50_ms']:.1f} / {result[clients]['p99_ms']:.1f}"]
        assert _row_with(*values, rows=PERFORMANCE_ROWS), f"{path.name}: no row shows {setting}: {values}"


@pytest.mark.parametrize("path", _of_kind("finetune"), ids=_ids)
def test_finetune_rows_show_the_bench_json(path):
    for name, row in _load(path)["rows"].items():
        values = [str(row["updates"])] + [f"{result['bleu']:.2f}" for result in row["bleu"].values()]
        assert _row_with(*values), f"{path.name}: no table row shows {name}'s {values}"


@pytest.mark.parametrize("path", _of_kind("data_selection"), ids=_ids)
def test_data_selection_rows_show_the_bench_json(path):
    for name, run in _load(path)["runs"].items():
        values = [f"{run['kept_pairs']:,}", f"{run['kept_words']:,}", f"{run['test_2016_bleu']:.2f}"]
        assert _row_with(*values), f"{path.name}: no table row shows {name}'s {values}"


@pytest.mark.parametrize("path", _of_kind("confidence"), ids=_ids)
def test_confidence_rows_show_the_bench_json(path):
    report = _load(path)
    tokens = report["tokens"]
    values = [f"{report['corpus_bleu']:.2f}", f"{tokens['count']:,}", f"{tokens['auc']:.4f}",
              f"{report['sentences_mean_log_prob_auc']:.4f}"]
    for group in ("in_reference", "not_in_reference"):
        values += [f"{tokens[group]['count']:,}", f"{tokens[group]['mean_probability']:.4f}"]
    assert _row_with(*values), f"{path.name}: no table row shows {values}"


@pytest.mark.parametrize("path", _of_kind("subwords"), ids=_ids)
def test_subword_rows_show_the_bench_json(path):
    for name, model in _load(path)["models"].items():
        values = [str(model["training"]["updates"]), f"{model['sentences_per_s']:.1f}",
                  f"{100 * model['probe']['names_unchanged']:.0f}%", f"{100 * model['probe']['numbers_unchanged']:.0f}%"]
        values += [f"{bleu['searched']:.2f}" for bleu in model["bleu"].values()]
        assert _row_with(*values), f"{path.name}: no table row shows {name}'s {values}"


def _spread_cells(spread):
    return [f"{split['mean']:.2f} ({split['min']:.2f}–{split['max']:.2f})" for split in spread.values()]


@pytest.mark.parametrize("path", _of_kind("subwords"), ids=_ids)
def test_seed_group_rows_show_the_bench_json(path):
    for name, group in _load(path).get("groups", {}).items():
        values = [name, ", ".join(str(seed) for seed in group["seeds"]),
                  f"{min(group['updates'])}–{max(group['updates'])}", *_spread_cells(group["bleu"])]
        values += _spread_cells(group.get("equal_updates_bleu", {}))
        assert _row_with(*values), f"{path.name}: no table row shows group {name}'s {values}"


@pytest.mark.parametrize("path", _of_kind("verbatim"), ids=_ids)
def test_verbatim_rows_show_the_bench_json(path):
    for name, model in _load(path)["models"].items():
        for mode in ("free", "verbatim"):
            run = model[mode]
            splits = [split for split in run if split != "probe"]
            values = [f"{100 * run['probe'][key]:.0f}%" for key in ("names_unchanged", "numbers_unchanged")]
            values += [" / ".join(f"{run[split][key]:.2f}" for split in splits) for key in ("bleu", "chrf")]
            if mode == "verbatim":
                first = run[splits[0]]
                values.append(f"{100 * first['lines_with_terms']:.1f}%, {first['constraints']:,} "
                              f"({100 * first['constraints_met']:.0f}% met)")
            assert _row_with(*values), f"{path.name}: no table row shows {name} {mode}: {values}"


@pytest.mark.parametrize("path", _of_kind("subword_sampling"), ids=_ids)
def test_subword_sampling_rows_show_the_bench_json(path):
    for name, run in _load(path)["runs"].items():
        values = [name, str(run["training"]["updates"]), f"{run['training']['best_dev_bleu']:.2f}"]
        values += [f"{scores[metric]:.2f}" for scores in run["scores"].values() for metric in ("bleu", "chrf")]
        assert _row_with(*values), f"{path.name}: no table row shows {name}'s {values}"


@pytest.mark.parametrize("path", _of_kind("long_inputs"), ids=_ids)
def test_long_input_rows_show_the_bench_json(path):
    for size, entry in _load(path)["sizes"].items():
        whole = entry["whole"]
        values = [f"{whole['source_tokens_per_line']:.1f}", f"{whole['ms_per_output_token']:.2f}",
                  f"{whole['ms_per_source_token']:.2f}", f"{whole['bleu']:.2f}"]
        if "split" in entry:
            values += [f"{entry['split']['bleu']:.2f}", f"{entry['single_joined']['bleu']:.2f}"]
        assert _row_with(*values, rows=PERFORMANCE_ROWS), f"{path.name}: no row shows {size} joined: {values}"


@pytest.mark.parametrize("path", _of_kind("quickstart_curves"), ids=_ids)
def test_quickstart_trial_rows_show_the_bench_json(path):
    report = _load(path)
    test_set = report["test_set"]
    for name, trial in report["trials"].items():
        values = [f"{point[test_set]:.2f}" for point in trial["curve"] if point[test_set] is not None]
        values += [f"{trial['updates_per_minute_with_validation']:.1f}"]
        assert values[:-1], f"{path.name}: {name} has no {test_set} BLEU"
        assert _row_with(name, *values), f"{path.name}: no table row shows trial {name}: {values}"


@pytest.mark.parametrize("path", _of_kind("long_sentences"), ids=_ids)
def test_long_sentence_rows_show_the_bench_json(path):
    models = _load(path)["models"]
    for name, model in models.items():
        values = [name] + [f"{item['bleu']:.2f}" for item in model["bins"].values() if item["bleu"] is not None]
        values += [f"{model['single_sentences']['bleu']:.2f}", f"{model['joined_four']['bleu']:.2f}"]
        assert _row_with(*values), f"{path.name}: no table row shows {name}: {values}"
    counts = [str(item["sentences"]) for item in next(iter(models.values()))["bins"].values()]
    assert _row_with("sentences", *counts), f"{path.name}: no table row shows the sentences per bin {counts}"


@pytest.mark.parametrize("path", _of_kind("scale"), ids=_ids)
def test_scale_rows_show_the_bench_json(path):
    for size in _load(path)["sizes"]:
        values = [f"{size['pairs']:,}", f"{size['kept']:,}", f"{size['seconds']:.1f}", f"{size['cpu_seconds']:.1f}",
                  f"{size['peak_mib']:,}", f"{size['disk_mib']:.1f}", f"{size['input_sentences_per_s']:,}"]
        assert _row_with(*values), f"{path.name}: no table row shows {size['pairs']:,} pairs: {values}"


@pytest.mark.parametrize("path", _of_kind("two_workers"), ids=_ids)
def test_two_workers_rows_show_the_bench_json(path):
    for name, run in _load(path)["runs"].items():
        values = [f"{run['seconds']:.1f}", f"{run['sentences_per_second']:.1f}", f"{run['rate_against_one_process']:.2f}"]
        assert _row_with(*values), f"{path.name}: no table row shows {name}'s {values}"


@pytest.mark.parametrize("path", _of_kind("constraints"), ids=_ids)
def test_constraint_rows_show_the_bench_json(path):
    for name, setting in _load(path)["settings"].items():
        values = [f"{setting[key]:.1f}" for key in ("sentences_per_s", "fastest_sentences_per_s")]
        values.append(f"{setting['bleu']:.2f}")
        if setting.get("constraints"):
            values += [f"{setting['constraints']:,}", f"{setting['met']:,}", f"{100 * setting['met_share']:.1f}%",
                       f"{setting['ms_per_constraint']:.2f}"]
        assert _row_with(*values), f"{path.name}: no table row shows the setting {name}: {values}"


def _decode_ratio(path):
    """The mean BPE 8,000 decoding rate over the mean word-level rate of a subwords bench's seed groups."""
    results = _load(path)
    rates = {name: [results["models"][member]["sentences_per_s"] for member in group["members"]]
             for name, group in results["groups"].items()}
    return (sum(rates["bpe8k"]) / len(rates["bpe8k"])) / (sum(rates["words"]) / len(rates["words"]))


def test_the_subword_decoding_ratios_in_prose_are_the_bench_jsons():
    results = ROOT / "bench" / "results"
    multi30k, tatoeba = (_decode_ratio(results / f"subwords_{corpus}.json") for corpus in ("multi30k", "tatoeba"))
    assert f"decodes at {multi30k:.2f}-{tatoeba:.2f}x their rate" in README.read_text(encoding="utf-8")
    assert (f"BPE 8,000 decodes at {multi30k:.2f}x the word-level rate on Multi30k and {tatoeba:.2f}x on Tatoeba"
            in (ROOT / "docs" / "results.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", _of_kind("language_pairs"), ids=_ids)
def test_language_pair_rows_show_the_bench_json(path):
    results = _load(path)
    for name, entry in [*results["models"].items(), *results["peers"].items()]:
        cells = [f"{split['beam5']['bleu']:.2f} / {split['beam5']['chrf']:.2f}" for split in entry["test"].values()]
        updates = entry["training"]["updates"] if "training" in entry else entry["updates"]
        assert _row_with(f"{updates:,}", *cells), f"{path.name}: no table row shows {name}'s {updates} and {cells}"
        tokenizers = {split["beam5"]["signature"].split("tok:")[1].split("|")[0] for split in entry["test"].values()}
        assert _row_with(f"{updates:,}", *cells, *tokenizers), f"{path.name}: {name}'s row names no tokenizer"


@pytest.mark.parametrize("path", _of_kind("profile"), ids=_ids)
def test_profile_rows_show_the_bench_json(path):
    report = _load(path)
    for step in ("train", "decode"):
        for side, result in report[step].items():
            matmul = result["matmul"]
            values = [f"{result['wall_ms']['median']:.1f}", f"{result['categories_ms']['matmul']:.1f}",
                      f"{matmul['gflop_per_s']:.0f} of {matmul['limit_gflop_per_s']:.0f} ({matmul['fraction_of_limit']:.2f})",
                      f"{matmul['wall_gflop_per_s']:.0f} ({matmul['wall_fraction_of_limit']:.2f})"]
            assert _row_with(*values, rows=PERFORMANCE_ROWS), f"{path.name}: no row shows {step} {side}'s {values}"


@pytest.mark.parametrize("path", _of_kind("decode_precision"), ids=_ids)
def test_decoding_precision_rows_show_the_bench_json(path):
    for key, run in _load(path)["runs"].items():
        precision, quantize = key.split("/")
        beam = run["decode"]["beam_5"]
        speeds = beam["multi30k/test_2016_flickr"]
        values = [f"`--precision={precision} --quantize={quantize}`", f"{speeds['saved_model']['sentences_per_s']:.1f}",
                  f"{speeds['checkpoint_one_sentence_at_a_time']['sentences_per_s']:.1f}",
                  f"{beam['export_variables_bytes'] / 1e6:.1f} MB",
                  *[f"{run['evaluate'][split]['bleu']:.2f} / {run['evaluate'][split]['chrf']:.2f}"
                    for split in ("test_2016", "test_2017")]]
        assert _row_with(*values, rows=PERFORMANCE_ROWS), f"{path.name}: no row shows {key}'s {values}"


@pytest.mark.parametrize("path", _of_kind("gemm_limits"), ids=_ids)
def test_gemm_limit_rows_show_the_bench_json(path):
    for shape in _load(path)["shapes"]:
        speeds = shape["gflop_per_s"]
        values = ["×".join(map(str, shape["shape"])), f"{speeds['float32']:.1f}",
                  f"{speeds['bfloat16']:.1f} ({shape['speedup_over_float32']['bfloat16']:.2f}x)"]
        assert _row_with(*values, rows=PERFORMANCE_ROWS), f"{path.name}: no row shows {values}"


BENCH_README = ROOT / "bench" / "README.md"


def test_the_bench_page_names_every_results_file():
    """bench/README.md's index says which bench writes each file of bench/results/, by its exact name."""
    text = BENCH_README.read_text(encoding="utf-8")
    unnamed = [path.name for path in RESULTS if not re.search(rf"(?<![\w.-]){re.escape(path.name)}", text)]
    assert unnamed == [], f"bench/README.md names no bench for {unnamed}"


def test_the_bench_page_names_every_field_provenance_writes():
    from bench.provenance import provenance

    text = BENCH_README.read_text(encoding="utf-8")
    assert [key for key in provenance() if f"`{key}`" not in text] == []


def test_no_bench_command_is_shown_writing_a_results_file_through_the_shell():
    """`> bench/results/X.json` empties X before the bench runs: a failing bench would leave it empty. The benches
    write `--output=X` once they have succeeded."""
    pages = [BENCH_README, ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "bench").glob("*.py"))]
    redirected = [f"{page.relative_to(ROOT)}: {line.strip()}" for page in pages
                  for line in page.read_text(encoding="utf-8").splitlines() if re.search(r">\s*bench/results/", line)]
    assert redirected == []


def test_the_default_shortlists_bleu_loss_in_prose_is_the_bench_jsons():
    """The README and docs/performance.md tell the default shortlist's loss as shortlist_sizes_*.json measured it:
    the two models trained longest, and the lightly trained quickstart model on test_2016 at every size."""
    from rnnsearch_tf.inference.shortlist import FREQUENT_WORDS, PER_SOURCE_WORD

    default = f"k{PER_SOURCE_WORD}n{FREQUENT_WORDS}"

    def splits(model):
        return _load(ROOT / "bench" / "results" / f"shortlist_sizes_{model}.json")["splits"]

    longest = max(-split[default]["bleu_change"] for model in ("multi30k_rnnsearch", "peer_size")
                  for split in splits(model).values())
    quickstart = [-result["bleu_change"] for name, result in splits("quickstart")["test"].items()
                  if name != "full vocabulary"]
    lightly = f"{min(quickstart):.2f}-{max(quickstart):.2f} lower on test_2016"
    readme = " ".join(README.read_text(encoding="utf-8").split())
    assert f"at most {longest:.2f} BLEU lower on the two models trained longest, {lightly} with the lightly" in readme
    performance = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert f"at most {longest:.2f} BLEU lower on the two trained longest, {lightly} on the lightly" in performance


def test_setup_asks_for_the_pytest_xdist_that_scripts_test_sh_runs():
    """`--no-loadscope-reorder` came with pytest-xdist 3.8 (its changelog); 3.5-3.7 stop at "unrecognized
    arguments"."""
    minimum = re.search(r'"pytest-xdist>=([\d.]+)"', (ROOT / "setup.py").read_text(encoding="utf-8"))[1]
    if "--no-loadscope-reorder" in (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8"):
        assert tuple(int(part) for part in minimum.split(".")) >= (3, 8), minimum


RESULTS_PAGE = ROOT / "docs" / "results.md"


def test_the_results_page_lists_as_not_run_no_pair_that_language_pairs_holds():
    import pycountry

    not_run = [line for line in RESULTS_PAGE.read_text(encoding="utf-8").splitlines() if "Not run yet" in line]
    for name, model in _load(ROOT / "bench" / "results" / "language_pairs.json")["models"].items():
        pair = " -> ".join(pycountry.languages.get(alpha_2=model[f"{side}_language"]).name
                           for side in ("source", "target"))
        recipe = "49-minute" if "49min" in name else "quickstart"
        assert not [line for line in not_run if pair in line and recipe in line], f"{name} was run: {not_run}"


def test_the_results_page_gives_the_dates_and_machines_of_the_files_it_shows():
    text = RESULTS_PAGE.read_text(encoding="utf-8")
    files = [path for path in RESULTS if re.search(rf"(?<![\w.-]){re.escape(path.name)}", text)]
    dates = sorted(_load(path)["provenance"]["date"][:10] for path in files)
    cpus = {_load(path)["provenance"]["cpu"] for path in files}
    opening = text.split("\n\n")[1]
    assert f"Measured {dates[0]} to {dates[-1]}" in opening
    assert all(family in opening for family in ("EPYC", "Xeon") if any(family in cpu for cpu in cpus))


def test_the_quickstarts_updates_in_eight_minutes_are_the_bench_jsons():
    """docs/training.md's range of the quickstart's 8 minutes on Multi30k En->Fr words, on EPYC-BF16."""
    results = ROOT / "bench" / "results"
    updates = [model["updates"] for model in _load(results / "quickstart.json")["models"].values()]
    updates += [model["training"]["updates"] for model in _load(results / "subwords_multi30k.json")["models"].values()
                if model["codec"] == "moses"]
    text = " ".join((ROOT / "docs" / "training.md").read_text(encoding="utf-8").split())
    assert f"and {min(updates):,}-{max(updates):,} on Multi30k En→Fr words" in text


def test_every_commit_quoted_beside_a_results_file_is_its_provenances():
    """"`bench/results/X.json` (..., commit C, ...)": C is the commit the file's provenance names."""
    wrong = []
    for page in PAGES:
        quoted = re.finditer(r"`(?:bench/results/)?([\w-]+\.json)`\s*\(([^()]*)\)", page.read_text(encoding="utf-8"))
        for match in quoted:
            commit = re.search(r"commit ([0-9a-f]{7,40})", match[2])
            path = ROOT / "bench" / "results" / match[1]
            if commit and path.exists() and not _load(path)["provenance"]["commit"].startswith(commit[1]):
                wrong.append(f"{page.name}: {match[1]} commit {commit[1]}")
    assert wrong == []


@pytest.mark.parametrize("path", _of_kind("peer_run"), ids=_ids)
def test_the_peers_own_run_row_tells_training_from_decoding(path):
    peer = _load(path)["peer"]
    values = [f"training {peer['train_tgt_tok_per_s']:,.1f} target tokens/s, {peer['train_sents_per_s']} sentences/s",
              f"decoding {peer['translate_sents_per_s']} sentences/s"]
    assert [row for row in TABLE_ROWS if all(any(value in cell for cell in row) for value in values)], values


def test_the_verbatim_time_ratio_in_prose_is_the_bench_jsons():
    ratios = [model["verbatim"][split]["seconds"] / model["free"][split]["seconds"]
              for model in _load(ROOT / "bench" / "results" / "verbatim.json")["models"].values()
              for split in model["free"] if split != "probe"]
    text = " ".join(RESULTS_PAGE.read_text(encoding="utf-8").split())
    assert f"({min(ratios):.2f}-{max(ratios):.2f}x the time of the whole test set here)" in text
