"""serving/served_model.py: versions found, loaded, refused and unloaded as TF Serving does it, over real exports
copied into a base path the way a user drops a version in."""

import logging
import os
import threading
import time

import grpc
import numpy as np
import pytest

from serving.request_status import ServableNotFound
from serving.served_model import State, ServedModel, VersionPolicy, wanted_versions
from helpers.versioned_exports import PROBES, copy_version, expected_translations, staged_versions


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    return staged_versions(tmp_path_factory)


@pytest.fixture(scope="module")
def expected(staged, tmp_path_factory):
    translations = expected_translations(tmp_path_factory, staged)
    assert len({tuple(texts) for texts in translations.values()}) == len(translations)  # they tell versions apart
    return translations


def _translate(model, version=None):
    with model.servable(version) as servable:
        outputs = servable.predict("translate", {"text": np.array([probe.encode() for probe in PROBES], object)})
        return servable.version, [text.decode("utf-8") for text in outputs["translation"]]


def _states(model):
    return {version: State.Name(state) for version, state, _ in model.version_status()}


def _policy(text):
    from google.protobuf import text_format

    return text_format.Parse(text, VersionPolicy())


def test_only_complete_integer_folders_are_loaded(staged, tmp_path):
    copy_version(staged, 1, tmp_path)
    copy_version(staged, 2, tmp_path, complete=False)  # no variables/ yet
    os.makedirs(tmp_path / ".incomplete-3")
    os.makedirs(tmp_path / "notes")
    model = ServedModel("rnnsearch", tmp_path)
    assert model.poll() == [1]
    assert [version for version, _, _ in model.version_status()] == [1]  # 2 was never tried
    model.close()
    assert ServedModel("rnnsearch", tmp_path / "missing").poll() == []


@pytest.mark.parametrize("policy, wanted", [
    ("", {5}), ("latest { num_versions: 2 }", {3, 5}), ("all {}", {1, 3, 5}),
    ("latest {}", {5}), ("latest { num_versions: 0 }", {5}),  # TF Serving's std::max(num_versions, 1)
    ("specific { versions: 1 versions: 4 }", {1}),
])
def test_the_version_policy_picks_tf_servings_versions(policy, wanted):
    assert wanted_versions(_policy(policy), {1: "1", 3: "3", 5: "5"}) == wanted


def test_a_new_version_replaces_the_old_once_complete(staged, expected, tmp_path):
    copy_version(staged, 1, tmp_path)
    model = ServedModel("rnnsearch", tmp_path)
    with pytest.raises(ServableNotFound, match=r"Latest\(rnnsearch\): no version"):
        model.servable().__enter__()
    assert model.poll() == [1]
    assert _translate(model) == (1, expected[1])
    copy_version(staged, 2, tmp_path, complete=False)
    assert model.poll() == [1]  # a copy under way is left alone
    assert _states(model) == {1: "AVAILABLE"}
    os.rename(tmp_path / "2", tmp_path / "2.partial")
    copy_version(staged, 2, tmp_path)
    assert model.poll() == [2]
    assert _states(model) == {1: "END", 2: "AVAILABLE"}
    assert _translate(model) == (2, expected[2]) == _translate(model, 2)
    with pytest.raises(ServableNotFound, match=r"Specific\(rnnsearch, 1\): version 1 .* \(available: \[2\]\)"):
        _translate(model, 1)
    model.close()


def test_a_broken_version_is_logged_and_the_old_one_keeps_serving(staged, expected, tmp_path):
    copy_version(staged, 1, tmp_path)
    model = ServedModel("rnnsearch", tmp_path)
    assert model.poll() == [1]
    broken = copy_version(staged, 2, tmp_path)
    with open(os.path.join(broken, "saved_model.pb"), "wb") as stream:
        stream.write(b"not a SavedModel")
    assert model.poll() == [1]
    status = {version: (State.Name(state), error) for version, state, error in model.version_status()}
    assert status[1] == ("AVAILABLE", status[1][1]) and not status[1][1].error_message
    assert status[2][0] == "END" and "Wire format was corrupt" in status[2][1].error_message
    assert status[2][1].error_code == grpc.StatusCode.UNKNOWN.value[0]  # not a TensorFlow error: no code of its own
    assert _translate(model) == (1, expected[1])
    assert model.poll() == [1]  # not tried again while its files are the same
    copy_version(staged, 3, tmp_path)
    assert model.poll() == [3]
    assert _translate(model) == (3, expected[3])
    model.close()


# `large`: the default suite loads the versions the policy picks (test_the_version_policy_picks_tf_servings_versions)
# and serves each loaded version (above); two at once is their sum
@pytest.mark.large
def test_specific_versions_are_served_side_by_side(staged, expected, tmp_path):
    for version in (1, 2, 3):
        copy_version(staged, version, tmp_path)
    model = ServedModel("rnnsearch", tmp_path, _policy("specific { versions: 1 versions: 2 }"))
    assert model.poll() == [1, 2]
    assert _translate(model, 1) == (1, expected[1]) and _translate(model, 2) == (2, expected[2])
    assert _translate(model)[0] == 2  # no version asked: the newest served
    assert _states(model) == {1: "AVAILABLE", 2: "AVAILABLE"}
    model.close()
    assert _states(model) == {1: "END", 2: "END"}


# `large`: the default suite leaves a version that a request holds to it when the server stops
# (tests/test_model_manager.py) and replaces a version once the new one is complete (above)
@pytest.mark.large
def test_a_version_in_use_is_unloaded_only_after_its_requests(staged, tmp_path):
    copy_version(staged, 1, tmp_path)
    model = ServedModel("rnnsearch", tmp_path)
    model.poll()
    copy_version(staged, 2, tmp_path)
    with model.servable() as held:
        switching = threading.Thread(target=model.poll)
        switching.start()
        seen, deadline = [], time.monotonic() + 120  # version 2's states as it loads, warms up, then waits
        while time.monotonic() < deadline:
            states = _states(model)
            if states.get(2) and seen[-1:] != [states[2]]:
                seen.append(states[2])
            if states == {1: "UNLOADING", 2: "AVAILABLE"}:
                break
            time.sleep(0.005)
        switching.join(timeout=5)
        assert seen == ["LOADING", "AVAILABLE"]
        assert switching.is_alive() and _states(model) == {1: "UNLOADING", 2: "AVAILABLE"}
        assert held.predict("translate", {"text": np.array([b"dog"], object)})["translation"].shape == (1,)
    switching.join(timeout=60)
    assert not switching.is_alive() and _states(model) == {1: "END", 2: "AVAILABLE"}
    model.close()


def test_a_load_error_keeps_its_code(staged, tmp_path):
    broken = copy_version(staged, 1, tmp_path)
    os.remove(os.path.join(broken, "assets", "source_vocab.tsv"))  # the vocabulary the graph reads is gone
    model = ServedModel("rnnsearch", tmp_path)
    assert model.poll() == []
    [(version, state, error)] = model.version_status()
    assert (version, State.Name(state)) == (1, "END")
    assert error.error_code == grpc.StatusCode.NOT_FOUND.value[0], error
    with pytest.raises(ServableNotFound, match=r"no version of 'rnnsearch' is available now \(versions: 1 END\)"):
        model.servable().__enter__()


def test_a_missing_base_path_keeps_what_is_loaded_and_is_logged_once_each_way(staged, expected, tmp_path, caplog):
    """TF Serving checks the base path before listing it, so that a base path moved away (and back) does not
    unload every version; here the same, with one warning when it goes and one line when it is back."""
    base = tmp_path / "base"
    copy_version(staged, 1, base)
    model = ServedModel("rnnsearch", base)
    assert model.poll() == [1]
    with caplog.at_level(logging.INFO, logger="absl"):
        os.rename(base, tmp_path / "base_away")
        assert model.poll() == [1] and model.poll() == [1]
        assert _translate(model) == (1, expected[1]) and _states(model) == {1: "AVAILABLE"}
        os.rename(tmp_path / "base_away", base)
        assert model.poll() == [1] and model.poll() == [1]
    messages = [record.getMessage() for record in caplog.records]
    assert [message for message in messages if "base path" in message] == [
        f"rnnsearch: base path {base} is missing; versions [1] keep serving until it is back",
        f"rnnsearch: base path {base} is back; looking for versions again"]
    os.rename(base / "1", tmp_path / "1_away")  # the version itself removed: unloaded, as TF Serving does
    os.makedirs(base / "notes")
    assert model.poll() == []
    with pytest.raises(ServableNotFound, match=r"is available now \(versions: 1 END\)"):
        model.servable().__enter__()
    model.close()


# large: a poll loop of its own (7 s); the default suite reads such names in tests/test_export_dir.py
@pytest.mark.large
def test_a_folder_name_that_is_no_ascii_number_is_not_a_version(staged, tmp_path):
    copy_version(staged, 1, tmp_path)
    os.rename(copy_version(staged, 2, tmp_path), tmp_path / "\u00b2")  # str.isdigit, but int() fails
    model = ServedModel("rnnsearch", tmp_path)
    assert model.poll() == [1]
    assert [version for version, _, _ in model.version_status()] == [1]
    model.close()
