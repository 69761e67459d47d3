"""rnnsearch_tf/cli/search_flags.py: the flags of the commands that translate, as a user sets them, give the
SearchConfig, workers and options they name; bad values are refused."""

import dataclasses
import os
import subprocess
import sys

import pytest
from absl import app, flags
from absl.testing import flagsaver

from conftest import REPO_ROOT
from helpers import preimported
from rnnsearch_tf.cli import search_flags
from rnnsearch_tf.inference.batch_translator import DECODE_WORKERS
from rnnsearch_tf.inference.search_config import SearchConfig

FLAGS = flags.FLAGS


@pytest.fixture
def parsed():
    """FLAGS readable as after a command line (values set with `flagsaver.as_parsed`), unparsed again after."""
    was_parsed = FLAGS.is_parsed()
    FLAGS.mark_as_parsed()
    yield
    if not was_parsed:
        FLAGS.unparse_flags()


def test_no_flags_give_the_default_search_config_and_options(parsed):
    assert search_flags.search_config() == SearchConfig()  # every default written once, in SearchConfig
    assert search_flags.DECODE_WORKERS.value == DECODE_WORKERS
    assert (search_flags.CHECKPOINT.value, search_flags.UNK_DICTIONARY.value, search_flags.PRECISION.value) == (
        "best", None, None)
    assert search_flags.QUANTIZE.value == "none"  # the weights as trained


def test_every_search_config_field_is_a_flag_of_its_name(parsed):
    values = dict(beam_size=5, num_hypotheses=3, length_normalization="gnmt", length_penalty_alpha=0.25,
                  maximum_length_a=1.5, maximum_length_b=4, maximum_source_length=30, early_stopping=True,
                  forbid_unk=True, sampling=True, num_samples=7, sampling_temperature=0.5, sampling_seed=11,
                  shortlist=True)
    assert sorted(values) == sorted(field.name for field in dataclasses.fields(SearchConfig))
    assert all(value != getattr(SearchConfig(), name) for name, value in values.items())
    with flagsaver.as_parsed(**{name: str(value).lower() for name, value in values.items()}):
        assert search_flags.search_config() == SearchConfig(**values)
    assert search_flags.search_config() == SearchConfig()  # restored


def test_the_other_options_read_as_given(parsed):
    with flagsaver.as_parsed(checkpoint="averaged", batch_size="8", unk_dictionary="dictionary.tsv",
                             precision="mixed_bfloat16", quantize="int8"):
        assert search_flags.CHECKPOINT.value == "averaged" and search_flags.BATCH_SIZE.value == 8
        assert search_flags.UNK_DICTIONARY.value == "dictionary.tsv"
        assert search_flags.PRECISION.value == "mixed_bfloat16" and search_flags.QUANTIZE.value == "int8"


@pytest.mark.parametrize("name, value", [("length_normalization", "max"), ("decode_workers", "0"),
                                         ("precision", "float16"), ("quantize", "int4"), ("beam_size", "many")])
def test_a_value_the_flag_cannot_hold_is_refused(parsed, name, value):
    with pytest.raises(flags.IllegalFlagValueError):
        with flagsaver.as_parsed(**{name: value}):
            pass


def test_a_value_the_search_config_refuses_names_its_field(parsed):
    with flagsaver.as_parsed(beam_size="2", num_hypotheses="3"):
        with pytest.raises(ValueError, match="SearchConfig.num_hypotheses must be between 1 and beam_size=2, got 3"):
            search_flags.search_config()


PROGRAM = """
import tensorflow as tf
from absl import flags
from rnnsearch_tf.cli import search_flags
flags.FLAGS(["rnnsearch", "--decode_workers={workers}", "--beam_size=3"])
print(search_flags.decode_workers(), tf.config.threading.get_intra_op_parallelism_threads(),
      search_flags.search_config().beam_size)
"""


def test_decode_workers_shares_the_cores_before_tensorflow_starts():
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run([sys.executable, "-c", PROGRAM.format(workers=2)], capture_output=True, text=True,
                            env=environment, cwd=REPO_ROOT, check=True)
    workers, intra_op, beam_size = map(int, result.stdout.split())
    assert (workers, beam_size) == (2, 3)
    assert intra_op == max(1, len(os.sched_getaffinity(0)) // 2)  # each worker's share of this process's cores


def test_one_decode_worker_leaves_tensorflows_threads_alone(parsed):
    import tensorflow as tf

    before = tf.config.threading.get_intra_op_parallelism_threads()
    with flagsaver.as_parsed(decode_workers="1"):
        assert search_flags.decode_workers() == 1
    assert tf.config.threading.get_intra_op_parallelism_threads() == before


def test_every_command_leaves_the_shortlist_to_the_model_directory_unless_told(parsed):
    assert search_flags.search_config().shortlist is None  # its shortlist where it has one (`load_model_dir`)
    with flagsaver.as_parsed(shortlist="false"):  # --noshortlist: the whole vocabulary
        assert search_flags.search_config().shortlist is False
    with flagsaver.as_parsed(shortlist="true"):  # --shortlist: the model directory's, which must exist
        assert search_flags.search_config().shortlist is True


def test_refuse_given_names_the_flags_set_and_passes_the_defaults(parsed):
    search_flags.refuse_given([search_flags.BATCH_SIZE, search_flags.UNK_DICTIONARY], "here")
    with flagsaver.as_parsed(batch_size="8", unk_dictionary="words.tsv"):
        with pytest.raises(app.UsageError, match=r"^--batch_size, --unk_dictionary are not read here$"):
            search_flags.refuse_given([search_flags.BATCH_SIZE, search_flags.UNK_DICTIONARY], "here")
    with flagsaver.as_parsed(length_normalization="gnmt"):
        with pytest.raises(app.UsageError, match=r"^--length_normalization is not read with --saved_model: its export"):
            search_flags.refuse_with_saved_model()
    with flagsaver.as_parsed(function_cache=""):  # not a flag of rnnsearch export: not sent there
        with pytest.raises(app.UsageError, match=r"^--function_cache is not read with --saved_model: an export's "
                           r"search is traced already \(the cache keeps a model directory's traced search\)$"):
            search_flags.refuse_with_saved_model()


@pytest.mark.parametrize("command, args, message", [
    ("translate", ["--saved_model=/no/such/export", "--beam_size=2", "--checkpoint=latest"],
     "--checkpoint, --beam_size are not read with --saved_model: its export fixed them"),
    ("score", ["--saved_model=/no/such/export", "--source=/no/such/src", "--target=/no/such/tgt", "--precision=auto"],
     "--precision is not read with --saved_model"),
    ("score", ["--model_dir=/no/such/model", "--source=/no/such/src", "--target=/no/such/tgt",
               "--unk_dictionary=/no/such/words"], "--unk_dictionary is not read by score"),
    ("export", ["--model_dir=/no/such/model", "--export_dir=/no/such/export", "--batch_size=8", "--function_cache="],
     "--batch_size, --function_cache are not read by export"),
])
def test_a_flag_the_command_would_ignore_is_refused_before_it_runs(command, args, message):
    result = preimported.run([sys.executable, "-m", "rnnsearch_tf.cli.main", command, *args], cwd=REPO_ROOT,
                             capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and f"error: {message}" in result.stderr, result.stderr[-3000:]
