"""Traced graphs of a module's `tf.function`s kept on disk, so that a command does not trace them again.

Tracing a `Translator`'s `translate` (its Python code run once to build a graph of about 3,500 ops) costs
about a second of every `rnnsearch translate`, and the graph is the same from one command to the next as
long as the code, the library versions and what the module was built from are. A `FunctionCache` keeps
the traced function (its `FunctionDefLibrary`, the graph TensorFlow runs) in a file named by a digest of
all of those; a later process registers it with the runtime and calls it by name with its own variables
and lookup tables as inputs. The weights are never in the file: a changed checkpoint is used as it is.

After PyTorch's compiled-graph caches and XLA's persistent compilation cache; TensorFlow's own way of
keeping a graph, a SavedModel, rebuilds a Python graph of every function when it is loaded, which costs
as much as tracing (docs/performance.md, "Start-up").

A loaded graph's first call still costs its instantiation (TensorFlow's graph passes: 0.4-0.5 s for a beam
search), which needs only the graph and the kinds of its inputs, not their values. `FunctionCache.warm_up`
does it on a thread of its own while the caller builds its module: the graph last used under the same hint
(a caller's own key, known before its module is: a model directory and the options), called once with
stand-ins for the module's resources that hold no values (the call fails; the instantiated graph is kept
by the runtime, which keys it on the function, its attributes and the inputs' dtypes and devices).
"""

import base64
import functools
import hashlib
import json
import os
import pathlib
import sys
import threading

import keras
import tensorflow as tf
from absl import logging
from google.protobuf import message
from tensorflow.core.framework import function_pb2, tensor_pb2
from tensorflow.python.eager import context, execute

from data_pipeline.export_dir import library_ops, register_text_ops
from data_pipeline.user_cache import cache_directory, write_json

# The code a traced graph depends on: this package and data_pipeline (the tokenizer and vocabulary ops).
_CODE_ROOTS = (pathlib.Path(__file__).resolve().parents[1],
               pathlib.Path(__file__).resolve().parents[2] / "data_pipeline")
KEPT_FILES = 32  # the newest files a cache folder keeps; older ones are deleted when one is written
HINTS = "hints"  # the cache folder's subfolder naming, per hint, the file `function` last returned a graph of


def default_directory():
    """`$XDG_CACHE_HOME/rnnsearch-tf/functions` (`~/.cache/...` without it: `user_cache.cache_directory`)."""
    return cache_directory("functions")


@functools.lru_cache(maxsize=None)
def code_digest():
    """sha256 of the package's Python sources and the versions of Python, TensorFlow and Keras."""
    digest = hashlib.sha256(f"{sys.version}|{tf.__version__}|{keras.__version__}".encode())
    for root in _CODE_ROOTS:
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root.parent)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def resources(module):
    """`[(object, resource tensor)]`: the variables and lookup tables of `module`, in its object graph's
    order (`tf.train.TrackableView`), which depends on the code and the module's construction only."""
    found = []
    for trackable in tf.train.TrackableView(module).descendants():
        if isinstance(trackable, (tf.Variable, keras.Variable)):
            found.append((trackable, trackable.handle))
        elif isinstance(trackable, tf.saved_model.experimental.TrackableResource):
            found.append((trackable, trackable.resource_handle))
    return found


def _describe(trackable):
    """What a resource input must be for a stored graph: its class, and a variable's shape and dtype."""
    if isinstance(trackable, (tf.Variable, keras.Variable)):
        return f"{type(trackable).__name__} {tuple(trackable.shape)} {tf.as_dtype(trackable.dtype).name}"
    return type(trackable).__name__


class StaleEntry(Exception):
    """A stored graph that does not fit the module it was looked up for (it is traced again)."""


def run_graphs_without_grappler():
    """Makes the process's graphs (a loaded SavedModel's signatures) run without TensorFlow's graph optimizer, as
    `GraphFunction` runs the cache's: its rewriting of each graph at the first call took half of that call (0.4-1.6
    s a signature of the peer-size model) and gained nothing measured in the calls after it. For a command's entry
    point (`serve`, `translate --saved_model`, `score --saved_model`): it is a setting of the whole process."""
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})


class GraphFunction:
    """A traced function called by its registered name: `function(**inputs)` -> dict of its outputs.

    Args:
        name: the name of its `FunctionDef`, registered with the eager context.
        input_names: the names of its inputs (the `TensorSpec` names of the `tf.function`), in order.
        output_names: the keys of its dict of outputs, in the order of the `FunctionDef`'s outputs.
        captures: tensors passed after the inputs: the module's resources and captured constants.
        grappler: whether TensorFlow's graph optimizer rewrites the graph when it is first run. A search
            runs a few dozen times per command: the rewriting (0.5 s for the 3,700 nodes of a beam
            search) costs more than it saves (docs/performance.md, "Start-up").
    """

    def __init__(self, name, input_names, output_names, captures, grappler=False):
        self.name = name
        self.input_names = list(input_names)
        self.output_names = list(output_names)
        self.captures = list(captures)
        config = context.context().config
        config.graph_options.rewrite_options.disable_meta_optimizer = not grappler
        self._attributes = ("executor_type", "", "config_proto", config.SerializeToString())

    def __call__(self, **inputs):
        if set(inputs) != set(self.input_names):
            raise TypeError(f"{self.name} takes inputs {self.input_names}, got {sorted(inputs)}")
        arguments = [tf.convert_to_tensor(inputs[name]) for name in self.input_names] + self.captures
        outputs = execute.execute(self.name, num_outputs=len(self.output_names), inputs=arguments,
                                  attrs=self._attributes, ctx=context.context())
        return dict(zip(self.output_names, outputs))


class FunctionCache:
    """Traces a module's `tf.function` once per code, library versions and construction, and keeps it.

    `function(module, name, fingerprint)` returns a `GraphFunction` of `getattr(module, name)`: loaded
    from `directory` where a file of the same key is there, traced (and written there) otherwise. The key
    is a digest of `code_digest()`, `name` and `fingerprint`, which must hold everything else the graph
    depends on (the module's settings, its model's configuration, the digests of the files it was built
    from; `Translator.fingerprint`). The module's resources are looked up in its object graph's order and
    checked against their class, shape and dtype; a file that does not fit is traced again. The function
    must take `TensorSpec`s and return a dict of dense tensors, and capture only resources and constants.

    `warm_up(hint)`, called before the module is built, instantiates on a thread of its own the graph that
    `function(..., hint=hint)` returned last (the module's docstring says how); `function` waits for it
    where it is the graph asked for, and ignores it otherwise.

    Args:
        directory: where the files are; created when the first one is written. A folder that cannot be
            written only means tracing in every process.
        grappler: as `GraphFunction`.

    Example:
    >>> cache = FunctionCache(default_directory())
    >>> cache.warm_up(["models/rnnsearch50", "beam 12"])  # then build the translator
    >>> translate = cache.function(translator, "translate", translator.fingerprint(), ["models/rnnsearch50", "beam 12"])
    >>> translate(text=tf.constant(["A man ."]))["translation"]
    """

    def __init__(self, directory, grappler=False):
        self.directory = pathlib.Path(directory)
        self.grappler = grappler
        self._warm_up = None  # the `WarmUp` started last

    def path(self, name, fingerprint):
        key = hashlib.sha256(json.dumps([code_digest(), name, fingerprint], sort_keys=True).encode()).hexdigest()
        return self.directory / f"{name}-{key[:40]}.json"

    def hint_path(self, hint):
        """The file naming the graph `function` returned last under `hint` (JSON-serializable) with this code."""
        key = hashlib.sha256(json.dumps([code_digest(), hint], sort_keys=True).encode()).hexdigest()
        return self.directory / HINTS / f"{key[:40]}.json"

    def warm_up(self, hint):
        """Starts instantiating the graph `function` returned last under `hint` (a `WarmUp` thread). Returns
        the thread, or None where there is no such graph (a first run, another code, a file since deleted)."""
        try:
            path = self.directory / json.loads(self.hint_path(hint).read_text(encoding="utf-8"))["file"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not path.is_file():
            return None
        self._warm_up = WarmUp(path, self.grappler)
        self._warm_up.start()
        return self._warm_up

    def function(self, module, name, fingerprint, hint=None):
        """`getattr(module, name)` as a `GraphFunction`, its graph loaded or traced; with `hint`, remembered as
        the graph to `warm_up` next time under it."""
        path = self.path(name, fingerprint)
        if self._warm_up is not None and self._warm_up.path == path:
            self._warm_up.join()  # the graph is instantiated: its first call below does not do it again
        function = None
        if path.exists():
            try:
                function = self._load(path, module)
            except (StaleEntry, OSError, ValueError, KeyError, message.DecodeError, tf.errors.OpError) as error:
                logging.info("tracing %s again: %s does not fit (%s)", name, path, error)
        if function is None:
            function, record = self._trace(module, name, path)
            if record is None:
                return function
            self._write(path, record)
        if hint is not None:
            self._remember(hint, path)
        return function

    def _remember(self, hint, path):
        """Names `path` in `hint_path(hint)` (unless it does already); a folder that cannot be written only
        means no warm-up."""
        hint_path = self.hint_path(hint)
        try:
            if hint_path.is_file() and json.loads(hint_path.read_text(encoding="utf-8")).get("file") == path.name:
                return
        except (OSError, ValueError, AttributeError):
            pass  # written again below
        try:
            write_json(hint_path, {"file": path.name})
            _keep_newest(hint_path.parent)
        except OSError as error:
            logging.info("no warm-up is kept in %s: %s", hint_path.parent, error)

    def _trace(self, module, name, path):
        """The traced function, and what `_load` needs of it (None where a capture is not a module resource).

        Its functions are registered again under the names the file gives them (`_renamed`), and called
        by those: the traced and the loaded graph are then one graph, which lives as long as the process
        (the trace's own registration ends with the module's `tf.function`)."""
        concrete = getattr(module, name).get_concrete_function()
        library = concrete.graph.as_graph_def().library
        library.function.add().CopyFrom(concrete.function_def)
        library = _renamed(library, path.stem.rsplit("-", 1)[1])
        self._register(library)
        function = GraphFunction(library.function[-1].signature.name,
                                 [spec.name for spec in tf.nest.flatten(concrete.structured_input_signature)],
                                 sorted(concrete.structured_outputs), concrete.captured_inputs, self.grappler)
        captures = _described_captures(concrete.captured_inputs, resources(module))
        if captures is None:
            logging.info("%s is not kept: it captures a resource outside the module", name)
            return function, None
        return function, dict(name=function.name, inputs=function.input_names, outputs=function.output_names,
                              captures=captures, library=_encode(library.SerializeToString()))

    def _load(self, path, module):
        record = json.loads(path.read_text(encoding="utf-8"))
        live = resources(module)
        captures = []
        for capture in record["captures"]:
            if "resource" not in capture:
                captures.append(_constant(capture))
                continue
            position = capture["resource"]
            if position >= len(live) or _describe(live[position][0]) != capture["describes"]:
                raise StaleEntry(f"resource {position} is not {capture['describes']}")
            captures.append(live[position][1])
        self._register(function_pb2.FunctionDefLibrary.FromString(base64.b64decode(record["library"])))
        os.utime(path)  # the newest files are kept
        logging.debug("loaded the traced %s from %s", record["name"], path)  # --verbosity=1 shows it
        return GraphFunction(record["name"], record["inputs"], record["outputs"], captures, self.grappler)

    @staticmethod
    def _register(library):
        """Registers the library's functions with the eager context, those not registered yet (by an
        earlier trace or load of the same key: a name holds the key)."""
        ctx = context.context()
        for function_def in library.function:
            if not ctx.has_function(function_def.signature.name):
                ctx.add_function_def(function_def)

    def _write(self, path, record):
        """Writes the file at once (`user_cache.write_json`), then keeps the `KEPT_FILES` newest."""
        try:
            write_json(path, record)
            _keep_newest(self.directory)
        except OSError as error:
            logging.info("the traced %s is not kept in %s: %s", record["name"], self.directory, error)


class WarmUp(threading.Thread):
    """A stored graph instantiated ahead of its module, on a thread of its own (`FunctionCache.warm_up`).

    The thread registers the file's functions (TensorFlow Text imported first where they use its ops:
    `export_dir.register_text_ops`, as `ExportVersion.load` does) and calls its graph once on empty inputs of the graph's dtypes,
    with stand-ins for the module's resources (`_stand_in`): variable handles of the stored shapes and dtypes
    that were never given a value, empty tables. The call fails where it first reads one; TensorFlow keeps
    the instantiated graph, and the module's own call of the same graph with its own resources runs it
    without instantiating it again. Nothing here can fail a command: what goes wrong is logged.

    Attributes:
        path: the file of the graph.
        outcome: after `join()`, how the call ended: "ran", an error's class name (the expected end: the
            stand-ins hold no values), or "not warmed up: ..." where the file could not be used.
    """

    def __init__(self, path, grappler=False):
        super().__init__(name=f"warm-up {path.name}", daemon=True)
        self.path = path
        self.grappler = grappler
        self.outcome = None

    def run(self):
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
            library = function_pb2.FunctionDefLibrary.FromString(base64.b64decode(record["library"]))
            register_text_ops(library_ops(library))
            FunctionCache._register(library)
            signature = next(function.signature for function in library.function
                             if function.signature.name == record["name"])
            captures = [_stand_in(capture) for capture in record["captures"]]
            inputs = {name: tf.constant([], tf.as_dtype(argument.type))
                      for name, argument in zip(record["inputs"], signature.input_arg)}
        except (OSError, ValueError, KeyError, TypeError, StopIteration, message.DecodeError) as error:
            self.outcome = f"not warmed up: {error!r}"
            logging.info("%s is not warmed up: %r", self.path, error)
            return
        try:
            GraphFunction(record["name"], record["inputs"], record["outputs"], captures, self.grappler)(**inputs)
            self.outcome = "ran"
        except tf.errors.OpError as error:
            self.outcome = type(error).__name__
        logging.debug("warmed up the traced %s from %s (%s)", record["name"], self.path, self.outcome)


def _stand_in(capture):
    """What `WarmUp` passes for a stored capture: a constant as stored; for a variable, a handle of its shape and
    dtype that was never given a value; for another resource, an empty table's handle (TensorFlow keys an
    instantiated graph on the shapes and dtypes of variable handles only)."""
    if "resource" not in capture:
        return _constant(capture)
    if "dtype" in capture:
        return tf.raw_ops.VarHandleOp(dtype=tf.as_dtype(capture["dtype"]), shape=capture["shape"],
                                      shared_name=context.anonymous_name())
    return tf.raw_ops.AnonymousHashTable(key_dtype=tf.string, value_dtype=tf.int64)


def _constant(capture):
    """The constant a stored capture holds."""
    return tf.constant(tf.make_ndarray(tensor_pb2.TensorProto.FromString(base64.b64decode(capture["tensor"]))))


def _keep_newest(folder):
    """Deletes all but the `KEPT_FILES` newest JSON files of `folder`."""
    kept = sorted(folder.glob("*.json"), key=lambda file: file.stat().st_mtime, reverse=True)
    for old in kept[KEPT_FILES:]:
        old.unlink(missing_ok=True)


def _described_captures(captured, live):
    """What `_load` needs to find each captured tensor again: the position of a resource among `live`
    (`resources(module)`) and what it is, or a constant's value; None if a resource is not there."""
    positions = {id(handle): (position, trackable) for position, (trackable, handle) in enumerate(live)}
    captures = []
    for tensor in captured:
        if tensor.dtype != tf.resource:
            captures.append(dict(tensor=_encode(tf.make_tensor_proto(tensor.numpy()).SerializeToString())))
        elif id(tensor) in positions:
            position, trackable = positions[id(tensor)]
            captures.append(dict(resource=position, describes=_describe(trackable)))
            if isinstance(trackable, (tf.Variable, keras.Variable)):  # what `WarmUp`'s stand-in needs
                captures[-1].update(shape=list(trackable.shape), dtype=tf.as_dtype(trackable.dtype).name)
        else:
            return None
    return captures


def _renamed(library, suffix):
    """A copy of `library` with `_<suffix>` after every function name, where it is defined and where it is
    called (as a node's op or a `func` attribute): names that no trace of this process or file of
    another key uses, so that loading never meets a different function of the same name."""
    library = function_pb2.FunctionDefLibrary.FromString(library.SerializeToString())
    del library.gradient[:]
    names = {function_def.signature.name for function_def in library.function}

    def rename(name):
        return f"{name}_{suffix}" if name in names else name

    for function_def in library.function:
        function_def.signature.name = rename(function_def.signature.name)
        for node in function_def.node_def:
            node.op = rename(node.op)
            for value in node.attr.values():
                if value.HasField("func"):
                    value.func.name = rename(value.func.name)
                for function in value.list.func:
                    function.name = rename(function.name)
    return library


def _encode(data):
    return base64.b64encode(data).decode("ascii")
