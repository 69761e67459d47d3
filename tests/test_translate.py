"""`rnnsearch translate` (`rnnsearch_tf.cli.translate`, run as `python -m rnnsearch_tf.translate`) on a
tiny random model: output formats, files and stdin (lines typed at a terminal one at a time), sampling and
`--prefix_file`; `--quantize=int8` against float32
on a trained one. BatchTranslator itself is tested in test_batch_translator.py."""

import json
import os
import sys

import numpy as np
import pytest

from conftest import REPO_ROOT
from rnnsearch_tf.evaluation import corpus_scores
from rnnsearch_tf.inference import output_formats
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.translator import Translator
from rnnsearch_tf.inference.unk_replacer import UnkReplacer
from helpers.serving_test_utils import SEARCH_OPTIONS, SENTENCES, exported_model, write_model_dir
from helpers.terminal import terminal_stdin, typed
from helpers.trained_toy_model import dev_pairs, translated
from helpers.translation_test_data import INPUT, PREFIXES, translation_model_dir
from helpers import preimported
from serving import export


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return translation_model_dir(tmp_path_factory)


def _run(args, stdin_text=""):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    result = preimported.run(
        [sys.executable, "-m", "rnnsearch_tf.translate", *args],
        input=stdin_text.encode(), capture_output=True, env=environment, cwd=REPO_ROOT,
    )
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode(), result.stderr.decode()


def _options():
    return [f"--beam_size={SEARCH_OPTIONS['beam_size']}", f"--maximum_source_length={SEARCH_OPTIONS['maximum_source_length']}"]


def test_command_line_stdin_to_stdout_nbest(model_dir, tmp_path):
    stdout, stderr = _run([f"--model_dir={model_dir}", "--output_format=nbest", "--num_hypotheses=2", *_options()], "\n".join(INPUT) + "\n")
    expected = BatchTranslator.from_model_dir(model_dir, num_hypotheses=2, beam_size=3, maximum_source_length=12).translate(INPUT)
    lines = [output_formats.parse_nbest_line(line) for line in stdout.splitlines()]
    assert [line[0] for line in lines] == [index for index in range(len(INPUT)) for _ in range(2)]
    assert [line[1] for line in lines] == [text for result in expected for text, _ in result["nbest"]]
    assert "lines cut to their first 12 tokens (--maximum_source_length): line 6\n" in stderr  # 1-based
    assert f"{len(INPUT)}/{len(INPUT)}" in stderr  # the progress bar


def test_lines_typed_at_a_terminal_are_translated_one_at_a_time(model_dir):
    """With a terminal for stdin each line's translation is written as soon as the line is entered, before the
    next; Ctrl-D ends. --prefix_file, whose lines pair with the input's, is refused there."""
    expected = BatchTranslator.from_model_dir(model_dir, **SEARCH_OPTIONS).translate(SENTENCES[:2])
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    command = [sys.executable, "-m", "rnnsearch_tf.translate", f"--model_dir={model_dir}", *_options()]
    answers, stderr, returncode = typed(command, SENTENCES[:2], environment, REPO_ROOT)
    assert returncode == 0, stderr
    assert answers == [result["translation"] for result in expected]
    assert "type a sentence and press Enter to translate it" in stderr
    with terminal_stdin() as (stdin, _):
        refused = preimported.run(command + ["--prefix_file=/dev/null"], stdin=stdin, capture_output=True,
                                  env=environment, cwd=REPO_ROOT, timeout=120)
    assert refused.returncode == 1 and refused.stderr.decode().startswith(
        "error: --prefix_file and --constraints_file pair their lines with the input's: give --input a file")


def test_constraints_of_typed_lines_are_named_by_their_line_and_summed_up_where_they_are(model_dir, tmp_path):
    """A line typed at a terminal is translated alone: a constraint's message names its place in the input, and
    the summary follows a line with constraints only, as the other warnings of a typed line follow it only where
    they apply (a glossary's term too long for the line's length bound is not met; "42", a number --verbatim
    keeps, is outside the target vocabulary: searched as <unk> and written back, as a glossary's term is)."""
    long_term = " ".join(["chien"] * 40)
    (tmp_path / "terms.tsv").write_text(f"dog\t{long_term}\n", encoding="utf-8")
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    command = [sys.executable, "-m", "rnnsearch_tf.translate", f"--model_dir={model_dir}", "--verbatim",
               f"--terminology={tmp_path / 'terms.tsv'}", *_options()]
    answers, stderr, returncode = typed(command, ["the cat", "the dog sees a cat", "a house 42"], environment,
                                        REPO_ROOT)
    assert returncode == 0 and len(answers) == 3, stderr
    messages = [line for line in stderr.splitlines() if "constraint" in line]
    assert messages == [f"line 2: constraint '{long_term}' not met: the translation ended without it (a line's "
                        "constraints must fit its length bound, --maximum_length_a and --maximum_length_b)",
                        "constraints: 1 on 1 of 1 lines: 0 met, 1 not met, 0 skipped",
                        "constraints: 1 on 1 of 1 lines: 1 met, 0 not met, 0 skipped"], stderr
    assert long_term not in answers[1] and "42" in answers[2].split()


def test_verbatim_names_outside_a_word_vocabulary_are_forced_as_unk_and_written_back(model_dir, tmp_path):
    """A word-level model cannot write a name it does not know: --verbatim searches it as <unk> and writes it
    there, as a glossary entry `Name<TAB>Name` does; --replace_unk replaces the other <unk>s as before."""
    (tmp_path / "input.txt").write_text("the cat sees Kenwixmosk\nthe dog sees a Trondheim house\n", encoding="utf-8")
    (tmp_path / "terms.tsv").write_text("Kenwixmosk\tKenwixmosk\nTrondheim\tTrondheim\n", encoding="utf-8")
    common = [f"--model_dir={model_dir}", f"--input={tmp_path / 'input.txt'}", "--noprogress", "--replace_unk",
              *_options()]
    verbatim, stderr = _run([*common, "--verbatim"])
    glossary, _ = _run([*common, f"--terminology={tmp_path / 'terms.tsv'}"])
    assert verbatim == glossary, stderr
    assert "Kenwixmosk" in verbatim.splitlines()[0] and "Trondheim" in verbatim.splitlines()[1]
    assert "constraints: 2 on 2 of 2 lines: 2 met, 0 not met, 0 skipped" in stderr


def test_a_prefix_cut_or_given_for_an_empty_line_is_named(model_dir, tmp_path):
    """A forced prefix longer than the longest translation is cut, and one for an empty input line has nothing
    to start: stderr names both, as it names the lines cut to --maximum_source_length."""
    (tmp_path / "input.txt").write_text("the cat\n\na dog\n", encoding="utf-8")
    (tmp_path / "prefixes.txt").write_text("le\nla\n" + " ".join(["chat"] * 100) + "\n", encoding="utf-8")
    stdout, stderr = _run([f"--model_dir={model_dir}", f"--input={tmp_path / 'input.txt'}", "--noprogress",
                           f"--prefix_file={tmp_path / 'prefixes.txt'}", *_options()])
    longest = BatchTranslator.from_model_dir(model_dir, **SEARCH_OPTIONS).maximum_target_length - 1
    assert stdout.splitlines()[2].split() == ["chat"] * longest
    assert (f"--prefix_file lines cut to their first {longest} target tokens (the longest translation, "
            "--maximum_length_a * --maximum_source_length + --maximum_length_b, less its </s>): line 3") in stderr
    assert "--prefix_file lines not used, their input line being empty: line 2" in stderr


def test_command_line_file_to_file_alignment(model_dir, tmp_path):
    (tmp_path / "input.txt").write_text("\n".join(INPUT) + "\n", encoding="utf-8")
    _run([f"--model_dir={model_dir}", f"--input={tmp_path / 'input.txt'}", f"--output={tmp_path / 'out.jsonl'}",
          "--output_format=alignment", "--replace_unk", "--batch_size=3", "--noprogress", *_options()])
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [record["index"] for record in records] == list(range(len(INPUT)))
    assert records[len(SENTENCES)]["translation"] == "" and records[len(SENTENCES) + 1]["truncated"]
    for record in records:
        assert len(record["alignment"]) == (len(record["target_tokens"]) + 1 if record["source_tokens"] else 0)


def test_command_line_json_gives_each_tokens_probability(model_dir):
    stdout, _ = _run([f"--model_dir={model_dir}", "--output_format=json", "--num_hypotheses=2", "--noprogress",
                      *_options()], "\n".join(INPUT) + "\n")
    records = [json.loads(line) for line in stdout.splitlines()]
    assert [record["index"] for record in records] == list(range(len(INPUT)))
    for record in records:
        assert "alignment" not in record and len(record["nbest"]) == 2
        for item in [record, *record["nbest"]]:
            assert len(item["tokens"]) == len(item["token_probabilities"])
            if not item["tokens"]:  # an empty line: nothing translated
                assert item["mean_log_prob"] == 0.0
                continue
            log_probs = np.log(item["token_probabilities"])
            assert item["tokens"][-1] == "</s>" and np.all(log_probs <= 0.0)
            np.testing.assert_allclose(log_probs.sum(), item["score"], atol=1e-4)  # no length normalization
            np.testing.assert_allclose(log_probs.mean(), item["mean_log_prob"], atol=1e-4)


def test_command_line_sampling_draws_reproducible_ranked_translations(model_dir):
    args = [f"--model_dir={model_dir}", "--output_format=nbest", "--sampling", "--num_samples=4", "--noprogress"]
    first, _ = _run([*args, "--sampling_seed=7"], "\n".join(SENTENCES) + "\n")
    again, _ = _run([*args, "--sampling_seed=7"], "\n".join(SENTENCES) + "\n")
    other, _ = _run([*args, "--sampling_seed=8"], "\n".join(SENTENCES) + "\n")
    lines = [output_formats.parse_nbest_line(line) for line in first.splitlines()]
    assert [line[0] for line in lines] == [index for index in range(len(SENTENCES)) for _ in range(4)]
    for index in range(len(SENTENCES)):
        totals = [line[3] for line in lines if line[0] == index]
        assert totals == sorted(totals, reverse=True)  # best sample first
    assert first == again and first != other


# Prefixes (`--prefix_file`): each translation starts with the words of its line.

# large: four fresh processes; the default suite forces prefixes in-process (tests/test_batch_translator.py) and
# through `--prefix_file` in fresh processes (tests/test_subword_commands.py, tests/test_other_languages.py), and
# names a short `--constraints_file` the same way (below)
@pytest.mark.large
def test_command_line_prefix_file(model_dir, tmp_path_factory, tmp_path):
    (tmp_path / "input.txt").write_text("\n".join(INPUT) + "\n", encoding="utf-8")
    (tmp_path / "prefixes.txt").write_text("\n".join(PREFIXES) + "\n", encoding="utf-8")
    files = [f"--input={tmp_path / 'input.txt'}", f"--prefix_file={tmp_path / 'prefixes.txt'}", "--noprogress"]
    stdout, _ = _run([f"--model_dir={model_dir}", *files, *_options()])
    expected = BatchTranslator.from_model_dir(model_dir, beam_size=3, maximum_source_length=12).translate(
        INPUT, prefixes=PREFIXES
    )
    assert stdout.splitlines() == [result["translation"] for result in expected]
    _, export_dir, _ = exported_model(tmp_path_factory)
    stdout, stderr = _run([f"--saved_model={export_dir}", *files])
    assert "custom gradients" not in stderr  # TensorFlow's notes on loading the export are hidden
    from_export = BatchTranslator.from_saved_model(export_dir).translate(INPUT, prefixes=PREFIXES)
    assert stdout.splitlines() == [result["translation"] for result in from_export]

    (tmp_path / "short.txt").write_text("le\nla\n", encoding="utf-8")
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    failed = preimported.run(
        [sys.executable, "-m", "rnnsearch_tf.translate", f"--model_dir={model_dir}",
         f"--input={tmp_path / 'input.txt'}", f"--prefix_file={tmp_path / 'short.txt'}"],
        capture_output=True, env=environment, cwd=REPO_ROOT,
    )
    assert failed.returncode == 1
    assert f"--prefix_file {tmp_path / 'short.txt'} has 2 lines but --input {tmp_path / 'input.txt'} has 9" in (
        failed.stderr.decode())
    unwritable = preimported.run(
        [sys.executable, "-m", "rnnsearch_tf.translate", f"--model_dir={model_dir}",
         f"--input={tmp_path / 'input.txt'}", f"--output={tmp_path / 'missing' / 'out.txt'}"],
        capture_output=True, env=environment, cwd=REPO_ROOT,
    )
    assert unwritable.returncode == 1 and b"translating with" not in unwritable.stderr  # refused before the model
    assert f"error: --output={tmp_path / 'missing' / 'out.txt'}: the folder {tmp_path / 'missing'} does not exist" in (
        unwritable.stderr.decode())


# Constraints (`--terminology`, `--constraints_file`): every translation holds its line's target phrases.

TERMINOLOGY = "# English term<TAB>French term\ncat\tchien vert\nhouse\tmaison\n\nbig dog\tla petit\nzyzzyva\tzyzzyva\n"


def _holds(translation, phrase):
    return f" {phrase} " in f" {translation} "  # plain lower-case words: the detokenized text is the tokens


def test_command_line_terminology_puts_every_found_term_in_every_translation(model_dir, tmp_path):
    (tmp_path / "input.txt").write_text("\n".join(INPUT) + "\n", encoding="utf-8")
    (tmp_path / "terms.tsv").write_text(TERMINOLOGY, encoding="utf-8")
    (tmp_path / "constraints.txt").write_text("\n".join(["", "", "un\tle", "", "", "", "", "", ""]) + "\n")
    files = [f"--input={tmp_path / 'input.txt'}", f"--terminology={tmp_path / 'terms.tsv'}", "--noprogress"]
    stdout, stderr = _run([f"--model_dir={model_dir}", *files, f"--constraints_file={tmp_path / 'constraints.txt'}",
                           *_options()])
    translations = stdout.splitlines()
    expected = {0: ["chien vert", "la petit"], 1: ["maison"], 2: ["un", "le"], 3: ["chien vert", "maison"],
                5: ["chien vert"]}
    for index, translation in enumerate(translations):
        for phrase in expected.get(index, []):
            assert _holds(translation, phrase), (index, translation, phrase)
    assert _holds(translations[3], "zyzzyva")  # outside the vocabulary: searched as <unk>, the term written there
    summary = stderr.strip().splitlines()[-1]
    assert summary == "constraints: 10 on 6 of 9 lines: 10 met, 0 not met, 0 skipped", summary
    unconstrained, _ = _run([f"--model_dir={model_dir}", f"--input={tmp_path / 'input.txt'}", "--noprogress",
                             *_options()])
    for index in (4, 6, 8):  # lines without constraints translate as without the flags
        assert translations[index] == unconstrained.splitlines()[index]


def test_command_line_constraint_mistakes_are_one_line_errors(model_dir, tmp_path):
    (tmp_path / "input.txt").write_text("\n".join(INPUT) + "\n", encoding="utf-8")
    (tmp_path / "terms.tsv").write_text("cat\tchat\nhouse maison\n", encoding="utf-8")
    (tmp_path / "short.txt").write_text("chat\n", encoding="utf-8")
    (tmp_path / "prefixes.txt").write_text("\n".join(PREFIXES) + "\n", encoding="utf-8")
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    for flags, message in [
        ([f"--terminology={tmp_path / 'terms.tsv'}"],
         f"error: {tmp_path / 'terms.tsv'} line 2: expected 'source term<TAB>target term', got 'house maison' "
         "(no TAB)"),
        ([f"--constraints_file={tmp_path / 'short.txt'}"],
         f"error: --constraints_file {tmp_path / 'short.txt'} has 1 line but --input {tmp_path / 'input.txt'} has 9"),
        ([f"--constraints_file={tmp_path / 'short.txt'}", f"--prefix_file={tmp_path / 'prefixes.txt'}"],
         "error: --terminology, --constraints_file and --verbatim take neither --prefix_file nor --split_sentences"),
    ]:
        failed = preimported.run(
            [sys.executable, "-m", "rnnsearch_tf.translate", f"--model_dir={model_dir}",
             f"--input={tmp_path / 'input.txt'}", *flags], capture_output=True, env=environment, cwd=REPO_ROOT,
        )
        assert failed.returncode == 1 and message in failed.stderr.decode(), failed.stderr.decode()
        assert len(failed.stderr.decode().strip().splitlines()) == 1


def _token_agreement(records, others):
    """The share of target positions (`</s>` included, over the longer of each pair) where two translations of the
    same lines hold the same token."""
    same = sum(a == b for record, other in zip(records, others) for a, b in zip(record["tokens"], other["tokens"]))
    return same / sum(max(len(record["tokens"]), len(other["tokens"])) for record, other in zip(records, others))


# large: a model trained for the purpose (tests/helpers/trained_toy_model.py) and fresh processes; the parts run in
# the default suite (tests/test_decoding_model.py, the tiny int8 export in tests/test_export.py)
@pytest.mark.large
def test_int8_weights_translate_as_float32_within_stated_bounds(trained_toy_model, toy_data, tmp_path_factory):
    """Weight-only int8 (`--quantize=int8`) against float32 on a model that translates: at least 97% of the target
    tokens the same and BLEU within 1.0 (measured when written, on the 100 dev sentences: 99.7% of the tokens, 98
    sentences unchanged, BLEU 46.63 against 46.74)."""
    float32, int8 = (translated(tmp_path_factory, trained_toy_model, toy_data, quantize)
                     for quantize in ("none", "int8"))
    _, references = dev_pairs(toy_data)
    bleu = {name: corpus_scores.bleu("fr").corpus_score([record["translation"] for record in records], [references])
            .score for name, records in (("float32", float32), ("int8", int8))}
    assert len(float32) == len(int8) == len(references) == 100
    assert bleu["float32"] > 30.0, bleu  # the model translates
    assert _token_agreement(int8, float32) >= 0.97
    assert abs(bleu["int8"] - bleu["float32"]) <= 1.0, bleu


def test_flags_it_would_ignore_or_cannot_use_are_named_in_one_line(model_dir, tmp_path):
    """--unk_dictionary serves <unk> replacement only; a sampling temperature must be above 0 (the sampler's own
    error named a class the user never chose)."""
    (tmp_path / "dictionary.tsv").write_text("cat\tchat\n", encoding="utf-8")
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    for flags, message in [
        ([f"--unk_dictionary={tmp_path / 'dictionary.tsv'}"],
         "error: --unk_dictionary is used by <unk> replacement only: give --replace_unk with it"),
        (["--sampling", "--sampling_temperature=0"],
         "error: SearchConfig.sampling_temperature must be above 0, got 0.0"),
    ]:
        failed = preimported.run([sys.executable, "-m", "rnnsearch_tf.translate", f"--model_dir={model_dir}", *flags],
                                 input=b"the cat\n", capture_output=True, env=environment, cwd=REPO_ROOT)
        stderr = failed.stderr.decode()
        assert failed.returncode == 1 and stderr.startswith(message) and len(stderr.splitlines()) == 1, stderr


def test_an_unknown_quantization_is_named_in_one_line(model_dir):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    failed = preimported.run([sys.executable, "-m", "rnnsearch_tf.translate", f"--model_dir={model_dir}",
                              "--quantize=int4"], input=b"the cat\n", capture_output=True, env=environment,
                             cwd=REPO_ROOT)
    assert failed.returncode == 1 and "Traceback" not in failed.stderr.decode()
    assert failed.stderr.decode().splitlines() == [
        "error: flag --quantize=int4: value should be one of <none|int8> (--help lists the flags)"]


def test_replace_unk_is_refused_for_a_model_without_attention(model_dir, tmp_path):
    """RNNencdec's alignment rows are zeros: --replace_unk wrote the first source word for every <unk> ("Un homme
    A A A"); a dictionary entry needs the aligned source word too. An ensemble with one attending member aligns."""
    rnnencdec = write_model_dir(tmp_path / "rnnencdec", model_name="rnnencdec")
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    (tmp_path / "dictionary.tsv").write_text("cat\tchat\n", encoding="utf-8")
    for extra in ([], [f"--unk_dictionary={tmp_path / 'dictionary.tsv'}"]):
        failed = preimported.run([sys.executable, "-m", "rnnsearch_tf.translate", f"--model_dir={rnnencdec}",
                                  "--replace_unk", *extra], input=b"the cat\n", capture_output=True, env=environment,
                                 cwd=REPO_ROOT)
        assert failed.returncode == 1 and failed.stderr.decode().splitlines() == [
            f"error: --replace_unk copies the source word each <unk> attends to most (or its --unk_dictionary entry), "
            f"and --model_dir={rnnencdec} has no attention (RNNencdec): no alignment names that word; translate "
            "without --replace_unk (--help lists the flags)"], failed.stderr.decode()
    rnnsearch = write_model_dir(tmp_path / "rnnsearch")
    stdout, _ = _run([f"--model_dir={rnnsearch}+{rnnencdec}", "--replace_unk", "--noprogress"], "the cat\n")
    assert len(stdout.splitlines()) == 1


# large: an export of its own and a fresh process (19 s); the default suite refuses --replace_unk for an RNNencdec
# model directory (above) and reads an export's recorded uses_attention (tests/test_batch_translator.py)
@pytest.mark.large
def test_replace_unk_is_refused_for_an_export_without_attention(tmp_path):
    """The export records whether its model attends (`uses_attention` of its settings): --saved_model of an RNNencdec
    export was taken to attend, and --replace_unk wrote the first source word for every <unk>."""
    rnnencdec = write_model_dir(tmp_path / "rnnencdec", model_name="rnnencdec")
    version = export.export(Translator.from_model_dir(rnnencdec, **SEARCH_OPTIONS), str(tmp_path / "exports"))
    loaded = BatchTranslator.from_saved_model(version, unk_replacer=UnkReplacer())
    assert loaded.uses_attention is False and loaded.unk_replacer is None
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    failed = preimported.run([sys.executable, "-m", "rnnsearch_tf.translate", f"--saved_model={tmp_path / 'exports'}",
                              "--replace_unk"], input=b"the cat\n", capture_output=True, env=environment, cwd=REPO_ROOT)
    assert failed.returncode == 1 and failed.stderr.decode().splitlines()[-1] == (
        f"error: --replace_unk copies the source word each <unk> attends to most (or its --unk_dictionary entry), "
        f"and --saved_model={tmp_path / 'exports'} has no attention (RNNencdec): no alignment names that word; "
        "translate without --replace_unk (--help lists the flags)"), failed.stderr.decode()
