"""The translation page of the local server (`serving/page.py`, `serving/static/`), in a real browser:
headless Chromium driven by Selenium against `LocalServer` serving the tiny export, and German -> English and
Chinese -> English exports (`helpers.other_languages`) for the languages' names and scripts."""

import functools
import http.server
import io
import json
import os
import re
import shutil
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pytest

from serving.local_server import LocalServer
from serving.metrics import ServerMetrics
from serving.model_manager import ModelManager
from serving.page import STATIC_DIR
from serving.rest_app import RestApp
from serving.servable import Servable
from serving.served_model import ServedModel
from helpers.serving_test_utils import SEARCH_OPTIONS, exported_model

MODEL_NAME = "rnnsearch"
MAX_REQUEST_BYTES = 64 << 10  # the server's limit in these tests
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1200,1000")
SENTENCES = ["the cat sees the big dog .", "the zyzzyva sees a cat, the dog sees a house."]  # lower case: the vocabulary's
HOSTILE = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>"]
WAIT = 30  # seconds any page state may take to appear
JSON_HEADERS = {"Content-Type": "application/json"}  # what the server takes (BrowserGuard)


@pytest.fixture(scope="module")
def servable(tmp_path_factory):
    _, export_dir, _ = exported_model(tmp_path_factory)
    servable = Servable(str(export_dir), MODEL_NAME)
    yield servable
    servable.close()


@pytest.fixture(scope="module")
def server(servable):
    running = LocalServer(ModelManager.serving(servable), rest_api_port=0, max_request_bytes=MAX_REQUEST_BYTES).start()
    running.url = f"http://127.0.0.1:{running.rest_api_port}/"
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    missing = [package for package, path in (("chromium", CHROMIUM), ("chromium-driver", CHROMEDRIVER))
               if not os.access(path, os.X_OK)]
    if missing:
        pytest.skip(f"no browser: the Debian package(s) {' and '.join(missing)} are not installed "
                    f"(apt-get install -y chromium chromium-driver; .ci/run does it when it runs as root)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed: pip install -e '.[test]'")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS + (f"--user-data-dir={tmp_path_factory.mktemp('chromium_profile')}",):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    yield driver
    driver.quit()


def _wait(driver, condition, message):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT).until(lambda _: condition(), message)


def _open_and_translate(driver, server, lines, typed=True, reload=True):
    """Opens the page (unless `reload` is false: as it is), enters `lines` (typed, or set at once when long)
    and translates them."""
    from selenium.webdriver.common.by import By

    if reload:
        driver.get(server.url)
    _wait(driver, lambda: "version" in driver.find_element(By.ID, "model").text, "the model's version never showed")
    if typed:
        driver.find_element(By.ID, "input").send_keys("\n".join(lines))
    else:
        driver.execute_script("document.getElementById('input').value = arguments[0]", "\n".join(lines))
    driver.find_element(By.ID, "translate").click()
    _wait(driver, lambda: driver.find_element(By.ID, "status").text.startswith(("Translated", "The server", "Glossary")),
          "no translation and no error")
    return driver.find_elements(By.CSS_SELECTOR, "section.sentence")


def _cells(section):
    from selenium.webdriver.common.by import By

    return section.find_elements(By.CSS_SELECTOR, "table.heatmap tbody tr")


def _target_words(section):
    from selenium.webdriver.common.by import By

    return [chip.text for chip in section.find_elements(By.CSS_SELECTOR, ".target-tokens .token")]


def test_two_sentences_with_heatmap_nbest_unknown_words_and_settings(browser, server, servable, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    sections = _open_and_translate(browser, server, SENTENCES)
    expected = servable.predict("translate", {"text": np.array([s.encode() for s in SENTENCES], object)})
    assert len(sections) == 2
    for index, section in enumerate(sections):
        translation = section.find_element(By.CSS_SELECTOR, ".translation-text").text
        assert translation == expected["translation"][index].decode("utf-8")
        score = section.find_element(By.CSS_SELECTOR, ".translation .score").text
        assert score == f"score {expected['score'][index]:.3f}"
        source = [chip.text for chip in section.find_elements(By.CSS_SELECTOR, ".source-tokens .token")]
        target = _target_words(section)
        assert source == [t.decode() for t in expected["source_tokens"][index] if t] and source[-1] == "</s>"
        assert target == [t.decode() for t in expected["tokens"][index] if t] and target[-1] == "</s>"
        rows = _cells(section)
        assert len(rows) == len(target)  # target words + 1 (</s>)
        for row in rows:
            alphas = [float(cell.get_attribute("data-alpha")) for cell in row.find_elements(By.TAG_NAME, "td")]
            assert len(alphas) == len(source)  # source words + 1 (</s>)
            assert sum(alphas) == pytest.approx(1.0, abs=1e-4)  # RNNsearch: a softmax over the source
        first_cell = rows[0].find_element(By.TAG_NAME, "td")
        assert re.fullmatch(rf"{re.escape(target[0])} ← {re.escape(source[0])}: α = \d\.\d{{3}}",
                            first_cell.get_attribute("title"))
        nbest = section.find_elements(By.CSS_SELECTOR, ".nbest li")
        assert len(nbest) == SEARCH_OPTIONS["num_hypotheses"]
        assert nbest[0].find_element(By.CSS_SELECTOR, ".nbest-text").text == translation
    unknown = [chip.text for chip in sections[1].find_elements(By.CSS_SELECTOR, ".source-tokens .token.unknown")]
    assert unknown == ["zyzzyva"]
    assert "outside the vocabulary" in sections[1].find_element(By.CSS_SELECTOR, ".badge.unknown").text
    settings = {setting.get_attribute("title"): setting.find_elements(By.TAG_NAME, "span")[1].text
                for setting in browser.find_elements(By.CSS_SELECTOR, "#settings .setting")}
    assert {name: settings.get(name) for name in ("beam_size", "num_hypotheses", "forbid_unk")} == {
        "beam_size": "3", "num_hypotheses": "2", "forbid_unk": "true"}

    # Hovering a target word highlights the source words it attends to (the largest α at least).
    first = sections[0]
    alignment = expected["alignment"][0]
    ActionChains(browser).move_to_element(first.find_elements(By.CSS_SELECTOR, ".target-tokens .token")[0]).perform()
    aligned = [int(chip.get_attribute("data-index"))
               for chip in first.find_elements(By.CSS_SELECTOR, ".source-tokens .token.aligned")]
    assert int(np.argmax(alignment[0])) in aligned
    assert all(alignment[0][j] >= 0.2 or j == np.argmax(alignment[0]) for j in aligned)
    browser.save_screenshot(str(tmp_path / "page.png"))
    assert (tmp_path / "page.png").stat().st_size > 10_000


def _confidence_marks(section):
    """(each target word's probability shown on hover, whether it is underlined as uncertain)."""
    from selenium.webdriver.common.by import By

    chips = section.find_elements(By.CSS_SELECTOR, ".target-tokens .token")
    shown = [float(re.search(r"p = (\d\.\d{3})", chip.get_attribute("title")).group(1)) for chip in chips]
    return shown, ["uncertain" in chip.get_attribute("class").split() for chip in chips]


def test_words_below_the_confidence_threshold_are_underlined_with_their_probability_on_hover(browser, server,
                                                                                             servable):
    from selenium.webdriver.common.by import By

    sections = _open_and_translate(browser, server, SENTENCES)
    expected = servable.predict("translate", {"text": np.array([s.encode() for s in SENTENCES], object)})
    for index, section in enumerate(sections):
        shown, uncertain = _confidence_marks(section)
        probabilities = expected["token_probabilities"][index][: len(shown)]
        assert shown == pytest.approx(probabilities.tolist(), abs=6e-4)
        assert uncertain == [probability < 0.5 for probability in probabilities]  # LOW_CONFIDENCE in page.js
        for chip, underlined in zip(section.find_elements(By.CSS_SELECTOR, ".target-tokens .token"), uncertain):
            assert ("dotted" in chip.value_of_css_property("text-decoration")) == underlined
    assert any(uncertain for section in sections for uncertain in _confidence_marks(section)[1])


def test_choosing_an_alternative_forces_the_prefix(browser, server, tmp_path):
    from selenium.webdriver.common.by import By

    section = _open_and_translate(browser, server, SENTENCES[:1])[0]
    assert browser.find_element(By.ID, "prefix-hint").is_displayed()
    before = _target_words(section)
    position = min(1, len(before) - 1)
    section.find_elements(By.CSS_SELECTOR, ".target-tokens .token")[position].click()
    options = _wait(browser, lambda: browser.find_elements(By.CSS_SELECTOR, ".alternatives .alternative"),
                    "no alternatives appeared")
    others = [option for option in options
              if option.find_element(By.CSS_SELECTOR, ".alternative-word").text != before[position]]
    chosen = (others or options)[0]
    word = chosen.find_element(By.CSS_SELECTOR, ".alternative-word").text
    chosen.click()
    _wait(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "section.sentence .badge.forced"),
          "the sentence was not translated again")
    section = browser.find_element(By.CSS_SELECTOR, "section.sentence")
    after = _target_words(section)
    assert after[: position + 1] == before[:position] + [word], (before, word, after)
    rows = _cells(section)
    assert len(rows) == len(after)
    browser.save_screenshot(str(tmp_path / "page_prefix.png"))


class _WithoutSignatures:
    """The servable as an older export shows it: its metadata lists none of `names`."""

    def __init__(self, servable, names):
        self._servable = servable
        self.signature_defs = {name: signature for name, signature in servable.signature_defs.items()
                               if name not in names}

    def __getattr__(self, name):
        return getattr(self._servable, name)


def test_without_translate_prefix_the_words_are_not_clickable(browser, servable):
    from selenium.webdriver.common.by import By

    older = LocalServer(ModelManager.serving(_WithoutSignatures(servable, ["translate_prefix"])), rest_api_port=0).start()
    older.url = f"http://127.0.0.1:{older.rest_api_port}/"
    try:
        section = _open_and_translate(browser, older, SENTENCES[:1])[0]
        assert not browser.find_element(By.ID, "prefix-hint").is_displayed()
        assert not section.find_elements(By.CSS_SELECTOR, ".choosable, button.token")
        section.find_elements(By.CSS_SELECTOR, ".target-tokens .token")[0].click()
        assert not browser.find_elements(By.CSS_SELECTOR, ".alternatives")
    finally:
        older.stop()


# "cat" is found, its target made only of words the target vocabulary lacks (skipped); "dog" is found; "do"
# is not a whole word of either sentence; "the house" is in neither.
GLOSSARY = ["cat = zorglub", "dog\tchien", "# a comment", "do = voit", "the house = maison"]
GLOSSARY_SENTENCES = [SENTENCES[0], "a small green house ?"]


def _constrained(servable, sentence, constraints):
    return servable.predict("translate_constrained", {"text": np.array([sentence.encode()], object),
                                                      "constraints": np.array([[c.encode() for c in constraints]],
                                                                              object)})


def _open_with_glossary(driver, server, glossary, lines):
    """Opens the page, writes `glossary` into its glossary box (typed, but set at once where a line holds a
    TAB, which a typed Tab key would not insert), enters `lines` and translates them."""
    from selenium.webdriver.common.by import By

    driver.get(server.url)
    _wait(driver, lambda: driver.find_element(By.ID, "glossary-box").is_displayed(), "no glossary box")
    if any("\t" in line for line in glossary):
        driver.execute_script("document.getElementById('glossary').value = arguments[0]", "\n".join(glossary))
    else:
        driver.find_element(By.ID, "glossary").send_keys("\n".join(glossary))
    return _open_and_translate(driver, server, lines, reload=False)


def test_a_glossary_term_is_put_in_the_translation_and_highlighted(browser, server, servable, tmp_path):
    from selenium.webdriver.common.by import By

    plain = servable.predict("translate", {"text": np.array([s.encode() for s in GLOSSARY_SENTENCES], object)})
    assert b"chien" not in list(plain["tokens"][0])  # the model would not say it on its own
    expected = _constrained(servable, GLOSSARY_SENTENCES[0], ["zorglub", "chien"])  # the order found
    assert expected["constraints_met"].tolist() == [[False, True]]
    assert expected["constraints_skipped"].tolist() == [[True, False]]
    sections = _open_with_glossary(browser, server, GLOSSARY, GLOSSARY_SENTENCES)
    assert browser.find_element(By.ID, "status").text.startswith("Translated 2 sentences")
    first, second = sections
    assert first.find_element(By.CSS_SELECTOR, ".translation-text").text == expected["translation"][0].decode()
    assert "chien" in _target_words(first)
    marked = [chip.text for chip in first.find_elements(By.CSS_SELECTOR, ".target-tokens .token.constraint")]
    rows = [head.text for head in first.find_elements(By.CSS_SELECTOR, "table.heatmap tbody th.constraint")]
    assert marked == rows == ["chien"] * _target_words(first).count("chien")
    chip = first.find_element(By.CSS_SELECTOR, ".target-tokens .token.constraint")
    assert "glossary: chien" in chip.get_attribute("title")
    assert chip.value_of_css_property("font-weight") == "600"
    assert first.find_element(By.CSS_SELECTOR, ".constraint-report").text == "skipped (only unknown words): zorglub"
    # Nothing of the glossary is found in the second sentence: its translation is translate's.
    assert second.find_element(By.CSS_SELECTOR, ".translation-text").text == plain["translation"][1].decode()
    assert not second.find_elements(By.CSS_SELECTOR, ".constraint, .constraint-report")
    browser.save_screenshot(str(tmp_path / "page_glossary.png"))

    # A chosen word translates again with translate_prefix, which takes no glossary: the sentence says so.
    first.find_elements(By.CSS_SELECTOR, ".target-tokens .token")[0].click()
    _wait(browser, lambda: browser.find_elements(By.CSS_SELECTOR, ".alternatives .alternative"),
          "no alternatives appeared")[0].click()
    _wait(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "section.sentence .badge.forced"),
          "the sentence was not translated again")
    first = browser.find_elements(By.CSS_SELECTOR, "section.sentence")[0]
    assert first.find_element(By.CSS_SELECTOR, ".constraint-report").text == (
        "glossary not applied with a chosen prefix: zorglub, chien")
    assert not first.find_elements(By.CSS_SELECTOR, ".constraint")


def _nbest_shown(section):
    """[(text, score text, whether marked impossible)] of a sentence's n-best list."""
    from selenium.webdriver.common.by import By

    return [(item.find_element(By.CSS_SELECTOR, ".nbest-text").text, item.find_element(By.CSS_SELECTOR, ".score").text,
             "impossible" in item.get_attribute("class").split()) for item in section.find_elements(By.CSS_SELECTOR,
                                                                                                   ".nbest li")]


def test_a_hypothesis_that_could_not_fit_is_shown_as_such_beside_the_others(browser, server, servable):
    """A glossary term too long for a second hypothesis: TF Serving's JSON holds -Infinity, which the page reads."""
    from selenium.webdriver.common.by import By

    term = "chien chien chien"
    expected = _constrained(servable, GLOSSARY_SENTENCES[0], [term])
    scores = expected["nbest_scores"][0]
    assert np.isneginf(scores).any() and np.isfinite(scores[0])  # no second hypothesis fits with the term
    predict = urllib.request.Request(f"{server.url}v1/models/{MODEL_NAME}:predict", headers=JSON_HEADERS,
                                     data=json.dumps({"signature_name": "translate_constrained", "instances": [
                                         {"text": GLOSSARY_SENTENCES[0], "constraints": [term]}]}).encode())
    with urllib.request.urlopen(predict, timeout=WAIT) as response:
        assert b"-Infinity" in response.read()  # the wire format TF Serving documents for non-finite floats
    plain = servable.predict("translate", {"text": np.array([GLOSSARY_SENTENCES[1].encode()], object)})
    sections = _open_with_glossary(browser, server, [f"dog = {term}"], GLOSSARY_SENTENCES)
    assert browser.find_element(By.ID, "status").text.startswith("Translated 2 sentences")
    first, second = sections
    assert first.find_element(By.CSS_SELECTOR, ".translation-text").text == expected["translation"][0].decode()
    assert first.find_element(By.CSS_SELECTOR, ".translation .score").text == f"score {scores[0]:.3f}"
    assert _nbest_shown(first) == [
        ("(no hypothesis)", "could not fit", True) if np.isneginf(score) else (text.decode(), f"{score:.3f}", False)
        for text, score in zip(expected["nbest_translations"][0], scores)]
    assert second.find_element(By.CSS_SELECTOR, ".translation-text").text == plain["translation"][0].decode()


def test_with_split_sentences_each_sentence_gets_the_terms_found_in_it(browser, server, servable):
    from selenium.webdriver.common.by import By

    sentences = [SENTENCES[0], "A small green house?"]  # the line's two sentences; "dog" is in the first only
    browser.get(server.url)
    _wait(browser, lambda: browser.find_element(By.ID, "glossary-box").is_displayed(), "no glossary box")
    browser.find_element(By.ID, "split-sentences").click()
    browser.find_element(By.ID, "glossary").send_keys("dog = chien")
    first, second = _open_and_translate(browser, server, [" ".join(sentences)], reload=False)
    expected = _constrained(servable, sentences[0], ["chien"])
    plain = servable.predict("translate", {"text": np.array([sentences[1].encode()], object)})
    assert first.find_element(By.CSS_SELECTOR, ".translation-text").text == expected["translation"][0].decode()
    assert [chip.text for chip in first.find_elements(By.CSS_SELECTOR, ".target-tokens .token.constraint")][:1] == [
        "chien"]
    assert second.find_element(By.CSS_SELECTOR, ".translation-text").text == plain["translation"][0].decode()
    assert not second.find_elements(By.CSS_SELECTOR, ".constraint, .constraint-report")


def test_a_malformed_glossary_line_is_named_and_an_older_export_shows_no_glossary(browser, server, servable):
    from selenium.webdriver.common.by import By

    _open_with_glossary(browser, server, ["dog = chien", "", "cat chat"], SENTENCES[:1])
    status = browser.find_element(By.ID, "status")
    assert "error" in status.get_attribute("class") and not browser.find_elements(By.CSS_SELECTOR, "section.sentence")
    assert status.text == "Glossary line 3: expected “source term = target term” (or a TAB between them), got “cat chat”"
    older = LocalServer(ModelManager.serving(_WithoutSignatures(servable, ["translate_constrained"])),
                        rest_api_port=0).start()
    older.url = f"http://127.0.0.1:{older.rest_api_port}/"
    try:
        section = _open_and_translate(browser, older, SENTENCES[:1])[0]
        assert not browser.find_element(By.ID, "glossary-box").is_displayed()
        assert not section.find_elements(By.CSS_SELECTOR, ".constraint, .constraint-report")
    finally:
        older.stop()


def test_hostile_input_is_shown_literally_and_runs_nothing(browser, server):
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    sections = _open_and_translate(browser, server, HOSTILE)
    assert [section.find_element(By.CSS_SELECTOR, "h2").text for section in sections] == HOSTILE
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text
    assert browser.execute_script("return document.querySelectorAll('img, iframe, object, embed').length") == 0
    scripts = browser.execute_script("return [...document.scripts].map((script) => script.src)")
    assert scripts == [server.url + "static/page.js"]


def test_a_truncated_source_is_marked(browser, server):
    from selenium.webdriver.common.by import By

    section = _open_and_translate(browser, server, ["the cat sees " * 6])[0]  # 18 words, 12 translated
    badge = section.find_element(By.CSS_SELECTOR, ".badge.truncated")
    assert badge.text == "truncated: only the first 12 words were translated"
    assert len(section.find_elements(By.CSS_SELECTOR, ".source-tokens .token")) == SEARCH_OPTIONS[
        "maximum_source_length"] + 1


def test_every_request_goes_to_the_server_only(browser, server):
    browser.get_log("performance")  # drops what the browser loaded before (its own new-tab page)
    _open_and_translate(browser, server, SENTENCES[:1])
    origin = server.url.rstrip("/")
    entries = browser.execute_script(
        "return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))"
        ".map((entry) => entry.name)")
    requested = [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]
    requested = [message["params"]["request"]["url"] for message in requested
                 if message["method"] == "Network.requestWillBeSent"]
    assert len(entries) >= 4 and len(requested) >= 4  # the page, its script and style, the API calls
    for url in entries + requested:
        if not url.startswith("data:"):  # the empty favicon, written into the page
            parts = urllib.parse.urlsplit(url)
            assert f"{parts.scheme}://{parts.netloc}" == origin, url


def test_a_page_of_another_port_cannot_make_the_server_translate(browser, server, tmp_path):
    """A "simple" cross-site POST (no-cors, text/plain: no preflight) reaches the server, which runs nothing."""
    (tmp_path / "foreign.html").write_text("<!doctype html><title>another site</title>")
    foreign = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path)))
    threading.Thread(target=foreign.serve_forever, daemon=True).start()
    predict = f"{server.url}v1/models/{MODEL_NAME}:predict"
    counted = server.metrics.exposition()
    try:
        browser.get(f"http://127.0.0.1:{foreign.server_port}/foreign.html")
        browser.get_log("performance")  # drops the page's own loading
        answered = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch(arguments[0], {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'},"
            " body: JSON.stringify({instances: ['the cat sees the dog .']})})"
            ".then((response) => done(response.type), (error) => done(String(error)));", predict)
    finally:
        foreign.shutdown()
        foreign.server_close()
    messages = [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]
    statuses = [message["params"]["response"]["status"] for message in messages
                if message["method"] == "Network.responseReceived" and message["params"]["response"]["url"] == predict]
    assert answered == "opaque" and statuses == [403]  # sent and refused; the page cannot read the answer
    assert server.metrics.exposition() == counted  # no prediction ran


def test_server_errors_are_shown_in_the_page(browser, server):
    from selenium.webdriver.common.by import By

    _open_and_translate(browser, server, ["cat"] * 1001, typed=False)  # more than the export's maximum batch (1000)
    status = browser.find_element(By.ID, "status")
    assert "error" in status.get_attribute("class")
    assert status.text == ("The server answered 400 Bad Request: input 'text' holds 1001 sentences; this model takes "
                           "at most 1000 per request")
    _open_and_translate(browser, server, ["cat " * (MAX_REQUEST_BYTES // 4)], typed=False)  # waitress refuses the body
    assert "The server answered 413" in browser.find_element(By.ID, "status").text


def test_page_files_headers_and_the_model_name(servable, server):
    hostile = ModelManager([ServedModel('x"><script>alert(1)</script>'), ServedModel("second")])
    answers = []
    body = b"".join(RestApp(hostile)({"PATH_INFO": "/", "REQUEST_METHOD": "GET"},
                                     lambda status, headers: answers.append((status, dict(headers)))))
    status, headers = answers[0]
    assert status == "200 OK" and headers["Content-Type"].startswith("text/html")
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert (b'content="[&quot;x\\&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&quot;, &quot;second&quot;]"' in body
            and b"{{" not in body)
    for name in re.findall(rb'(?:src|href)="(static/[^"]+)"', body):
        assert os.path.exists(os.path.join(STATIC_DIR, os.path.basename(name.decode())))
    assert server.host == "127.0.0.1"
    with urllib.request.urlopen(server.url + "static/page.js", timeout=WAIT) as response:
        assert response.headers["Content-Type"].startswith("text/javascript")
    request = urllib.request.Request(server.url + "page/unknown_words", headers=JSON_HEADERS,
                                     data=json.dumps({"tokens": [["the", "zyzzyva", "</s>"], []]}).encode())
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        assert json.load(response) == {"unknown": [[False, True, False], []]}
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(server.url + "page/unknown_words", data=b"[1]",
                                                      headers=JSON_HEADERS), timeout=WAIT)
    assert refused.value.code == 400


def test_the_pages_endpoints_answer_404_in_json_for_a_model_without_an_available_version():
    """A model whose base path holds no version yet (or none now): each endpoint answers as :predict does."""
    models = ModelManager([ServedModel(MODEL_NAME, base_path="/nonexistent/base_path")], 0)
    page = RestApp(models).page
    for path, body in (("/page/languages", {}), ("/page/split_sentences", {"text": ["A line."]}),
                       ("/page/unknown_words", {"tokens": [["the"]]})):
        answers = []
        environ = {"PATH_INFO": path, "REQUEST_METHOD": "POST", "wsgi.input": io.BytesIO(json.dumps(body).encode()),
                   "CONTENT_LENGTH": str(len(json.dumps(body)))}
        payload = b"".join(page(environ, lambda status, headers: answers.append((status, dict(headers)))))
        assert answers[0][0] == "404 Not Found" and answers[0][1]["Content-Type"] == "application/json"
        assert json.loads(payload) == {"error": f"Servable not found for request: Latest({MODEL_NAME}): no version of "
                                                f"'{MODEL_NAME}' is available now"}


def test_split_sentences_translates_each_sentence_and_joins_them(browser, server, servable):
    from selenium.webdriver.common.by import By

    lines = ["The cat sees the big dog. The dog sees a house.", "A small green house?"]
    sentences = ["The cat sees the big dog.", "The dog sees a house.", "A small green house?"]
    browser.get(server.url)
    _wait(browser, lambda: "version" in browser.find_element(By.ID, "model").text, "the model's version never showed")
    browser.find_element(By.ID, "split-sentences").click()
    browser.find_element(By.ID, "input").send_keys("\n".join(lines))
    browser.find_element(By.ID, "translate").click()
    _wait(browser, lambda: browser.find_element(By.ID, "status").text.startswith(("Translated", "The server")),
          "no translation and no error")
    assert browser.find_element(By.ID, "status").text.startswith("Translated 2 lines of 3 sentences")
    expected = [text.decode("utf-8") for text in servable.predict(
        "translate", {"text": np.array([s.encode() for s in sentences], object)})["translation"]]
    paragraphs = browser.find_elements(By.CSS_SELECTOR, ".paragraph")
    assert [p.find_element(By.CSS_SELECTOR, ".paragraph-translation").text for p in paragraphs] == [
        " ".join(text for text in expected[:2] if text), expected[2]]
    sections = [p.find_elements(By.CSS_SELECTOR, "section.sentence") for p in paragraphs]
    assert [len(found) for found in sections] == [2, 1]
    for section, translation in zip(sections[0] + sections[1], expected):
        assert section.find_element(By.CSS_SELECTOR, ".translation-text").text == translation
        assert _cells(section)  # each sentence its own heatmap
    request = urllib.request.Request(server.url + "page/split_sentences", headers=JSON_HEADERS,
                                     data=json.dumps({"text": ["Mr. Dog sees. The cat.", ""]}).encode())
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        assert json.load(response) == {"sentences": [["Mr. Dog sees.", "The cat."], []]}
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(server.url + "page/split_sentences", data=b'{"text": [1]}',
                                                      headers=JSON_HEADERS), timeout=WAIT)
    assert refused.value.code == 400


def test_the_page_lists_the_models_and_translates_with_the_one_picked(browser, server, servable):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(server.url)
    _wait(browser, lambda: "version" in browser.find_element(By.ID, "model").text, "the model's version never showed")
    assert not browser.find_element(By.ID, "model-choice").is_displayed()  # one model: no choice
    metrics = ServerMetrics()
    models = ModelManager([ServedModel(MODEL_NAME, servables=[servable]), ServedModel("second", servables=[servable])])
    several = LocalServer(models, rest_api_port=0, metrics=metrics).start()
    several.url = f"http://127.0.0.1:{several.rest_api_port}/"
    try:
        browser.get(several.url)
        _wait(browser, lambda: browser.find_element(By.ID, "model").text.startswith(f"Model {MODEL_NAME}, version"),
              "the first model never showed")
        choice = Select(browser.find_element(By.ID, "model-select"))
        assert [option.text for option in choice.options] == [MODEL_NAME, "second"]
        choice.select_by_value("second")
        _wait(browser, lambda: browser.find_element(By.ID, "model").text == "Model second, version 1",
              "the chosen model never showed")
        browser.find_element(By.ID, "input").send_keys(SENTENCES[0])
        browser.find_element(By.ID, "translate").click()
        _wait(browser, lambda: browser.find_element(By.ID, "status").text.startswith(("Translated", "The server")),
              "no translation and no error")
        assert browser.find_element(By.ID, "status").text.startswith("Translated 1 sentence")
        counted = metrics.exposition().decode("utf-8")
        assert ':rnnsearch:serving:signature_request_latency_count{model_name="second",signature_name="translate",' \
               'status="OK",version="1"} 1.0' in counted
    finally:
        several.stop()


@pytest.fixture(scope="module")
def subword_server(tmp_path_factory):
    """The page of a served subword (SentencePiece) export."""
    from helpers.subword_test_data import subword_export

    servable = Servable(str(subword_export(tmp_path_factory)), MODEL_NAME)
    running = LocalServer(ModelManager.serving(servable), rest_api_port=0).start()
    running.url = f"http://127.0.0.1:{running.rest_api_port}/"
    running.servable = servable
    yield running
    running.stop()
    servable.close()


@pytest.fixture(scope="module")
def encdec_server(tmp_path_factory):
    """The page of a served RNNencdec export (no attention: its alignment is all zeros)."""
    from rnnsearch_tf.inference.translator import Translator
    from serving import export
    from helpers.serving_test_utils import write_model_dir

    folder = tmp_path_factory.mktemp("encdec")
    translator = Translator.from_model_dir(write_model_dir(folder / "model", model_name="rnnencdec"), **SEARCH_OPTIONS)
    export.export(translator, str(folder / "exports"))
    running = _served(folder / "exports")
    yield running
    running.stop()
    running.servable.close()


def test_a_model_without_attention_shows_a_note_instead_of_a_heatmap(browser, encdec_server):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    expected = encdec_server.servable.predict("translate", {"text": np.array([SENTENCES[0].encode()], object)})
    assert not expected["alignment"].any()  # RNNencdec: no attention weights
    section = _open_and_translate(browser, encdec_server, SENTENCES[:1])[0]
    assert section.find_element(By.CSS_SELECTOR, ".translation-text").text == expected["translation"][0].decode()
    assert not section.find_elements(By.CSS_SELECTOR, "table.heatmap, figcaption")
    assert "this model has no attention" in section.find_element(By.CSS_SELECTOR, ".no-attention").text
    assert len(section.find_elements(By.CSS_SELECTOR, ".nbest li")) == SEARCH_OPTIONS["num_hypotheses"]
    ActionChains(browser).move_to_element(section.find_elements(By.CSS_SELECTOR, ".target-tokens .token")[0]).perform()
    assert not section.find_elements(By.CSS_SELECTOR, ".source-tokens .token.aligned")


# large: a second version exported and loaded while the page is open (30 s); the default suite switches versions
# under requests (tests/test_served_model.py) and names the model in the page here (test_page_files_headers_...)
@pytest.mark.large
def test_a_new_version_refreshes_the_model_line_and_settings_when_it_answers(browser, servable, tmp_path,
                                                                           tmp_path_factory):
    """The page follows the X-Model-Version of each answer: version 2 (another n-best size and length
    normalisation) is loaded after the page read version 1's metadata."""
    from selenium.webdriver.common.by import By
    from rnnsearch_tf.inference.translator import Translator
    from serving import export

    def settings():
        return {setting.get_attribute("title"): setting.find_elements(By.TAG_NAME, "span")[1].text
                for setting in browser.find_elements(By.CSS_SELECTOR, "#settings .setting")}

    base_path = tmp_path / "versions"
    shutil.copytree(servable.path, base_path / "1")
    models = ModelManager([ServedModel(MODEL_NAME, base_path)], 0).start()
    switching = LocalServer(models, rest_api_port=0).start()
    switching.url = f"http://127.0.0.1:{switching.rest_api_port}/"
    try:
        first = _open_and_translate(browser, switching, SENTENCES[:1])[0]
        assert browser.find_element(By.ID, "model").text == f"Model {MODEL_NAME}, version 1"
        assert len(first.find_elements(By.CSS_SELECTOR, ".nbest li")) == SEARCH_OPTIONS["num_hypotheses"]
        options = dict(SEARCH_OPTIONS, beam_size=5, num_hypotheses=3, length_normalization="length")
        model_dir, _, _ = exported_model(tmp_path_factory)
        export.export(Translator.from_model_dir(model_dir, **options), str(base_path), 2)
        assert models.model(MODEL_NAME).poll() == [2]
        assert {name: settings()[name] for name in ("num_hypotheses", "length_normalization")} == {
            "num_hypotheses": "2", "length_normalization": "none"}  # the page has not asked since
        first = _open_and_translate(browser, switching, SENTENCES[:1], typed=False, reload=False)[0]
        assert browser.find_element(By.ID, "model").text == f"Model {MODEL_NAME}, version 2"
        assert {name: settings()[name] for name in ("beam_size", "num_hypotheses", "length_normalization")} == {
            "beam_size": "5", "num_hypotheses": "3", "length_normalization": "length"}
        assert len(first.find_elements(By.CSS_SELECTOR, ".nbest li")) == 3
        assert "Version 2 answered (the page showed version 1)" in browser.find_element(By.ID, "status").text
    finally:
        switching.stop()
        models.close()


def test_a_subword_model_shows_words_and_forces_the_text_of_an_alternative(browser, subword_server):
    from selenium.webdriver.common.by import By
    from helpers.subword_test_data import RARE_SENTENCE

    section = _open_and_translate(browser, subword_server, [RARE_SENTENCE])[0]
    source = [chip.text for chip in section.find_elements(By.CSS_SELECTOR, ".source-tokens .token")]
    assert source == RARE_SENTENCE.split() + ["</s>"]  # the words the pieces make, none marked unknown
    assert not section.find_elements(By.CSS_SELECTOR, ".source-tokens .token.unknown")
    expected = subword_server.servable.predict("translate", {"text": np.array([RARE_SENTENCE.encode()], object)})
    translation = expected["translation"][0].decode()
    assert section.find_element(By.CSS_SELECTOR, ".translation-text").text == translation
    assert _target_words(section) == [word.decode() for word in expected["words"][0] if word]
    assert len(_cells(section)) == len(_target_words(section))
    shown, _ = _confidence_marks(section)  # each word's probability: its pieces' multiplied
    assert shown == pytest.approx(expected["word_probabilities"][0][: len(shown)].tolist(), abs=6e-4)
    section.find_elements(By.CSS_SELECTOR, ".target-tokens .token")[0].click()
    options = _wait(browser, lambda: browser.find_elements(By.CSS_SELECTOR, ".alternatives .alternative"),
                    "no alternatives appeared")
    labels = [option.find_element(By.CSS_SELECTOR, ".alternative-word").text for option in options]
    assert all("▁" not in label for label in labels)
    starting = [option for option, label in zip(options, labels) if label and not label.startswith("…")]
    word = starting[0].find_element(By.CSS_SELECTOR, ".alternative-word").text
    starting[0].click()
    _wait(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "section.sentence .badge.forced"),
          "the sentence was not translated again")
    section = browser.find_element(By.CSS_SELECTOR, "section.sentence")
    assert section.find_element(By.CSS_SELECTOR, ".translation-text").text.startswith(word)
    assert _target_words(section)[0].startswith(word)


def _served(export_dir):
    """A `LocalServer` of the page over `export_dir` (its `servable` attached); stop it and close the servable."""
    servable = Servable(str(export_dir), MODEL_NAME)
    running = LocalServer(ModelManager.serving(servable), rest_api_port=0).start()
    running.url = f"http://127.0.0.1:{running.rest_api_port}/"
    running.servable = servable
    return running


@pytest.fixture(scope="module")
def german_server(german_english_export):
    """The page of the served German -> English export (`helpers.other_languages`)."""
    running = _served(german_english_export)
    yield running
    running.stop()
    running.servable.close()


@pytest.fixture(scope="module")
def chinese_server(chinese_english_export):
    """The page of the served Chinese -> English export (`helpers.other_languages`)."""
    running = _served(chinese_english_export)
    yield running
    running.stop()
    running.servable.close()


def _languages_shown(driver, server):
    """Opens the page of `server`; (the languages line's text, its title) once it has named the model's languages."""
    from selenium.webdriver.common.by import By

    driver.get(server.url)
    shown = driver.find_element(By.ID, "languages")
    _wait(driver, lambda: shown.is_displayed() and shown.text, "the model's languages never showed")
    return shown.text, shown.get_attribute("title")


def test_a_german_model_is_named_and_its_words_cut_by_german_rules(browser, german_server):
    from selenium.webdriver.common.by import By

    sentence = "Ein Mann usw. Hunde sind im Freien."  # "usw." one token by German rules, "usw" "." by English ones
    assert _languages_shown(browser, german_server) == ("German → English", "de → en")
    section = _open_and_translate(browser, german_server, [sentence], reload=False)[0]
    assert browser.find_element(By.ID, "input").get_attribute("lang") == "de"
    expected = german_server.servable.predict("translate", {"text": np.array([sentence.encode()], object)})
    assert section.find_element(By.CSS_SELECTOR, ".translation-text").text == expected["translation"][0].decode()
    source = [chip.text for chip in section.find_elements(By.CSS_SELECTOR, ".source-tokens .token")]
    assert source == ["Ein", "Mann", "usw.", "Hunde", "sind", "im", "Freien", ".", "</s>"]
    columns = [head.text for head in section.find_elements(By.CSS_SELECTOR, "table.heatmap th.source-word")]
    assert columns == source
    assert [section.find_element(By.CSS_SELECTOR, selector).get_attribute("lang")
            for selector in (".source-tokens", ".target-tokens", "table.heatmap thead tr", "table.heatmap tbody")] == [
        "de", "en", "de", "en"]


CHINESE_SENTENCE = "他们在哪里？"


def test_a_chinese_model_shows_chinese_characters_on_its_heatmap(browser, chinese_server):
    from selenium.webdriver.common.by import By

    assert _languages_shown(browser, chinese_server) == ("Chinese → English", "zh → en")
    section = _open_and_translate(browser, chinese_server, [CHINESE_SENTENCE], reload=False)[0]
    assert browser.find_element(By.ID, "status").text.startswith("Translated 1 sentence")
    assert section.find_element(By.CSS_SELECTOR, "h2").text == CHINESE_SENTENCE
    expected = chinese_server.servable.predict("translate", {"text": np.array([CHINESE_SENTENCE.encode()], object)})
    assert section.find_element(By.CSS_SELECTOR, ".translation-text").text == expected["translation"][0].decode()
    columns = [head.text for head in section.find_elements(By.CSS_SELECTOR, "table.heatmap th.source-word")]
    assert columns == [word.decode() for word in expected["source_words"][0] if word]
    assert "".join(columns[:-1]) == CHINESE_SENTENCE and columns[-1] == "</s>"
    assert section.find_element(By.CSS_SELECTOR, "table.heatmap thead tr").get_attribute("lang") == "zh"
    assert len(_cells(section)) == len(_target_words(section))


# Draws each of the characters (arguments[0]) with the CSS font of the element (arguments[1]) on a canvas; returns
# each drawing's pixels as one string. A character no installed font has is drawn as the same box (or nothing).
_DRAWINGS = """
const font = getComputedStyle(arguments[1]).font;
return Array.from(arguments[0], (character) => {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 48;
  const context = canvas.getContext("2d");
  context.font = font;
  context.textBaseline = "top";
  context.fillText(character, 4, 4);
  return Array.from(context.getImageData(0, 0, 48, 48).data).join(",");
});
"""


# The extent of the element's text along its line (its height in a column label written vertically), and the width
# the text takes written horizontally in the element's font.
_EXTENTS = """
const range = document.createRange();
range.selectNodeContents(arguments[0]);
const context = document.createElement("canvas").getContext("2d");
context.font = getComputedStyle(arguments[0]).font;
return [range.getBoundingClientRect().height, context.measureText(arguments[0].textContent).width];
"""


def test_chinese_characters_render_with_a_font_that_has_them(browser, chinese_server, tmp_path):
    from selenium.webdriver.common.by import By

    fonts = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True).stdout
    if not fonts.strip():
        pytest.skip("no Chinese font: the Debian package fonts-wqy-zenhei is not installed "
                    "(scripts/install_browser.sh installs it beside Chromium)")
    section = _open_and_translate(browser, chinese_server, [CHINESE_SENTENCE])[0]
    label = section.find_element(By.CSS_SELECTOR, "table.heatmap th.source-word")
    characters = [character for character in CHINESE_SENTENCE if character != "？"]
    drawings = browser.execute_script(_DRAWINGS, characters, label)
    assert len(set(drawings)) == len(characters)  # each character its own glyph
    unassigned = browser.execute_script(_DRAWINGS, ["\u0378", "\u0379"], label)  # no font has these code points
    assert unassigned[0] == unassigned[1] not in drawings
    along, across = browser.execute_script(_EXTENTS, label)  # the column label's characters one after the other,
    assert along == pytest.approx(across, rel=0.05)  # not drawn over each other (a font without vertical metrics)
    browser.save_screenshot(str(tmp_path / "page_chinese.png"))
    assert (tmp_path / "page_chinese.png").stat().st_size > 10_000


# Words of right-to-left languages for tiny random-weight models: Arabic (a target) and Persian (a source).
ARABIC_WORDS = "القط الكلب البيت يرى كبير صغير أخضر".split()
PERSIAN_WORDS = "گربه سگ خانه می‌بیند بزرگ کوچک".split()


def _right_to_left_server(folder, languages, source_words, target_words):
    """The page of a served tiny random-weight RNNsearch export from `languages[0]` to `languages[1]` whose
    vocabularies are `source_words` and `target_words`."""
    from data_pipeline.constants import RESERVED_TOKENS
    from rnnsearch_tf import ModelConfig
    from rnnsearch_tf.inference.translator import Translator
    from rnnsearch_tf.models.model_dir import ModelDir
    from serving import export
    from helpers.serving_test_utils import save_random_model

    (folder / "model").mkdir(parents=True)
    for name, words in (("source.tsv", source_words), ("target.tsv", target_words)):
        (folder / name).write_text("".join(f"{token}\t1\n" for token in RESERVED_TOKENS + tuple(words)),
                                   encoding="utf-8")
    config = ModelConfig(source_vocab_size=len(RESERVED_TOKENS) + len(source_words),
                         target_vocab_size=len(RESERVED_TOKENS) + len(target_words), embedding_dim=8, hidden_dim=16,
                         maxout_dim=8, alignment_dim=16)
    ModelDir(folder / "model").write_model("rnnsearch", config, dict(zip(("source_language", "target_language"),
                                                                         languages)),
                                           folder / "source.tsv", folder / "target.tsv")
    translator = Translator.from_model_dir(save_random_model(ModelDir(folder / "model"), seed=3), **SEARCH_OPTIONS)
    export.export(translator, str(folder / "exports"))
    return _served(folder / "exports")


@pytest.fixture(scope="module")
def right_to_left_servers(tmp_path_factory):
    """{"en-ar", "fa-en"}: the pages of English -> Arabic and Persian -> English tiny exports."""
    from helpers.serving_test_utils import SOURCE_WORDS, TARGET_WORDS

    root = tmp_path_factory.mktemp("right_to_left")
    servers = {"en-ar": _right_to_left_server(root / "en-ar", ("en", "ar"), SOURCE_WORDS, ARABIC_WORDS),
               "fa-en": _right_to_left_server(root / "fa-en", ("fa", "en"), PERSIAN_WORDS, TARGET_WORDS)}
    yield servers
    for running in servers.values():
        running.stop()
        running.servable.close()


def _direction(driver, node):
    return driver.execute_script("return getComputedStyle(arguments[0]).direction", node)


def _lefts(nodes):
    return [node.rect["x"] for node in nodes]


# large: two tiny exports of their own (35 s); the default suite's page tests cover left-to-right pages, and
# `directionOf` (page.js) reads the browser's locale data
@pytest.mark.large
def test_right_to_left_languages_are_written_right_to_left_and_the_glossary_hint_names_the_languages(
        browser, right_to_left_servers, tmp_path):
    from selenium.webdriver.common.by import By
    from helpers.serving_test_utils import SOURCE_WORDS

    english_arabic, persian_english = right_to_left_servers["en-ar"], right_to_left_servers["fa-en"]
    sentence = " ".join(SOURCE_WORDS[:4])
    assert _languages_shown(browser, english_arabic) == ("English → Arabic", "en → ar")
    text_box, glossary = browser.find_element(By.ID, "input"), browser.find_element(By.ID, "glossary")
    assert (text_box.get_attribute("dir"), text_box.get_attribute("lang")) == ("auto", "en")
    assert glossary.get_attribute("dir") == "auto"
    assert glossary.get_attribute("placeholder") == "English term = Arabic term"  # no invented translations
    section = _open_and_translate(browser, english_arabic, [sentence], reload=False)[0]
    expected = english_arabic.servable.predict("translate", {"text": np.array([sentence.encode()], object)})
    translation = section.find_element(By.CSS_SELECTOR, ".translation-text")
    assert translation.text == expected["translation"][0].decode() != ""
    assert (translation.get_attribute("lang"), _direction(browser, translation)) == ("ar", "rtl")
    target_line, source_line = (section.find_element(By.CSS_SELECTOR, selector)
                                for selector in (".target-tokens", ".source-tokens"))
    assert (_direction(browser, target_line), _direction(browser, source_line)) == ("rtl", "ltr")
    target_chips = section.find_elements(By.CSS_SELECTOR, ".target-tokens .token")
    assert len(target_chips) > 1 and _lefts(target_chips) == sorted(_lefts(target_chips), reverse=True)
    source_chips = section.find_elements(By.CSS_SELECTOR, ".source-tokens .token")
    assert _lefts(source_chips) == sorted(_lefts(source_chips))
    nbest = section.find_elements(By.CSS_SELECTOR, ".nbest li .nbest-text")
    assert nbest and all(_direction(browser, item) == "rtl" for item in nbest)
    browser.save_screenshot(str(tmp_path / "page_arabic.png"))

    persian = " ".join(PERSIAN_WORDS[:3])
    assert _languages_shown(browser, persian_english) == ("Persian → English", "fa → en")
    assert browser.find_element(By.ID, "glossary").get_attribute("placeholder") == "Persian term = English term"
    section = _open_and_translate(browser, persian_english, [persian], reload=False)[0]
    heading = section.find_element(By.CSS_SELECTOR, "h2.source-text")
    assert (heading.text, heading.get_attribute("lang"), _direction(browser, heading)) == (persian, "fa", "rtl")
    source_chips = section.find_elements(By.CSS_SELECTOR, ".source-tokens .token")
    assert _lefts(source_chips) == sorted(_lefts(source_chips), reverse=True)
    columns = section.find_elements(By.CSS_SELECTOR, "table.heatmap th.source-word")
    assert [column.text for column in columns] == [chip.text for chip in source_chips]
    assert _lefts(columns) == sorted(_lefts(columns), reverse=True)  # the first source word's column rightmost
    translation = section.find_element(By.CSS_SELECTOR, ".translation-text")
    assert (translation.get_attribute("lang"), _direction(browser, translation)) == ("en", "ltr")
    browser.save_screenshot(str(tmp_path / "page_persian.png"))
