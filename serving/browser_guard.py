"""What keeps the web pages a user visits from using the REST port of `rnnsearch serve`: every request's Host,
and a state-changing request's Origin and content type, are checked before anything runs."""

import urllib.parse

from serving.http_messages import STATUS_TEXT, error_body

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_ANY_ADDRESS = ("0.0.0.0", "::", "")
_SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
JSON = "application/json"


class BrowserGuard:
    """WSGI middleware that refuses, in one line, what a foreign web page could make a browser send.

    - A `Host` that is not a name of this server (the bound address, `localhost`, the loopback addresses
      or one of `allowed_hosts`): 403. A page of another site that rebinds its DNS name to 127.0.0.1 sends
      its own name as Host, so it cannot read the API from the user's browser.
    - A request that may change something (not GET, HEAD or OPTIONS) with an `Origin` other than this
      server's own (scheme, an allowed name, and `port`): 403. Browsers send Origin with such requests, so
      another page cannot make the server translate (spend the user's CPU) even without reading the answer.
    - Such a request whose body is not declared `application/json`: 415. A cross-site form or a "simple"
      `fetch` can only send text/plain or form bodies; this server takes JSON only.

    A request without Host or Origin (a program, not a browser) passes those checks. Every refusal is a
    TF Serving error body naming the header and its value.

    Args:
        app: the WSGI application guarded.
        host: the address the server binds; "0.0.0.0" (every address) adds no name.
        allowed_hosts: other names or addresses clients may call it by (a machine's DNS name).
        port: the port it serves on (set once bound, for the Origin check); None: any port.
    """

    def __init__(self, app, host="127.0.0.1", allowed_hosts=(), port=None):
        self.app = app
        names = {*LOOPBACK_NAMES, host, *allowed_hosts} - set(_ANY_ADDRESS)
        self.allowed_hosts = frozenset(name.lower().strip("[]") for name in names)
        self.port = port

    def __call__(self, environ, start_response):
        refusal = self.refusal(environ)
        if refusal is None:
            return self.app(environ, start_response)
        status, message = refusal
        payload = error_body(message)
        start_response(STATUS_TEXT[status], [("Content-Type", JSON), ("Content-Length", str(len(payload)))])
        return [payload]

    def refusal(self, environ):
        """(status, message) refusing the request, or None to serve it."""
        host = environ.get("HTTP_HOST")
        if host is not None and _hostname(host) not in self.allowed_hosts:
            return 403, (f"Host {host!r} is not a name of this server: it answers to "
                         f"{', '.join(sorted(self.allowed_hosts))} (rnnsearch serve --allowed_hosts adds names)")
        if environ.get("REQUEST_METHOD", "GET") in _SAFE_METHODS:
            return None
        origin = environ.get("HTTP_ORIGIN")
        if origin is not None and not self._is_own_origin(origin):
            return 403, f"Origin {origin!r} is another site's: requests that run the model come from this server's pages"
        content_type = environ.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
        if content_type != JSON:
            return 415, f"the body must be JSON sent with Content-Type: {JSON}, not {content_type or 'none'!r}"
        return None

    def _is_own_origin(self, origin):
        parts = urllib.parse.urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False  # "null" (a sandboxed page, a file) or something else
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return parts.hostname.lower() in self.allowed_hosts and (self.port is None or port == self.port)


def _hostname(host):
    """The name of a Host header without its port: "127.0.0.1:8501" -> "127.0.0.1", "[::1]:8501" -> "::1"."""
    return (urllib.parse.urlsplit(f"//{host}").hostname or "").lower()
