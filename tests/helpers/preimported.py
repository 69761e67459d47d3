"""`subprocess.run` for the commands the tests start, each in a process forked from one that has already
imported TensorFlow, as `rnnsearch <command>` imports it (quietly, without matplotlib).

`import tensorflow` is about 2 s of every command, and the tests start over a hundred commands. Forked, a
command is still a process of its own (its own pid, flags, variables, graphs, standard streams, working
folder and environment), running the same `python -m MODULE` code from the same `__main__`, and it ends as
a process does (its exit code, or the signal that killed it); only the import is done once, before. As
Android's zygote, or the fork server of `multiprocessing`.

The import's own behaviour (what a command imports, and how quietly) is tested in real processes:
`tests/test_main.py`, `conftest.fresh_python`. Whatever is not a TensorFlow command of ours gets a real
process (`subprocess.run`), as do the commands the tests signal, wait on or read as they run (`Popen`).

The forking process is this file run as a script, started at a test process's first command with the
variables of its environment that Python and TensorFlow read as they start (`_STARTUP_PREFIXES`; a command
with other values gets a forking process of its own). It serves one command at a time over a socket pair
(the command line, working folder, environment and the three standard streams' file descriptors in; the
pid and then the exit status out) and ends when the test process closes its end.
"""

import json
import locale
import os
import runpy
import signal
import socket
import subprocess
import sys
import threading

from rnnsearch_tf.cli import main as command_line  # absl only: TensorFlow is imported by its commands

# The modules run as `python -m MODULE` that import TensorFlow at once: the command line and its aliases.
TENSORFLOW_MODULES = ("rnnsearch_tf.cli.main", "rnnsearch_tf.train", "rnnsearch_tf.translate", "rnnsearch_tf.score",
                      "rnnsearch_tf.evaluate", "rnnsearch_tf.average_checkpoints")
# Commands of `rnnsearch_tf.cli.main` that never import TensorFlow: a real process, so that they run without it.
WITHOUT_TENSORFLOW = tuple(name for name, (module, _) in command_line.COMMANDS.items()
                           if module in command_line.WITHOUT_TENSORFLOW)
# The environment read when Python and TensorFlow start: each set of values gets a forking process of its own.
_STARTUP_PREFIXES = ("TF_", "KERAS_", "PYTHON", "HOME", "LANG", "LC_", "OMP_", "KMP_", "ONEDNN_", "MKL")
_MESSAGE_BYTES = 1 << 20

# {startup environment: (Popen, socket)} of this test process; the Popen is kept so that it is not collected (and
# warned of) while its process runs, which ends when the test process, and with it the socket, closes.
_forking_processes = {}
_lock = threading.Lock()


def run(args, *, input=None, stdin=None, stdout=None, stderr=None, capture_output=False, text=False, env=None,
        cwd=None, timeout=None, check=False):
    """`subprocess.run(args, ...)` with these arguments, a forked process where `args` is
    `[sys.executable, "-m", MODULE, ...]` for a module of `TENSORFLOW_MODULES` (else a real one)."""
    if not _forks(args):
        return subprocess.run(args, input=input, stdin=stdin, stdout=stdout, stderr=stderr,
                              capture_output=capture_output, text=text, env=env, cwd=cwd, timeout=timeout, check=check)
    environment = dict(os.environ if env is None else env)
    if capture_output:
        stdout = stderr = subprocess.PIPE
    streams = _Streams(input, stdin, stdout, stderr, text)
    with _lock:
        control = _forking_process(environment)
        request = {"args": list(args[2:]), "cwd": os.fspath(cwd or os.getcwd()), "env": environment}
        socket.send_fds(control, [json.dumps(request).encode()], streams.theirs)
        streams.start()
        pid = _reply(control)["pid"]
        killer = _Killer(pid, timeout)
        returncode = _reply(control)["returncode"]
        killer.cancel()
    output, errors = streams.finish()
    if killer.killed:
        raise subprocess.TimeoutExpired(args, timeout, output, errors)
    result = subprocess.CompletedProcess(args, returncode, output, errors)
    if check:
        result.check_returncode()
    return result


def _reply(control):
    message = control.recv(_MESSAGE_BYTES)
    if not message:
        raise RuntimeError("the forking process of tests/helpers/preimported.py has ended")
    return json.loads(message)


class _Killer:
    """Kills process `pid` after `timeout` seconds (None: never), as `subprocess.run` kills on its timeout."""

    def __init__(self, pid, timeout):
        self.pid, self.killed = pid, False
        self.timer = threading.Timer(timeout, self._kill) if timeout else None
        if self.timer:
            self.timer.start()

    def _kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
            self.killed = True
        except ProcessLookupError:  # it ended just now
            pass

    def cancel(self):
        if self.timer:
            self.timer.cancel()


def _forks(args):
    if len(args) < 3 or args[0] != sys.executable or args[1] != "-m" or args[2] not in TENSORFLOW_MODULES:
        return False
    return not (args[2] == "rnnsearch_tf.cli.main" and len(args) > 3 and args[3] in WITHOUT_TENSORFLOW)


def _startup(environment):
    return tuple(sorted((name, value) for name, value in environment.items() if name.startswith(_STARTUP_PREFIXES)))


def _forking_process(environment):
    """The socket of this test process's forking process for `environment`'s start-up settings (started now
    if there is none yet)."""
    key = _startup(environment)
    if key not in _forking_processes:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        process = subprocess.Popen([sys.executable, __file__, str(theirs.fileno())], pass_fds=[theirs.fileno()],
                                   env=dict(key), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        theirs.close()
        _forking_processes[key] = (process, ours)
    return _forking_processes[key][1]


class _Streams:
    """The three standard streams of a forked command: the descriptors it gets, and the threads that feed
    `input` to its stdin and read what it writes to pipes (`subprocess.PIPE`), as `Popen.communicate`."""

    def __init__(self, input, stdin, stdout, stderr, text):
        self.text = text
        self.input = input.encode() if text and isinstance(input, str) else input
        if self.input is not None:
            memoryview(self.input)  # TypeError here, as `subprocess.run` raises, for text without text=True
        self.ends = []  # our ends of the pipes: (descriptor, the stream's name)
        self.theirs = []
        for name, given, default in (("stdin", stdin, 0), ("stdout", stdout, 1), ("stderr", stderr, 2)):
            self.theirs.append(self._descriptor(name, given, default))
        self.read = {}
        self.threads = []

    def _descriptor(self, name, given, default):
        if name == "stdin" and self.input is not None or given is subprocess.PIPE:
            read_end, write_end = os.pipe()
            mine, theirs = (write_end, read_end) if name == "stdin" else (read_end, write_end)
            self.ends.append((mine, name))
            return theirs
        if given is subprocess.DEVNULL:
            return os.open(os.devnull, os.O_RDWR)
        if given is subprocess.STDOUT:
            return self.theirs[1]
        if given is None:
            return os.dup(default)
        return os.dup(given if isinstance(given, int) else given.fileno())

    def start(self):
        """Closes the command's ends here and starts feeding and reading ours."""
        for descriptor in set(self.theirs):
            os.close(descriptor)
        for descriptor, name in self.ends:
            target = self._feed if name == "stdin" else self._read
            thread = threading.Thread(target=target, args=(descriptor, name), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _feed(self, descriptor, _):
        with open(descriptor, "wb") as stream:
            try:
                stream.write(self.input or b"")
            except BrokenPipeError:
                pass

    def _read(self, descriptor, name):
        with open(descriptor, "rb") as stream:
            self.read[name] = stream.read()

    def finish(self):
        """(stdout, stderr) as `subprocess.run` returns them: what was read from pipes, else None."""
        for thread in self.threads:
            thread.join()
        values = [self.read.get(name) for name in ("stdout", "stderr")]
        if self.text:  # `subprocess`'s text: the locale's encoding, universal newlines
            encoding = locale.getpreferredencoding(False)
            values = [None if value is None else value.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")
                      for value in values]
        return values


def _serve(control):
    """Forks a process for each command read from `control`; returns the command in the forked process, None
    in this one when the test process has closed its end."""
    while True:
        message, descriptors, _, _ = socket.recv_fds(control, _MESSAGE_BYTES, 3)
        if not message:
            return None
        pid = os.fork()
        if pid == 0:
            control.close()
            return json.loads(message), descriptors
        for descriptor in descriptors:
            os.close(descriptor)
        control.send(json.dumps({"pid": pid}).encode())
        _, status = os.waitpid(pid, 0)
        control.send(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())


def _become(request, descriptors):
    """Makes this forked process the command's: its streams, folder, environment and `python -m` arguments."""
    for target, descriptor in enumerate(descriptors):
        os.dup2(descriptor, target)
    for descriptor in set(descriptors):
        if descriptor > 2:
            os.close(descriptor)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = request["cwd"]  # what `python -m` puts first
    sys.argv = list(request["args"])  # runpy puts the module's file first, as `python -m`


def _main():
    command_line.import_tensorflow_without_matplotlib()
    del sys.modules["rnnsearch_tf.cli.main"]  # run anew as `__main__` by the commands that are it
    command = _serve(socket.socket(fileno=int(sys.argv[1])))
    if command is None:
        return
    request, descriptors = command
    _become(request, descriptors)
    runpy.run_module(request["args"][0], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    _main()
