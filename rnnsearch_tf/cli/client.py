"""Translates with a served model, over gRPC (TF Serving's port 8500) or REST (port 8501).

    rnnsearch client --server=localhost:8500 --model_name=rnnsearch "A sentence." "Another."
    rnnsearch client --server=localhost:8500 --input_file=newstest2014.en --output_file=out.fr
    rnnsearch client --rest_url=http://localhost:8501 "A sentence."
    rnnsearch client --server=localhost:8500 < test.en > test.fr

Sentences come from the arguments, `--input_file`, or else standard input (not a terminal), files and standard
input read as `rnnsearch translate` reads them (UTF-8, a "\\r" before "\\n" dropped, bad bytes as U+FFFD). Prints
one translation per line (with `--with_scores`, a tab and the score after it) to `--output_file` or stdout, each
request's lines as they are answered; the file is opened at the first answer, so a server that is not there
leaves it as it was.
Lines longer than the export's `maximum_source_length` tokens are translated from their first tokens only (the
server's rule); their line numbers are reported on stderr.
"""

import itertools
import sys

from absl import app, flags

from rnnsearch_tf.utils.text_files import check_writable, line_numbers, open_output, read_lines
from serving.rest_client import RestClient

_SERVER = flags.DEFINE_string("server", "localhost:8500", "gRPC address of the model server.")
_REST_URL = flags.DEFINE_string("rest_url", None, "Use the REST API at this URL instead of gRPC.")
_MODEL_NAME = flags.DEFINE_string("model_name", "rnnsearch", "Served model name.")
_SIGNATURE = flags.DEFINE_string("signature_name", "translate", "Signature taking `text`.")
_INPUT_FILE = flags.DEFINE_string("input_file", None, "Sentences to translate, one per line (default: the arguments, "
                                  "else standard input).")
_OUTPUT_FILE = flags.DEFINE_string("output_file", None, "Where translations go; default stdout.")
_BATCH_SIZE = flags.DEFINE_integer("batch_size", 32, "Sentences per request.", lower_bound=1)
_TIMEOUT = flags.DEFINE_float("timeout", 60.0, "Seconds per request, above 0.")
flags.register_validator("timeout", lambda seconds: seconds > 0, "--timeout must be above 0 seconds")
_WITH_SCORES = flags.DEFINE_boolean("with_scores", False, "Append a tab and the score to each line.")


def _text(value):
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)


def _sentences(arguments):
    """The sentences of the arguments, `--input_file` or standard input (a terminal is refused: it would wait)."""
    if _INPUT_FILE.value:
        if arguments:
            raise app.UsageError("give sentences as arguments or --input_file, not both")
        return read_lines(_INPUT_FILE.value)  # as `translate` reads its --input
    if arguments:
        return arguments
    if sys.stdin.isatty():
        raise app.UsageError("give sentences as arguments, --input_file, or lines on standard input")
    return read_lines("-")  # as `translate` reads it


def _answers(client, sentences):
    """The server's outputs for `sentences`, a request of `--batch_size` at a time, as each is answered."""
    size = _BATCH_SIZE.value
    for start in range(0, len(sentences), size):
        yield client.translate(sentences[start : start + size], _SIGNATURE.value)


def _write(answers, path):
    """Writes each answer's translations to `path` ("-": stdout) as it comes, and returns the line numbers (from 1)
    that the server cut to its maximum source length. The file is opened at the first answer: a server that is not
    there, or refuses the request, leaves a file of that name as it was."""
    first = next(answers, None)
    truncated, done = [], 0
    with open_output(path) as out:
        for outputs in itertools.chain([] if first is None else [first], answers):
            for translation, score in zip(outputs["translation"], outputs["score"]):
                out.write(_text(translation) + (f"\t{float(score):.4f}" if _WITH_SCORES.value else "") + "\n")
            truncated += [done + row + 1 for row, cut in enumerate(outputs.get("truncated", [])) if cut]
            done += len(outputs["translation"])
    return truncated


def main(argv):
    sentences = _sentences(argv[1:])
    output_path = _OUTPUT_FILE.value or "-"
    check_writable(output_path, "--output_file")
    if _REST_URL.value:
        client = RestClient(_REST_URL.value, _MODEL_NAME.value, timeout=_TIMEOUT.value)
    else:
        from serving.grpc_client import GrpcClient  # imports TensorFlow (seconds): only the gRPC path pays it

        client = GrpcClient(_SERVER.value, _MODEL_NAME.value, timeout=_TIMEOUT.value)
    server = _REST_URL.value or _SERVER.value
    rpc_errors = (sys.modules["grpc"].RpcError,) if "grpc" in sys.modules else ()  # with the gRPC client only
    try:
        truncated = _write(_answers(client, sentences), output_path)
    except (ConnectionError, RuntimeError) as error:  # REST (`RestClient`): no HTTP answer, or a refusal
        raise ConnectionError(f"{server}: {error}") from None
    except rpc_errors as error:
        raise ConnectionError(f"{server}: {error.code().name}: {error.details()}") from None
    if truncated:
        print(
            "lines cut to the model's maximum_source_length (translated from their first tokens only): "
            f"{line_numbers(truncated)}",
            file=sys.stderr,
        )
