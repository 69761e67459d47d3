"""One served model: the versions of its base path that its version policy wants, loaded, switched and unloaded
as `tensorflow_model_server` does it.

TF Serving's rules, kept here:
- a version is an integer subfolder of the base path; it is complete (and loaded) only once it holds
  `saved_model.pb` and `variables/variables.index` (`ExportDir.versions`; a folder still being copied is looked at
  again at the next poll);
- the version policy (`FileSystemStoragePathSourceConfig.ServableVersionPolicy`: `latest { num_versions }`,
  default 1; `all {}`; `specific { versions }`) says which versions on disk are served;
- a new version is loaded and warmed up (LOADING) before it answers (AVAILABLE); a version no longer wanted
  is unloaded (UNLOADING, then END) only once a wanted version is AVAILABLE (TF Serving's
  availability-preserving policy), and only after the requests that hold it have been answered, so that no
  request fails or changes version during a switch;
- a version that fails to load is logged and shown as END with the error (its code where known, else UNKNOWN); the
  others keep serving. It is tried again only when its folder's files change;
- a base path that is missing, even for a moment (moved away and back), changes nothing: what is loaded keeps
  serving, as TF Serving's file system source checks the base path before it lists the versions, so that it
  "[doesn't] emit an empty aspired-versions list for a non-existent (or transiently unavailable) base-path"
  (tensorflow/serving's `sources/storage_path/file_system_storage_path_source.cc`, `PollFileSystemForServable`).
"""

import collections
import contextlib
import os
import threading
import time

import grpc
import tensorflow as tf
from absl import logging
from tensorflow_serving.apis import get_model_status_pb2, status_pb2
from tensorflow_serving.config import file_system_storage_path_source_pb2

from data_pipeline.export_dir import ExportDir
from serving.request_status import ServableNotFound, grpc_code
from serving.servable import Servable

VersionPolicy = file_system_storage_path_source_pb2.FileSystemStoragePathSourceConfig.ServableVersionPolicy
State = get_model_status_pb2.ModelVersionStatus.State


def wanted_versions(policy, on_disk):
    """The versions of `on_disk` that a `VersionPolicy` serves (latest 1 when none is set; `latest {}`, whose
    `num_versions` is 0, serves 1 too: TF Serving's `std::max(num_versions, 1U)` in `AspireLatestVersions`)."""
    choice = policy.WhichOneof("policy_choice")
    if choice == "all":
        return set(on_disk)
    if choice == "specific":
        return set(policy.specific.versions) & set(on_disk)
    count = max(policy.latest.num_versions, 1) if choice == "latest" else 1
    return set(sorted(on_disk)[-count:])


def _load_error_code(error):
    """The `grpc.StatusCode` of a failed load where the error has one, as TF Serving reports a load's status:
    a TensorFlow error's own, NOT_FOUND for a missing file (an asset the graph reads), else UNKNOWN."""
    if isinstance(error, tf.errors.OpError):
        return grpc_code(error)
    return grpc.StatusCode.NOT_FOUND if isinstance(error, FileNotFoundError) else grpc.StatusCode.UNKNOWN


def _fingerprint(path):
    """The names, sizes and times of the files under `path`: what changes when a folder is copied again."""
    files = []
    for folder, _, names in os.walk(path):
        for name in names:
            stat = os.stat(os.path.join(folder, name))
            files.append((os.path.relpath(os.path.join(folder, name), path), stat.st_size, stat.st_mtime_ns))
    return tuple(sorted(files))


class ServedModel:
    """The versions of one model, by name, that requests borrow with `servable(version)`.

    Args:
        name: the model name requests use.
        base_path: folder of integer versions, read by `poll()`; None: only the `servables` given.
        version_policy: a `VersionPolicy` proto; default latest 1.
        batching: `serving.batching.BatchingParameters` of every version's batcher; None: no batching.
        metrics: `serving.metrics.ServerMetrics` counting loads, warm-ups and batches.
        servables: versions already loaded (`Servable`s), AVAILABLE at once.

    Example:
    >>> model = ServedModel("rnnsearch", "exports/rnnsearch")
    >>> model.poll()
    >>> with model.servable() as servable:
    ...     servable.predict("translate", {"text": np.array([b"A sentence."], object)})
    """

    def __init__(self, name, base_path=None, version_policy=None, batching=None, metrics=None, servables=()):
        self.name = name
        self.base_path = None if base_path is None else os.fspath(base_path)
        self.version_policy = version_policy or VersionPolicy()
        self.batching = batching
        self.metrics = metrics
        self._condition = threading.Condition()
        self._available = {servable.version: servable for servable in servables}
        self._leases = collections.Counter()
        self._status = {version: (State.AVAILABLE, status_pb2.StatusProto()) for version in self._available}
        self._failed = {}  # version: fingerprint of the folder that failed to load
        self._base_path_missing = False  # logged once when it goes, once when it is back

    @contextlib.contextmanager
    def servable(self, version=None):
        """The `Servable` of `version` (None: the newest AVAILABLE), held until the block ends: it is not
        unloaded while a request uses it. Raises `ServableNotFound` when it is not AVAILABLE."""
        with self._condition:
            if version is None:
                if not self._available:
                    known = ", ".join(f"{number} {State.Name(state)}" for number, (state, _) in
                                      sorted(self._status.items()))
                    raise ServableNotFound(f"Servable not found for request: Latest({self.name}): no version of "
                                           f"{self.name!r} is available now" + (known and f" (versions: {known})"))
                version = max(self._available)
            elif version not in self._available:
                raise ServableNotFound(
                    f"Servable not found for request: Specific({self.name}, {version}): version {version} of "
                    f"{self.name!r} is not available (available: {sorted(self._available)})")
            self._leases[version] += 1
            servable = self._available[version]
        try:
            yield servable
        finally:
            with self._condition:
                self._leases[version] -= 1
                self._condition.notify_all()

    def available_versions(self):
        with self._condition:
            return sorted(self._available)

    def version_status(self, version=None):
        """[(version, State, `StatusProto`)] of every version this server has known (or of `version`), as
        TF Serving's GetModelStatus lists them (the status: error_code OK, or the load's error); ServableNotFound
        when there is none."""
        with self._condition:
            status = sorted(self._status.items()) if version is None else (
                [(version, self._status[version])] if version in self._status else [])
        if not status:
            name = f"Specific({self.name}, {version})" if version is not None else f"Latest({self.name})"
            raise ServableNotFound(f"Could not find any versions of model {self.name}: Servable not found for "
                                   f"request: {name}")
        return [(number, state, error) for number, (state, error) in status]

    def poll(self):
        """Loads the wanted versions of the base path that are not loaded, then unloads the unwanted ones
        once a wanted version is AVAILABLE; returns the versions AVAILABLE after it."""
        if self.base_path is None:
            return self.available_versions()
        export_dir = ExportDir(self.base_path)
        on_disk = export_dir.versions()
        if not self._base_path_found(export_dir.exists()):  # looked at after listing: gone meanwhile is gone too
            return self.available_versions()
        wanted = wanted_versions(self.version_policy, on_disk)
        for version in sorted(wanted - set(self.available_versions()), reverse=True):
            self._load(version, on_disk[version].path)
        with self._condition:
            unwanted = set(self._available) - wanted
            if wanted and not wanted & set(self._available):
                unwanted = set()  # the old versions serve until a wanted one is AVAILABLE
        for version in sorted(unwanted):
            self._unload(version)
        return self.available_versions()

    def _base_path_found(self, found):
        """`found`, logged when it changes: a warning once when the base path goes (what is loaded keeps serving),
        a line once when it is back."""
        if found == self._base_path_missing:
            self._base_path_missing = not found
            if found:
                logging.info("%s: base path %s is back; looking for versions again", self.name, self.base_path)
            else:
                logging.warning("%s: base path %s is missing; versions %s keep serving until it is back", self.name,
                                self.base_path, self.available_versions())
        return found

    def _load(self, version, path):
        fingerprint = _fingerprint(path)
        if self._failed.get(version) == fingerprint:
            return  # failed before; tried again once its files change
        with self._condition:
            self._status[version] = (State.LOADING, status_pb2.StatusProto())
        logging.info("loading %s version %d from %s", self.name, version, path)
        try:
            servable = Servable(self.base_path, self.name, self.batching, version=version, metrics=self.metrics)
        except Exception as error:  # a broken version never stops the server: the others keep serving
            logging.error("%s version %d at %s failed to load: %s", self.name, version, path, error)
            self._failed[version] = fingerprint
            code = _load_error_code(error)
            with self._condition:
                self._status[version] = (State.END, status_pb2.StatusProto(
                    error_code=code.value[0], error_message=f"{type(error).__name__}: {error}"))
            return
        self._failed.pop(version, None)
        with self._condition:
            self._available[version] = servable
            self._status[version] = (State.AVAILABLE, status_pb2.StatusProto())
        logging.info("%s version %d is available (%d warm-up requests)", self.name, version, servable.warmup_requests)

    def _unload(self, version, deadline=None):
        """Stops giving out `version`, waits for the requests that hold it, then closes it. With a `deadline`
        (a `time.monotonic()` value) it waits no longer: requests still holding the version then keep it, unclosed
        (a server stopping abandons them, `ModelManager.close`)."""
        with self._condition:
            servable = self._available.pop(version, None)
            if servable is None:
                return  # unloaded meanwhile by the other thread (a poll, or a server stopping)
            self._status[version] = (State.UNLOADING, status_pb2.StatusProto())
            while self._leases[version]:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    logging.warning("%s version %d: %d requests still running, left unfinished", self.name, version,
                                    self._leases[version])
                    return
                self._condition.wait(left)
        servable.close()
        with self._condition:
            self._status[version] = (State.END, status_pb2.StatusProto())
        logging.info("%s version %d unloaded", self.name, version)

    def close(self, deadline=None):
        """Unloads every version after their requests, waiting for them until `deadline` at most (`_unload`);
        returns how many requests still hold a version then (also one a poll is unloading)."""
        for version in self.available_versions():
            self._unload(version, deadline)
        with self._condition:
            return sum(self._leases.values())
