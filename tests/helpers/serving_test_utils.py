"""A tiny random-weight model directory and its export, shared by the translator and serving tests."""

import concurrent.futures
import contextlib
import os
import pathlib

import grpc
import numpy as np
import tensorflow as tf

from rnnsearch_tf import ModelConfig
from data_pipeline.constants import RESERVED_TOKENS
from rnnsearch_tf.models.model_dir import ModelDir
from helpers.made_once import made_once

SOURCE_WORDS = "the a cat dog house sees big small green . , ?".split()
# Plain lower-case words only, so that detokenizing a translation and tokenizing it again gives the same
# tokens (scoring a translation then equals its search log-probability).
TARGET_WORDS = "le la chat chien maison voit grand petit vert un une".split()
SEARCH_OPTIONS = dict(beam_size=3, num_hypotheses=2, maximum_source_length=12, forbid_unk=True)

SENTENCES = [
    "The cat sees the big dog.",
    "a small green house ?",
    "dog",
    "The zyzzyva sees a cat, the dog sees a house.",
]
BAD_SENTENCES = [
    "",
    " \t \n ",
    "the\x00 cat\x07 sees\x1b dog\x7f",
    "x" * 5,
    " ".join(["cat"] * 1000),
]
INVALID_UTF8 = b"the caf\xc3 \xff\xfe dog"


def _write_vocabulary(path, words):
    with open(path, "w", encoding="utf-8") as stream:
        for token in RESERVED_TOKENS + tuple(words):
            stream.write(f"{token}\t1\n")


def write_model_dir(path, model_name="rnnsearch", seed=3):
    """A model directory with a tiny RNNsearch (or RNNencdec) of N(0, 0.5²) weights and one checkpoint."""
    path.mkdir(parents=True, exist_ok=True)
    _write_vocabulary(path / "source.tsv", SOURCE_WORDS)
    _write_vocabulary(path / "target.tsv", TARGET_WORDS)
    config = ModelConfig(
        source_vocab_size=len(RESERVED_TOKENS) + len(SOURCE_WORDS),
        target_vocab_size=len(RESERVED_TOKENS) + len(TARGET_WORDS),
        embedding_dim=8,
        hidden_dim=16,
        maxout_dim=8,
        alignment_dim=16,
    )
    model_dir = ModelDir(path)
    model_dir.write_model(
        model_name,
        config,
        {"source_language": "en", "target_language": "fr"},
        path / "source.tsv",
        path / "target.tsv",
    )
    return save_random_model(model_dir, seed)


def save_random_model(model_dir, seed):
    """Saves the model of `model_dir` (a `ModelDir` with its model.json) with N(0, 0.5²) weights as its one
    checkpoint; returns its path as a `pathlib.Path`."""
    model = model_dir.build_model()
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(rng.normal(0.0, 0.5, size=variable.shape).astype("float32"))
    tf.train.Checkpoint(model=model).save(model_dir.file(os.path.join("checkpoints", "ckpt")))
    return pathlib.Path(model_dir.path)


def exported_model(tmp_path_factory):
    """(model_dir, export_dir, version_path) of one export per test session (export takes seconds), shared by the
    test workers (`made_once`)."""
    model_dir, export_dir, version_path = made_once(tmp_path_factory, "serving", _export_model)
    return pathlib.Path(model_dir), pathlib.Path(export_dir), version_path


def _export_model(folder):
    from rnnsearch_tf.inference.translator import Translator
    from serving import export

    model_dir = write_model_dir(folder / "model")
    export_dir = model_dir.parent / "exports" / "rnnsearch"
    translator = Translator.from_model_dir(model_dir, **SEARCH_OPTIONS)
    return str(model_dir), str(export_dir), export.export(translator, str(export_dir))


@contextlib.contextmanager
def grpc_server(add_servicer):
    """A gRPC server on a free loopback port after `add_servicer(server)`; yields its address."""
    server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4))
    add_servicer(server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(grace=None).wait()


def assert_outputs_equal(actual, expected, context=""):
    """The same output names; text and ids equal, floats equal at float32 precision: the same sums in other
    shapes (a batch against one sentence, served against in-process, a shortlist of every word against none)
    round apart on some CPUs (AVX2 kernels)."""
    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        value = np.asarray(value)
        if value.dtype.kind == "f":
            np.testing.assert_allclose(actual[name], value, rtol=1e-5, atol=1e-6, err_msg=f"{context} {name}")
        else:
            np.testing.assert_array_equal(actual[name], value, err_msg=f"{context} {name}")
