"""bench.decode_throughput: the flags its main reads are the ones it defines (the bench is run, not imported, by the
suite: importing it beside the commands would define --model_dir twice)."""

import re
import subprocess
import sys

from conftest import REPO_ROOT


def test_the_bench_defines_every_flag_it_reads():
    shown = subprocess.run([sys.executable, "-m", "bench.decode_throughput", "--helpfull"], cwd=REPO_ROOT,
                           capture_output=True, text=True, timeout=120)
    for flag in ("--model_dir", "--export_dir", "--checkpoint", "--batch_size", "--precision", "--quantize",
                 "--test_sets", "--beam_sizes"):
        assert re.search(rf"^\s*{flag}:", shown.stdout, re.M), (flag, shown.stdout[-2000:], shown.stderr[-2000:])
    for flag in ("--[no]shortlist", "--length_normalization"):  # the search's, which main reads
        assert re.search(rf"^\s*{re.escape(flag)}:", shown.stdout, re.M), flag


def test_a_missing_model_dir_is_named_at_parsing():
    result = subprocess.run([sys.executable, "-m", "bench.decode_throughput", "--export_dir=/tmp/unused"],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and "--model_dir" in result.stderr
