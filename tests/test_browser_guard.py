"""serving/browser_guard.py: each defence against a foreign web page (DNS rebinding Host, cross-site Origin, a
browser's body not declared JSON) refuses in one line and runs nothing; a malformed Host or Origin is 400, never
an exception; the server's own pages, localhost and programs without those headers pass (TF Serving's documented
`curl -d` included); and a real `rnnsearch serve` port answers so."""

import io
import json
import shutil
import subprocess
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


def _request(guard, method="POST", host="127.0.0.1:8501", origin=None, content_type="application/json",
             fetch_site=None):
    """(status, JSON answer) of one request through `guard` of a server serving http on port 8501."""
    environ = {"REQUEST_METHOD": method, "PATH_INFO": "/v1/models/m:predict", "wsgi.input": io.BytesIO(b"{}"),
               "CONTENT_LENGTH": "2", "wsgi.url_scheme": "http"}
    for name, value in (("HTTP_HOST", host), ("HTTP_ORIGIN", origin), ("CONTENT_TYPE", content_type),
                        ("HTTP_SEC_FETCH_SITE", fetch_site)):
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
@pytest.mark.parametrize("origin, fetch_site", [("http://127.0.0.1:8501", "same-origin"),
                                                ("http://127.0.0.1:8501", None), (None, "cross-site"),
                                                (None, "same-origin")])
def test_a_browsers_body_not_declared_json_is_refused(guarded, content_type, origin, fetch_site):
    app, guard = guarded
    status, body = _request(guard, origin=origin, fetch_site=fetch_site, content_type=content_type)
    assert status == 415 and app.calls == 0
    assert body["error"] == f"the body must be JSON sent with Content-Type: application/json, not {content_type or 'none'!r}"
    assert _request(guard, origin=origin, fetch_site=fetch_site,
                    content_type="application/json; charset=utf-8")[0] == 200


def test_a_cross_site_text_post_is_refused(guarded):
    app, guard = guarded
    status, body = _request(guard, origin="http://evil.example", fetch_site="cross-site", content_type="text/plain")
    assert status == 403 and app.calls == 0
    assert body["error"].startswith("Origin 'http://evil.example' is another site's")


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "text/plain", None])
def test_a_program_without_origin_or_fetch_metadata_is_served_whatever_its_content_type(guarded, content_type):
    app, guard = guarded
    assert _request(guard, host="localhost:8501", content_type=content_type)[0] == 200  # curl -d, as TF Serving
    assert app.calls == 1


@pytest.mark.parametrize("host", ["[::1", "[::1:8501", "localhost:99999", "localhost:abc", "::1",
                                  "evil.com@localhost", "localhost#x", "localhost/x", "localhost?x", "local host",
                                  "localhost:8501:8501"])
def test_a_malformed_host_is_400_in_one_line(guarded, host):
    app, guard = guarded
    for method in ("GET", "POST"):
        status, body = _request(guard, method, host=host)
        assert status == 400 and app.calls == 0
        assert body["error"] == (f"Host {host!r} is malformed: a Host is a name or address and an optional port "
                                 "(localhost:8501, [::1]:8501)")


@pytest.mark.parametrize("origin", ["http://localhost:99999", "http://localhost:abc", "http://[::1:8501",
                                    "http://evil.com@localhost:8501", "http://localhost:8501#x",
                                    "http://localhost:8501/", "localhost:8501", "http://", "http:localhost:8501"])
def test_a_malformed_origin_is_400_in_one_line(guarded, origin):
    app, guard = guarded
    status, body = _request(guard, origin=origin)
    assert status == 400 and app.calls == 0
    assert body["error"] == (f"Origin {origin!r} is malformed: an Origin is scheme://name[:port] "
                             "(http://localhost:8501) or null")
    assert _request(guard, "GET", origin=origin)[0] == 200  # reading the page itself is no harm


def test_a_host_naming_another_port_is_refused(guarded):
    app, guard = guarded
    for host in ("localhost:9999", "127.0.0.1:80", "[::1]:8502"):
        status, body = _request(guard, "GET", host=host)
        assert status == 403 and app.calls == 0
        assert body["error"] == f"Host {host!r} names port {host.rsplit(':', 1)[1]}; this server serves port 8501"
    assert _request(guard, "GET", host="localhost:08501")[0] == 200 and app.calls == 1


@pytest.mark.parametrize("origin", ["https://localhost:8501", "https://127.0.0.1:8501", "https://localhost",
                                    "http://localhost", "http://localhost:80", "ws://localhost:8501"])
def test_an_origin_of_another_scheme_or_port_is_refused(guarded, origin):
    app, guard = guarded
    status, body = _request(guard, origin=origin, fetch_site="same-site")
    assert status == 403 and app.calls == 0
    assert body["error"] == (f"Origin {origin!r} is another site's: requests that run the model come from this "
                             "server's pages")


def test_the_served_scheme_is_the_one_the_wsgi_server_names():
    app = _App()
    guard = BrowserGuard(app, "127.0.0.1", port=8443)
    environ = {"REQUEST_METHOD": "POST", "HTTP_HOST": "localhost:8443", "CONTENT_TYPE": "application/json",
               "wsgi.url_scheme": "https"}
    answers = []
    for origin in ("https://localhost:8443", "http://localhost:8443"):
        guard({**environ, "HTTP_ORIGIN": origin}, lambda status, headers: answers.append(status))
    assert answers == ["200 OK", "403 Forbidden"] and app.calls == 1


def test_every_address_binding_adds_no_name():
    guard = BrowserGuard(_App(), "0.0.0.0")
    assert guard.allowed_hosts == {"localhost", "127.0.0.1", "::1"}
    assert _request(guard, host="192.168.1.20:8501")[0] == 403


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A real `LocalServer` of the tiny export with REST on a free port of 127.0.0.1."""
    from helpers.serving_test_utils import exported_model
    from serving.local_server import LocalServer
    from serving.model_manager import ModelManager
    from serving.servable import Servable

    servable = Servable(exported_model(tmp_path_factory)[1], "rnnsearch")
    server = LocalServer(ModelManager.serving(servable), rest_api_port=0).start()
    yield server
    server.stop()
    servable.close()


def test_a_served_port_refuses_a_foreign_host_and_origin(served):
    own = f"127.0.0.1:{served.rest_api_port}"
    url = f"http://{own}/v1/models/rnnsearch:predict"
    body = json.dumps({"signature_name": "translate", "instances": ["a cat"]}).encode()
    browser_text = {"Content-Type": "text/plain", "Origin": f"http://{own}", "Sec-Fetch-Site": "same-origin"}
    for headers, status in (({"Host": "evil.example"}, 403), ({"Origin": "http://evil.example"}, 403),
                            ({"Host": "[::1"}, 400), ({"Origin": "http://localhost:99999"}, 400),
                            ({"Host": "localhost:1"}, 403), ({"Origin": f"https://{own}"}, 403),
                            (browser_text, 415), ({"Content-Type": "application/json"}, 200)):
        request = urllib.request.Request(url, data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                assert (response.status, headers) == (status, headers)
                assert "predictions" in json.loads(response.read())
        except urllib.error.HTTPError as error:
            assert (error.code, headers) == (status, headers)
            assert list(json.loads(error.read())) == ["error"]


@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl binary")
def test_tf_servings_documented_curl_request_is_answered(served):
    """TF Serving's REST documentation: `curl -d '{"instances": [...]}' -X POST http://localhost:8501/v1/models/
    NAME:predict` (curl declares the body application/x-www-form-urlencoded)."""
    result = subprocess.run(
        ["curl", "-s", "-w", "\n%{http_code}", "-d", '{"instances": ["the cat sees a dog ."]}', "-X", "POST",
         f"http://localhost:{served.rest_api_port}/v1/models/rnnsearch:predict"],
        capture_output=True, text=True, timeout=120, check=True)
    answer, status = result.stdout.rsplit("\n", 1)
    assert status == "200", answer
    predictions = json.loads(answer)["predictions"]
    assert len(predictions) == 1 and predictions[0]["translation"] and predictions[0]["tokens"][-1] == "</s>"


def test_serving_every_address_is_named_as_an_exposure():
    import sys

    from conftest import REPO_ROOT
    from helpers import preimported

    result = preimported.run(
        [sys.executable, "-m", "rnnsearch_tf.cli.main", "serve", "--host=0.0.0.0", "--port=0",
         "--model_base_path=/no/such/export"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    lines = result.stderr.strip().splitlines()
    assert any(line.startswith("warning: --host=0.0.0.0 serves every network this machine is on") for line in lines)
    assert result.returncode == 1 and "no version folder" in lines[-1]
