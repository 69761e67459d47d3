"""TF Serving's `--model_config_file`: a text-format `ModelServerConfig` naming several models.

    model_config_list {
      config { name: "enfr" base_path: "/models/enfr" model_platform: "tensorflow"
               model_version_policy { latest { num_versions: 2 } } }
      config { name: "fren" base_path: "/models/fren" model_platform: "tensorflow"
               model_version_policy { specific { versions: 3 versions: 4 } } }
    }

Parsed by protobuf's text format into tensorflow-serving-api's own `ModelServerConfig`, so a file that
`tensorflow_model_server` reads is read here the same way; what the local server cannot do (another
platform, a `custom_model_config`, version labels, request logging's `logging_config`) is refused in one line
naming the field, not ignored.
"""

import os

from google.protobuf import text_format
from tensorflow_serving.config import model_server_config_pb2

from serving.served_model import VersionPolicy

ModelConfig = model_server_config_pb2.ModelConfig
PLATFORM = "tensorflow"


def model_config(name, base_path, version_policy=None):
    """The `ModelConfig` of the single-model flags (`--model_name`, `--model_base_path`)."""
    config = ModelConfig(name=name, base_path=os.fspath(base_path), model_platform=PLATFORM)
    if version_policy is not None:
        config.model_version_policy.CopyFrom(version_policy)
    return config


def version_policy(latest=None, specific=()):
    """A `VersionPolicy` serving the `latest` N versions or the `specific` ones (both empty: latest 1)."""
    if latest is not None and specific:
        raise ValueError("a version policy serves the latest N versions or specific ones, not both")
    policy = VersionPolicy()
    if specific:
        policy.specific.versions.extend(int(version) for version in specific)
    else:
        policy.latest.num_versions = 1 if latest is None else latest
        if policy.latest.num_versions < 1:
            raise ValueError(f"latest.num_versions must be at least 1, got {latest}")
    return policy


def parse_model_config_list(text, path="<text>"):
    """The `ModelConfig`s of a `ModelServerConfig` text; ValueError naming `path` and the field otherwise."""
    try:
        config = text_format.Parse(text, model_server_config_pb2.ModelServerConfig())
    except text_format.ParseError as error:
        raise ValueError(f"{path}: not a ModelServerConfig: {error}") from None
    if config.WhichOneof("config") != "model_config_list":
        raise ValueError(f"{path}: model_config_list is missing (custom_model_config is not served here)")
    models = list(config.model_config_list.config)
    if not models:
        raise ValueError(f"{path}: model_config_list holds no config")
    names = set()
    for index, model in enumerate(models):
        where = f"{path}: config {index + 1} ({model.name or 'no name'})"
        if not model.name or not model.base_path:
            raise ValueError(f"{where}: name and base_path are required")
        if model.name in names:
            raise ValueError(f"{where}: name {model.name!r} is given twice")
        names.add(model.name)
        if model.model_platform not in ("", PLATFORM):
            raise ValueError(f"{where}: model_platform must be {PLATFORM!r}, got {model.model_platform!r}")
        if model.version_labels:
            raise ValueError(f"{where}: version_labels are not served here; name versions by number")
        if model.HasField("logging_config"):
            raise ValueError(f"{where}: logging_config is not served here (requests are not logged); remove it")
        policy = model.model_version_policy  # `latest {}` serves 1, as in TF Serving (`wanted_versions`)
        if policy.WhichOneof("policy_choice") == "specific" and not policy.specific.versions:
            raise ValueError(f"{where}: model_version_policy.specific names no versions")
    return models


def read_model_config_file(path):
    """`parse_model_config_list` of the file at `path` (a relative base_path is, as in TF Serving, relative to
    the server's working folder)."""
    with open(path, encoding="utf-8") as stream:
        return parse_model_config_list(stream.read(), path)
