"""serving/browser_guard.py: each defence against a foreign web page (DNS rebinding Host, cross-site Origin, a
body not declared JSON) refuses in one line and runs nothing; the server's own pages, localhost and programs
without those headers pass; and a real `rnnsearch serve` port answers so."""

import io
import json
import urllib.error
import urllib.request

import pytest

from serving.browser_guard import BrowserGuard


class _App:
    """A WSGI application that counts its calls: whatever the guard refuses never reaches it."""

    calls = 0

    def __call__(self, environ, start_response):
        self.calls += 1
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b"{}"]


def _request(guard, method="POST", host="127.0.0.1:8501", origin=None, content_type="application/json"):
    environ = {"REQUEST_METHOD": method, "PATH_INFO": "/v1/models/m:predict", "wsgi.input": io.BytesIO(b"{}"),
               "CONTENT_LENGTH": "2"}
    for name, value in (("HTTP_HOST", host), ("HTTP_ORIGIN", origin), ("CONTENT_TYPE", content_type)):
        if value is not None:
            environ[name] = value
    answer = {}
    body = b"".join(guard(environ, lambda status, headers: answer.update(status=status)))
    return int(answer["status"].split()[0]), json.loads(body)


@pytest.fixture
def guarded():
    app = _App()
    return app, BrowserGuard(app, "127.0.0.1", allowed_hosts=["mt.example.org"], port=8501)


@pytest.mark.parametrize("host", ["127.0.0.1:8501", "localhost:8501", "[::1]:8501", "LOCALHOST", "mt.example.org"])
def test_the_servers_own_names_pass(guarded, host):
    app, guard = guarded
    assert _request(guard, "GET", host=host)[0] == 200 and _request(guard, host=host)[0] == 200
    assert app.calls == 2


def test_a_rebound_host_is_refused_before_anything_runs(guarded):
    app, guard = guarded
    status, body = _request(guard, "GET", host="evil.example:8501")
    assert status == 403 and app.calls == 0
    assert body["error"].startswith("Host 'evil.example:8501' is not a name of this server: it answers to ")
    assert "mt.example.org" in body["error"] and "--allowed_hosts" in body["error"]


@pytest.mark.parametrize("origin", ["http://evil.example", "http://evil.example:8501", "http://127.0.0.1:3000",
                                    "null", "file://"])
def test_a_post_from_another_origin_is_refused(guarded, origin):
    app, guard = guarded
    status, body = _request(guard, origin=origin)
    assert status == 403 and app.calls == 0
    assert body["error"] == (f"Origin {origin!r} is another site's: requests that run the model come from this "
                             "server's pages")
    assert _request(guard, "GET", origin=origin)[0] == 200  # reading the page itself is no harm


def test_the_servers_own_pages_and_programs_without_origin_pass(guarded):
    app, guard = guarded
    assert _request(guard, origin="http://127.0.0.1:8501")[0] == 200
    assert _request(guard, origin="http://localhost:8501", host="localhost:8501")[0] == 200
    assert _request(guard, host=None)[0] == 200  # no Host, no Origin: not a browser
    assert app.calls == 3


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_a_body_not_declared_json_is_refused(guarded, content_type):
    app, guard = guarded
    status, body = _request(guard, content_type=content_type)
    assert status == 415 and app.calls == 0
    assert body["error"] == f"the body must be JSON sent with Content-Type: application/json, not {content_type or 'none'!r}"
    assert _request(guard, content_type="application/json; charset=utf-8")[0] == 200


def test_every_address_binding_adds_no_name():
    guard = BrowserGuard(_App(), "0.0.0.0")
    assert guard.allowed_hosts == {"localhost", "127.0.0.1", "::1"}
    assert _request(guard, host="192.168.1.20:8501")[0] == 403


def test_a_served_port_refuses_a_foreign_host_and_origin(tmp_path_factory):
    from helpers.serving_test_utils import exported_model
    from serving.local_server import LocalServer
    from serving.model_manager import ModelManager
    from serving.servable import Servable

    servable = Servable(exported_model(tmp_path_factory)[1], "rnnsearch")
    server = LocalServer(ModelManager.serving(servable), rest_api_port=0).start()
    url = f"http://127.0.0.1:{server.rest_api_port}/v1/models/rnnsearch:predict"
    body = json.dumps({"signature_name": "translate", "instances": ["a cat"]}).encode()
    try:
        for headers, status in (({"Host": "evil.example"}, 403), ({"Origin": "http://evil.example"}, 403),
                                ({"Content-Type": "text/plain"}, 415), ({"Content-Type": "application/json"}, 200)):
            request = urllib.request.Request(url, data=body, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    assert (response.status, headers) == (status, headers)
                    assert "predictions" in json.loads(response.read())
            except urllib.error.HTTPError as error:
                assert (error.code, headers) == (status, headers)
    finally:
        server.stop()
        servable.close()


def test_serving_every_address_is_named_as_an_exposure():
    import subprocess
    import sys

    from conftest import REPO_ROOT

    result = subprocess.run(
        [sys.executable, "-m", "rnnsearch_tf.cli.main", "serve", "--host=0.0.0.0", "--port=0",
         "--model_base_path=/no/such/export"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    lines = result.stderr.strip().splitlines()
    assert any(line.startswith("warning: --host=0.0.0.0 serves every network this machine is on") for line in lines)
    assert result.returncode == 1 and "no version folder" in lines[-1]
