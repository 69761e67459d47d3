"""bench.bench_flags: the benches' NAME=VALUE list flags and path checks, refused when the command line is parsed."""

import json
import os
import subprocess
import sys

import pytest
from absl import flags

from bench.bench_flags import (NamedListParser, define_named_list, evaluate_output_folder, register_check,
                               without_flags)
from bench.provenance import REPO_ROOT
from rnnsearch_tf.evaluation.evaluator import METRICS_FILE


def _flag_values():
    return flags.FlagValues()


def test_a_named_list_keeps_its_pairs_in_order_and_parts_each_at_its_first_separator():
    flag_values = _flag_values()
    holder = define_named_list("variants", [], "help", flag_values=flag_values)
    flag_values(["bench", "--variants=bf16=--precision=mixed_bfloat16+--shortlist,batch=a,batch=b"])
    assert holder.value == [("bf16", "--precision=mixed_bfloat16+--shortlist"), ("batch", "a"), ("batch", "b")]
    assert flag_values["variants"].serialize() == (
        "--variants=bf16=--precision=mixed_bfloat16+--shortlist,batch=a,batch=b")


def test_a_named_list_parts_at_its_own_separator():
    assert NamedListParser(":").parse("test_2016:work/eval:x,test_2017:y") == [
        ("test_2016", "work/eval:x"), ("test_2017", "y")]
    assert NamedListParser(":").parse("") == []


@pytest.mark.parametrize("argument", ["nocolon", "=dir", "name=", "a=b,bad"])
def test_an_entry_without_its_name_or_value_is_an_error_naming_the_flag(argument):
    flag_values = _flag_values()
    define_named_list("trials", None, "help", value_name="MODEL_DIR", flag_values=flag_values)
    with pytest.raises(flags.IllegalFlagValueError, match=rf"^flag --trials={argument}: '.*' is not NAME=MODEL_DIR$"):
        flag_values(["bench", f"--trials={argument}"])


def test_a_value_its_check_refuses_is_an_error_naming_the_flag_and_the_folder(tmp_path):
    flag_values = _flag_values()
    holder = define_named_list("eval_dirs", None, "help", separator=":", check=evaluate_output_folder,
                               flag_values=flag_values)
    missing = tmp_path / "missing"
    with pytest.raises(flags.IllegalFlagValueError, match=rf"^flag --eval_dirs=test_2016:{missing}: {missing} has no"):
        flag_values(["bench", f"--eval_dirs=test_2016:{missing}"])
    (tmp_path / METRICS_FILE).write_text(json.dumps({"models": {}}))
    flag_values(["bench", f"--eval_dirs=test_2016:{tmp_path}"])
    assert holder.value == [("test_2016", str(tmp_path))]


def test_a_checked_flag_refuses_a_value_with_the_checks_message_and_passes_none(tmp_path):
    flag_values = _flag_values()
    holder = flags.DEFINE_string("write", None, "help", flag_values=flag_values)
    register_check(holder, lambda path: open(path, encoding="utf-8").close())
    flag_values(["bench"])  # not given: nothing to check
    with pytest.raises(flags.IllegalFlagValueError, match=r"^flag --write=/missing/page.md: .*No such file"):
        flag_values(["bench", "--write=/missing/page.md"])
    page = tmp_path / "page.md"
    page.write_text("# page\n")
    flag_values(["bench", f"--write={page}"])
    assert holder.value == str(page)


def _bench(module, *args):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    return subprocess.run([sys.executable, "-m", module, *args], cwd=REPO_ROOT, env=environment,
                          capture_output=True, text=True, timeout=600)


_MISSING = "/nonexistent/rnnsearch-bench"


@pytest.mark.large  # a bench's own process each (TensorFlow imported); the parsing and checks are tested above
@pytest.mark.parametrize("module, flag, args", [
    ("bench.results_summary", "eval_dirs", ["--eval_dirs=/x"]),
    ("bench.results_summary", "eval_dirs", [f"--eval_dirs=test_2016:{_MISSING}"]),
    ("bench.quickstart_curves", "trials", ["--trials=nocolon", "--baseline=nocolon"]),
    ("bench.shortlist", "shortlists", [f"--model_dir={_MISSING}", "--shortlists=bad"]),
    ("bench.search_sweep", "data_dir", [f"--model_dir={_MISSING}", f"--data_dir={_MISSING}"]),
    ("bench.confidence", "model_dir", [f"--model_dir={_MISSING}"]),
    ("bench.data_pipeline", "corpus", ["--corpus=bogus"]),
    ("bench.sitting_tables", "write", ["--name=epyc_bf16", f"--write={_MISSING}/performance.md"]),
])
def test_a_bad_flag_of_a_bench_is_one_error_line_naming_the_flag(module, flag, args):
    result = _bench(module, *args)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert len(errors) == 1 and errors[0].startswith(f"error: flag --{flag}="), result.stderr[-3000:]


def test_without_flags_drops_them_in_either_spelling_and_keeps_the_rest():
    argv = ["--preset=a,b", "--steps=5", "--output", "out.json", "--preset", "c", "--output=x.json", "--nojit",
            "--outputs=kept"]
    assert without_flags(argv, ("preset", "output")) == ["--steps=5", "--nojit", "--outputs=kept"]
