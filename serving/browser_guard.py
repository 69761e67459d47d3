"""What keeps the web pages a user visits from using the REST port of `rnnsearch serve`: every request's Host,
and a state-changing request's Origin and (from a browser) content type, are checked before anything runs."""

import re

from serving.http_messages import STATUS_TEXT, error_body

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
# The addresses that bind every address of the machine, each with the loopback address that reaches it from here.
ANY_ADDRESS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}
_SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
_DEFAULT_PORTS = {"http": 80, "https": 443}
# A Host, or an Origin's part after "://": a name (RFC 3986 reg-name or IPv4) or a bracketed IPv6 address, and
# an optional port of at most 5 digits; no user, path, query or fragment.
_AUTHORITY = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9\-._~!$&'()*+,;=%]+)(?::([0-9]{0,5}))?", re.IGNORECASE | re.ASCII)
_ORIGIN = re.compile(r"([a-z][a-z0-9+.\-]*)://(.*)", re.IGNORECASE | re.ASCII | re.DOTALL)
JSON = "application/json"


class BrowserGuard:
    """WSGI middleware that answers, in one line and never with an exception, what a foreign web page could make
    a browser send.

    - A `Host` or `Origin` that is not well formed (`[::1`, `localhost:99999`, `evil.com@localhost`): 400.
    - A `Host` that is not a name of this server (the bound address, `localhost`, the loopback addresses
      or one of `allowed_hosts`), or names another port than `port`: 403. A page of another site that rebinds
      its DNS name to 127.0.0.1 sends its own name as Host, so it cannot read the API from the user's browser.
    - A request that may change something (not GET, HEAD or OPTIONS) with an `Origin` other than this
      server's own (the scheme the WSGI server serves, `wsgi.url_scheme`; an allowed name; `port`): 403.
      Browsers send Origin with such requests, so another page cannot make the server translate (spend the
      user's CPU) even without reading the answer.
    - Such a request from a browser (it carries `Origin` or `Sec-Fetch-Site`) whose body is not declared
      `application/json`: 415. A cross-site form or a "simple" `fetch` can only send text/plain or form
      bodies without a preflight; the server's own page sends JSON.

    A request without Host, Origin and Sec-Fetch-Site (a program, not a browser) passes those checks and is
    served as TF Serving serves it, whatever its content type: TF Serving's documented `curl -d '{...}'`
    declares form data. Every refusal is a TF Serving error body naming the header and its value.

    Args:
        app: the WSGI application guarded.
        host: the address the server binds; "0.0.0.0" (every address) adds no name.
        allowed_hosts: other names or addresses clients may call it by (a machine's DNS name).
        port: the port it serves on (set once bound, for the Host and Origin checks); None: any port.
    """

    def __init__(self, app, host="127.0.0.1", allowed_hosts=(), port=None):
        self.app = app
        names = {*LOOPBACK_NAMES, host, *allowed_hosts} - set(ANY_ADDRESS)
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
        refusal = None if host is None else self._host_refusal(host)
        if refusal is not None or environ.get("REQUEST_METHOD", "GET") in _SAFE_METHODS:
            return refusal
        origin = environ.get("HTTP_ORIGIN")
        if origin is None and "HTTP_SEC_FETCH_SITE" not in environ:
            return None  # not a browser: served as TF Serving serves it, whatever it declares (curl -d)
        refusal = None if origin is None else self._origin_refusal(origin, environ.get("wsgi.url_scheme", "http"))
        return refusal or _content_type_refusal(environ)

    def _host_refusal(self, host):
        """(status, message) refusing a Host header that is malformed, names another server or another port;
        None where it names this server."""
        authority = _name_and_port(host)
        if authority is None:
            return 400, (f"Host {host!r} is malformed: a Host is a name or address and an optional port "
                         "(localhost:8501, [::1]:8501)")
        name, port = authority
        if name not in self.allowed_hosts:
            return 403, (f"Host {host!r} is not a name of this server: it answers to "
                         f"{', '.join(sorted(self.allowed_hosts))} (rnnsearch serve --allowed_hosts adds names)")
        if port is not None and self._serves_another_port(port):
            return 403, f"Host {host!r} names port {port}; this server serves port {self.port}"
        return None

    def _origin_refusal(self, origin, served_scheme):
        """(status, message) refusing an Origin header that is malformed or another site's (another scheme
        than `served_scheme`, name or port); None where it is this server's own."""
        malformed = 400, (f"Origin {origin!r} is malformed: an Origin is scheme://name[:port] "
                          "(http://localhost:8501) or null")
        foreign = 403, (f"Origin {origin!r} is another site's: requests that run the model come from this "
                        "server's pages")
        match = _ORIGIN.fullmatch(origin)
        if match is None:
            return foreign if origin == "null" else malformed  # "null": a sandboxed page, a file
        scheme = match.group(1).lower()
        if scheme not in _DEFAULT_PORTS:
            return foreign  # file://, an extension's page
        authority = _name_and_port(match.group(2))
        if authority is None:
            return malformed
        name, port = authority
        port = _DEFAULT_PORTS[scheme] if port is None else port
        if scheme != served_scheme or name not in self.allowed_hosts or self._serves_another_port(port):
            return foreign
        return None

    def _serves_another_port(self, port):
        """Whether this server is known to serve a port other than `port` (unknown before it is bound)."""
        return self.port is not None and port != self.port


def _content_type_refusal(environ):
    """415 refusing a browser's body not declared JSON (what a cross-site form or a "simple" `fetch` sends
    without a preflight); None for JSON."""
    content_type = environ.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
    if content_type != JSON:
        return 415, f"the body must be JSON sent with Content-Type: {JSON}, not {content_type or 'none'!r}"
    return None


def _name_and_port(authority):
    """(lower-case name, port or None) of "name[:port]" (a Host, an Origin after "://"): "[::1]:8501" ->
    ("::1", 8501), "localhost" -> ("localhost", None); None where malformed (a user, a path, a fragment, a
    port over 65535 or not a number, an unclosed bracket)."""
    match = _AUTHORITY.fullmatch(authority)
    if match is None or int(match.group(2) or 0) > 65535:
        return None
    return match.group(1).lower().strip("[]"), int(match.group(2)) if match.group(2) else None
