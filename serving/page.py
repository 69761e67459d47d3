"""The translation page on the REST port of `serving/local_server.py`: `GET /` in a browser.

The page is three static files in `serving/static/` (plain HTML, CSS and JavaScript: no build step,
nothing fetched from anywhere but this server) that call the server's own TF Serving REST API
(`translate`, `settings`, and `translate_prefix` and `translate_constrained`, the glossary's, when the export
has them). `Page` answers:
- `GET /` (or `/index.html`): index.html, with the served model names written into its
  `<meta name="model-names">` (HTML-escaped JSON, the default model first), so the page knows which
  `/v1/models/<name>` it may call; with several it shows a choice of model;
- `GET /static/page.js`, `GET /static/page.css`;
- `POST /page/unknown_words` with `{"tokens": [[token, ...], ...], "model": name}` (the `source_tokens` of
  `translate`; `model` the model that translated, default the first),
  answered `{"unknown": [[bool, ...], ...]}`: whether each token is outside the export's source
  vocabulary, i.e. read as `<unk>` (never with a subword codec, whose pieces spell any text); the page
  marks them;
- `POST /page/split_sentences` with `{"text": [line, ...], "model": name}`, answered `{"sentences": [[sentence, ...], ...]}`:
  each line split into sentences by Moses' rules for the export's source language (`SentenceSplitter`);
  with "Split lines into sentences" ticked the page translates the sentences in one request and shows
  each line's translations joined, each sentence with its own heatmap;
- `POST /page/languages` with `{"model": name}`, answered `{"source": {"code": "de", "name": "German"}, "target":
  {...}}`: the export's languages (its settings' codes) by name (`data_pipeline.languages.name`), shown above the
  text box ("German → English").
Every answer forbids scripts, styles and requests from anywhere else (Content-Security-Policy).
"""

import contextlib
import html
import json
import os

import tensorflow as tf

from data_pipeline import languages
from data_pipeline.constants import SOURCE_VOCABULARY_FILE
from data_pipeline.sentence_splitter import SentenceSplitter
from data_pipeline.vocabulary import Vocabulary
from serving.http_messages import STATUS_TEXT, error_body, json_body

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/static/page.js": ("page.js", "text/javascript; charset=utf-8"),
    "/static/page.css": ("page.css", "text/css; charset=utf-8"),
}
_UNKNOWN_WORDS = "/page/unknown_words"
_SPLIT_SENTENCES = "/page/split_sentences"
_LANGUAGES = "/page/languages"
_ENDPOINTS = (_UNKNOWN_WORDS, _SPLIT_SENTENCES, _LANGUAGES)
_SECURITY_HEADERS = [
    ("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                                "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-cache"),
]



class Page:
    """WSGI application of the translation page for the models of a `ModelManager` (see the module docstring).

    Args:
        models: the `serving.model_manager.ModelManager` whose models the page translates with.

    Example:
    >>> page = Page(ModelManager.serving(servable))
    >>> page.serves("/")
    True
    """

    def __init__(self, models):
        self.models = models
        self._source_vocabularies = {}  # version path: frozenset of tokens
        self._splitters = {}  # source language: SentenceSplitter

    @staticmethod
    def serves(path):
        """Whether `path` is one of the page's (the rest is TF Serving's API)."""
        return path in _FILES or path in _ENDPOINTS

    def __call__(self, environ, start_response):
        path, method = environ.get("PATH_INFO", ""), environ["REQUEST_METHOD"]
        if path in _ENDPOINTS:
            status, content_type, payload = self._page_request(path, method, environ)
        elif method not in ("GET", "HEAD"):
            status, content_type, payload = 405, "application/json", error_body(f"{path} takes GET, not {method}")
        else:
            status, (file_name, content_type) = 200, _FILES[path]
            with open(os.path.join(STATIC_DIR, file_name), "rb") as stream:
                payload = stream.read()
            if file_name == "index.html":
                names = html.escape(json.dumps(list(self.models.models)), quote=True)
                payload = payload.replace(b"{{model_names}}", names.encode("utf-8"))
        start_response(STATUS_TEXT[status], [("Content-Type", content_type),
                                              ("Content-Length", str(len(payload))), *_SECURITY_HEADERS])
        return [b""] if method == "HEAD" else [payload]

    def _page_request(self, path, method, environ):
        """(status, content type, payload) of a POST to one of the page's own endpoints."""
        if method != "POST":
            return 405, "application/json", error_body(f"{path} takes POST, not {method}")
        with contextlib.ExitStack() as held:
            try:
                request = json_body(environ)
                if not isinstance(request, dict):
                    raise ValueError("the body must be a JSON object")
                model = self.models.model(request.get("model") or self.models.default_model_name)
                servable = held.enter_context(model.servable())  # its newest version, held to the answer
            except (ValueError, TypeError) as error:
                return 400, "application/json", error_body(f"{path}: {error}")
            except LookupError as error:  # no such model, or none of its versions available: 404 as :predict
                return 404, "application/json", error_body(str(error))
            if path == _UNKNOWN_WORDS:
                return self._unknown_words(servable, request)
            if path == _LANGUAGES:
                return self._languages(servable)
            return self._split_sentences(servable, request)

    def _unknown_words(self, servable, request):
        sentences = request.get("tokens")
        if not isinstance(sentences, list) or not all(
            isinstance(tokens, list) and all(isinstance(token, str) for token in tokens) for tokens in sentences
        ):
            return 400, "application/json", error_body(
                'the body must be {"tokens": [[token, ...], ...]}: "tokens" must be a list of lists of strings')
        try:
            vocabulary = self.source_vocabulary(servable)
        except OSError:  # not an export of serving/export.py
            return 404, "application/json", error_body("this export has no source vocabulary the page can read")
        if not servable.settings.codec_is_moses("source"):
            unknown = [[False] * len(tokens) for tokens in sentences]  # pieces spell any text: nothing is <unk>
        else:
            unknown = [[token not in vocabulary for token in tokens] for tokens in sentences]
        return 200, "application/json", json.dumps({"unknown": unknown}).encode("utf-8")

    def _split_sentences(self, servable, request):
        lines = request.get("text")
        if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
            return 400, "application/json", error_body(
                'the body must be {"text": [line, ...]}: "text" must be a list of strings')
        language = servable.settings.get("source_language")
        if language is None:
            return 404, "application/json", error_body("this export has no settings naming its source language")
        if language not in self._splitters:
            self._splitters[language] = SentenceSplitter(language)
        sentences = [self._splitters[language].split(line) for line in lines]
        return 200, "application/json", json.dumps({"sentences": sentences}).encode("utf-8")

    @staticmethod
    def _languages(servable):
        codes = {side: servable.settings.get(f"{side}_language") for side in ("source", "target")}
        if None in codes.values():
            return 404, "application/json", error_body("this export has no settings naming its languages")
        named = {side: {"code": code, "name": languages.name_or_code(code)} for side, code in codes.items()}
        return 200, "application/json", json.dumps(named).encode("utf-8")

    def source_vocabulary(self, servable):
        """The set of tokens of a version's source vocabulary, read once from its SavedModel assets
        (`rnnsearch export` copies the model directory's `source_vocab.tsv` there); OSError when the export
        has none.
        """
        if servable.path not in self._source_vocabularies:
            path = servable.export_version.asset(SOURCE_VOCABULARY_FILE)
            if not tf.io.gfile.exists(path):
                raise FileNotFoundError(f"{path} is missing")
            self._source_vocabularies[servable.path] = frozenset(token for token, _ in Vocabulary.read_entries(path))
        return self._source_vocabularies[servable.path]
