"""Every model a server serves, by name, with the thread that watches their base paths for new versions (TF
Serving's `--file_system_poll_wait_seconds`)."""

import threading
import time

from absl import logging

from data_pipeline.export_dir import VERSION_FOLDER
from serving.request_status import ServableNotFound
from serving.served_model import ServedModel


MAX_NAME_SHOWN = 200  # characters of an unknown model name that its error repeats


class ModelManager:
    """The `ServedModel`s of one server, and their polling.

    Args:
        models: `ServedModel`s, with different names; the first is the page's default.
        poll_wait_seconds: seconds between two looks at every base path (TF Serving's default, 1); 0 or
            below: the one look of `start()` only.

    Example:
    >>> manager = ModelManager([ServedModel("rnnsearch", "exports/rnnsearch")]).start()
    >>> with manager.model("rnnsearch").servable() as servable:
    ...     servable.version
    1
    """

    def __init__(self, models, poll_wait_seconds=1.0):
        self.models = {}
        for model in models:
            if model.name in self.models:
                raise ValueError(f"model name {model.name!r} is given twice; each model needs its own name")
            self.models[model.name] = model
        if not self.models:
            raise ValueError("no model to serve")
        self.poll_wait_seconds = poll_wait_seconds
        self._stopped = threading.Event()
        self._thread = None

    @classmethod
    def serving(cls, *servables):
        """A manager of loaded `Servable`s (one version each, no base path to watch): what tests and tools serve."""
        return cls([ServedModel(servable.model_name, servables=[servable]) for servable in servables], 0)

    @property
    def default_model_name(self):
        return next(iter(self.models))

    def model(self, name):
        """The `ServedModel` called `name`; ServableNotFound naming the served ones otherwise (and the first
        `MAX_NAME_SHOWN` characters of `name`)."""
        try:
            return self.models[name]
        except KeyError:
            if len(name) > MAX_NAME_SHOWN:  # a gRPC status message past 16 KB reaches the client as another error
                name = f"{name[:MAX_NAME_SHOWN]}... ({len(name)} characters)"
            raise ServableNotFound(f"Servable not found for request: Latest({name}): no model {name!r}; this "
                                   f"server has {sorted(self.models)}") from None

    def start(self):
        """Looks at every base path once (loading what each version policy wants), then keeps looking every
        `poll_wait_seconds` in a thread. Raises the load error of a model left without any AVAILABLE version."""
        for model in self.models.values():
            if not model.poll() and model.base_path is not None:
                self.close()
                raise FileNotFoundError(_nothing_served(model))
        if self.poll_wait_seconds > 0:
            self._thread = threading.Thread(target=self._watch, name="model-poll", daemon=True)
            self._thread.start()
        return self

    def _watch(self):
        while not self._stopped.wait(self.poll_wait_seconds):
            for model in self.models.values():
                try:
                    model.poll()
                except Exception as error:  # a file system hiccup must not end the watching
                    logging.error("looking at %s for new versions of %s failed: %s", model.base_path, model.name,
                                  error)

    def close(self, timeout=None):
        """Stops watching and unloads every version after the requests that hold them, waiting for those at most
        `timeout` seconds (None: as long as they take; a version being loaded by the watching thread is not
        waited for past it either). Returns how many requests were still running at the end: a stopping
        server abandons them (`rnnsearch serve`: a graph that is running cannot be cancelled)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return sum(model.close(deadline) for model in self.models.values())


def _nothing_served(model):
    """Why `model` has no AVAILABLE version after its first look: its load errors, or no complete folder."""
    try:
        status = model.version_status()
    except ServableNotFound:
        status = []
    errors = [f"version {version}: {error.error_message}" for version, _, error in status if error.error_message]
    if errors:
        return f"{model.name}: no version of {model.base_path} loaded ({'; '.join(errors)})"
    return f"{model.name}: no version folder ({VERSION_FOLDER}) that the version policy serves in {model.base_path}"
