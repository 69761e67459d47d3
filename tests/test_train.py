"""`rnnsearch train` (`rnnsearch_tf.cli.train`, run as `python -m rnnsearch_tf.train`) on the toy corpus:
the model is made of the flags and the data's vocabulary sizes, the resolved flags written to
`<model_dir>/flags.txt` resume the run, and a mistake is one `error:` line with nothing written. Training
itself is tested in test_trainer.py."""

import json
import os
import sys

import pytest

from conftest import REPO_ROOT
from helpers.subword_test_data import build_subword_data
from helpers import preimported

TINY_MODEL = ["--embedding_dim=8", "--hidden_dim=16", "--maxout_dim=8", "--alignment_dim=16"]
QUICK_RUN = ["--batch_size=16", "--validate_every=0", "--log_every=1", "--checkpoint_every=1"]


def _train(*args, cwd=REPO_ROOT):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return preimported.run([sys.executable, "-m", "rnnsearch_tf.train", *args], cwd=cwd, env=environment,
                           capture_output=True, text=True, timeout=600)


def test_the_model_comes_from_the_flags_and_the_data_and_flags_txt_resumes_the_run(toy_data, tmp_path):
    model_dir = tmp_path / "model"
    # Folders relative to the working directory, which flags.txt writes absolute: it resumes from any other one.
    first = _train(f"--data_dir={os.path.relpath(toy_data, REPO_ROOT)}",
                   f"--model_dir={os.path.relpath(model_dir, REPO_ROOT)}", *TINY_MODEL, *QUICK_RUN,
                   "--train_steps=1", "--model=rnnencdec")
    assert first.returncode == 0, first.stderr[-3000:]
    summary = json.loads(first.stdout)
    latest_checkpoint = os.path.normpath(os.path.join(REPO_ROOT, summary["latest_checkpoint"]))  # relative as given
    assert summary["step"] == 1 and latest_checkpoint == str(model_dir / "checkpoints" / "ckpt-1")
    vocabularies = json.loads((toy_data / "metadata.json").read_text())["vocabularies"]
    model = json.loads((model_dir / "model.json").read_text())
    assert model["model"] == "rnnencdec", model
    assert {name: model["config"][name] for name in ("source_vocab_size", "target_vocab_size", "hidden_dim")} == {
        "source_vocab_size": vocabularies["source"]["size"], "target_vocab_size": vocabularies["target"]["size"],
        "hidden_dim": 16}
    flag_lines = (model_dir / "flags.txt").read_text().splitlines()
    # Every flag with a value, given or default (model, training and the dev search), one per line.
    for line in ("--model=rnnencdec", "--hidden_dim=16", f"--data_dir={toy_data}", f"--model_dir={model_dir}",
                 "--train_steps=1", "--optimizer=adadelta", "--beam_size=12"):
        assert line in flag_lines, flag_lines
    assert not any(line.startswith(("--max_hours", "--init_from", "--cpu_replicas")) for line in flag_lines)
    assert not any(line.startswith(("--source_vocab_size", "--num_hypotheses", "--sampling")) for line in flag_lines)

    resumed = _train(f"--flagfile={model_dir / 'flags.txt'}", "--train_steps=2", "--max_hours=0",  # 0: no limit
                     cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert json.loads(resumed.stdout)["step"] == 2  # the same model, resumed from ckpt-1
    assert (model_dir / "checkpoints" / "ckpt-2.index").exists()
    assert "--train_steps=2" in (model_dir / "flags.txt").read_text().splitlines()


# Three trainings in processes of their own: `large`. The default suite resumes a run from its flags.txt (above) and
# switches the data in-process (tests/test_trainer.py)
@pytest.mark.large
def test_flags_txt_writes_the_parent_and_the_data_to_switch_to_absolute(toy_data, tmp_path):
    relative = {name: os.path.relpath(tmp_path / name, REPO_ROOT) for name in ("parent", "child")}
    data = os.path.relpath(toy_data, REPO_ROOT)
    parent = _train(f"--data_dir={data}", f"--model_dir={relative['parent']}", *TINY_MODEL, *QUICK_RUN,
                    "--train_steps=1")
    assert parent.returncode == 0, parent.stderr[-3000:]
    child = _train(f"--data_dir={data}", f"--model_dir={relative['child']}", *TINY_MODEL, *QUICK_RUN,
                   "--train_steps=1", f"--init_from={relative['parent']}:latest", f"--switch_data_dir={data}")
    assert child.returncode == 0, child.stderr[-3000:]
    flag_lines = (tmp_path / "child" / "flags.txt").read_text().splitlines()
    for line in (f"--init_from={tmp_path / 'parent'}:latest", f"--switch_data_dir={toy_data}"):
        assert line in flag_lines, flag_lines
    resumed = _train(f"--flagfile={tmp_path / 'child' / 'flags.txt'}", "--train_steps=2", cwd=tmp_path / "parent")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert json.loads(resumed.stdout)["step"] == 2


@pytest.mark.parametrize(
    "args, message",
    [
        (("extra",), "error: unexpected arguments: extra (--help lists the flags)"),
        (("--data_dir={empty}",), "error: {empty}/metadata.json is missing: --data_dir must be the --output_dir of "
                                  "`rnnsearch build-data`; build the data first (--help lists the flags)"),
        (("--embedding_dropout=1.5",), "error: ModelConfig.embedding_dropout must be a rate in [0, 1), got 1.5"),
        (("--cpu_replicas=-1",), "error: TrainingConfig.cpu_replicas must be at least 0 (0: unset), got -1"),
        (("--hidden_dim=sixteen",),
         "error: flag --hidden_dim=sixteen: invalid literal for int() with base 10: 'sixteen' "
         "(--help lists the flags)"),
        (("--clip_norm=-1",), "error: TrainingConfig.clip_norm must be at least 0, got -1.0"),
        # A model in training has no vocabulary shortlist: `--shortlist` is translate's.
        (("--shortlist",), "error: Unknown command line flag 'shortlist' (--help lists the flags)"),
    ],
    ids=["stray_argument", "data_not_built", "model_config_value", "training_config_value", "flag_type",
         "negative_clip_norm", "shortlist"],
)
def test_a_mistake_is_one_line_and_leaves_no_model_directory(toy_data, tmp_path, args, message):
    empty = tmp_path / "empty"
    empty.mkdir()
    model_dir = tmp_path / "model"
    args = [arg.format(empty=empty) for arg in args]
    completed = _train(f"--data_dir={toy_data}", f"--model_dir={model_dir}", *TINY_MODEL, *args)
    assert completed.returncode == 1, completed.stderr[-3000:]
    assert completed.stderr.splitlines() == [message.format(empty=empty)], completed.stderr[-3000:]
    assert "Traceback" not in completed.stderr
    assert not model_dir.exists()


def test_subword_sampling_is_recorded_in_flags_txt_and_refused_on_word_level_data(toy_data, tmp_path):
    subword_data = build_subword_data(tmp_path / "subwords")
    model_dir = tmp_path / "model"
    sampled = _train(f"--data_dir={subword_data}", f"--model_dir={model_dir}", *TINY_MODEL, *QUICK_RUN,
                     "--train_steps=2", "--subword_sampling_alpha=0.1")
    assert sampled.returncode == 0, sampled.stderr[-3000:]
    assert json.loads(sampled.stdout)["step"] == 2
    assert "--subword_sampling_alpha=0.1" in (model_dir / "flags.txt").read_text().splitlines()
    refused = _train(f"--data_dir={toy_data}", f"--model_dir={tmp_path / 'words'}", *TINY_MODEL,
                     "--subword_sampling_alpha=0.1")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr[-3000:]
    errors = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: --subword_sampling_alpha=0.1 samples SentencePiece pieces, but {toy_data} is word-level; build the "
        "data with `rnnsearch build-data --subwords=sentencepiece`, or leave --subword_sampling_alpha at 0"]
    assert not (tmp_path / "words").exists()  # refused before anything is written


def test_a_refused_run_leaves_the_model_directorys_flags_as_they_were(toy_data, tmp_path):
    model_dir = tmp_path / "model"
    first = _train(f"--data_dir={toy_data}", f"--model_dir={model_dir}", *TINY_MODEL, *QUICK_RUN, "--train_steps=1")
    assert first.returncode == 0, first.stderr[-3000:]
    flags_before = (model_dir / "flags.txt").read_bytes()
    refused = _train(f"--data_dir={toy_data}", f"--model_dir={model_dir}", *TINY_MODEL, *QUICK_RUN,
                     "--train_steps=2", "--hidden_dim=32")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr[-3000:]
    errors = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "holds a different model" in errors[0], errors
    assert (model_dir / "flags.txt").read_bytes() == flags_before


def test_a_resumed_run_keeps_token_count_batching_as_it_was_and_one_at_its_limit_keeps_flags_txt(toy_data, tmp_path):
    model_dir = tmp_path / "model"
    first = _train(f"--data_dir={toy_data}", f"--model_dir={model_dir}", *TINY_MODEL, *QUICK_RUN, "--train_steps=2")
    assert first.returncode == 0, first.stderr[-3000:]
    flags_before = (model_dir / "flags.txt").read_bytes()
    # The checkpoints hold the position of fixed batches, which token-count batches cannot read.
    refused = _train(f"--flagfile={model_dir / 'flags.txt'}", "--train_steps=3", "--max_tokens=600")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr[-3000:]
    errors = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: --max_tokens=600: {model_dir} was trained without --max_tokens ({model_dir / 'flags.txt'}), and its "
        "checkpoints hold the data position of that input pipeline, which one with --max_tokens=600 cannot read: "
        "resume without --max_tokens (its value may change, not whether it is set), or continue the weights in a new "
        f"--model_dir with --init_from={model_dir}:latest --reset_optim=keep_states"]
    assert (model_dir / "flags.txt").read_bytes() == flags_before
    # At its limit already, a run makes no update: flags.txt keeps the flags of the updates made.
    again = _train(f"--flagfile={model_dir / 'flags.txt'}", "--train_steps=2", "--keep_checkpoints=3")
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout)["step"] == 2
    assert (model_dir / "flags.txt").read_bytes() == flags_before
