// The translation page of `rnnsearch serve`: calls the server's own TensorFlow Serving REST API
// (`translate`, `settings`, and `translate_prefix` and `translate_constrained` when the export has them)
// and shows each sentence's translation, n-best list and attention matrix (Bahdanau et al. 2014, Figure 3).
// Every text from the user or the server is set with textContent, never parsed as HTML.
"use strict";

(function () {
  const NOT_CHOOSABLE = new Set(["", "<pad>", "<s>", "</s>"]);  // a prefix of raw text cannot force </s>
  const EOS = "</s>";
  const UNK = "<unk>";
  const ALIGNED = 0.2; // a word is highlighted as aligned from this α on (and the largest α always)
  const LOW_CONFIDENCE = 0.5; // a target word below this probability under the model is underlined (dotted)
  const GLOSSARY_PLACEHOLDER = "source term = target term";  // until the model's languages are known

  // The served models, the default first (`rnnsearch serve --model_config_file` may serve several).
  const modelNames = JSON.parse(document.querySelector('meta[name="model-names"]').content);
  let modelName = modelNames[0];
  const modelPath = () => "v1/models/" + encodeURIComponent(modelName);
  // The version whose metadata the header, the settings and the signatures in use are (a string): each answer's
  // X-Model-Version header names the version that answered, and a new one is read before its answer is shown.
  let shownVersion = null;
  const page = {
    status: document.getElementById("status"),
    results: document.getElementById("results"),
    input: document.getElementById("input"),
    glossary: document.getElementById("glossary"),
    button: document.getElementById("translate"),
  };
  let hasPrefixSignature = false;
  let hasConstrainedSignature = false;  // the glossary box is shown and used
  let subwordTarget = false;  // the export's target codec is made of pieces: alternatives are text to add
  let languageCodes = {source: "", target: ""};  // the export's languages (ISO 639 codes), "" where unknown
  let openMenu = null;

  // A new element: `options` may hold className, text (set as textContent), title and attributes.
  function element(tag, options, children) {
    const node = document.createElement(tag);
    options = options || {};
    if (options.className) node.className = options.className;
    if (options.text !== undefined) node.textContent = String(options.text);
    if (options.title !== undefined) node.title = String(options.title);
    for (const [name, value] of Object.entries(options.attributes || {})) node.setAttribute(name, String(value));
    for (const child of children || []) node.appendChild(child);
    return node;
  }

  function showStatus(message, isError) {
    page.status.textContent = message;
    page.status.className = "status" + (isError ? " error" : "");
  }

  window.addEventListener("error", (event) => showStatus("The page failed: " + event.message, true));
  window.addEventListener("unhandledrejection", (event) => showStatus("The page failed: " + event.reason, true));

  // TF Serving's JSON: its REST API writes a float that is not finite as NaN, Infinity or -Infinity (a hypothesis
  // the search could not fit scores -Infinity), which JSON.parse rejects. Those tokens outside strings are read as
  // the numbers they name: ±Infinity as ±1e999 (JSON.parse's Infinity), NaN through a marker string.
  const NOT_A_NUMBER = "\u0000NaN\u0000" + Math.random();
  function parseJson(text) {
    try {
      return JSON.parse(text);
    } catch (error) {
      const marked = text.replace(/"(?:[^"\\]|\\.)*"|-?Infinity|NaN/g, (token) => token.startsWith('"') ? token :
        token === "NaN" ? JSON.stringify(NOT_A_NUMBER) : token.replace("Infinity", "1e999"));
      return JSON.parse(marked, (key, value) => value === NOT_A_NUMBER ? NaN : value);
    }
  }

  // GET (body undefined) or POST JSON to the server; resolves with {answer (parsed), response}, rejects with a
  // readable Error (the server's {"error": ...} message when it gave one).
  async function request(path, body) {
    let response;
    try {
      response = await fetch(path, body === undefined ? {} : {
        method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify(body),
      });
    } catch (error) {
      throw new Error("Cannot reach the server (" + error.message + "). Is `rnnsearch serve` still running?");
    }
    const text = await response.text();
    let answer = null;
    try {
      answer = parseJson(text);
    } catch (error) {
      answer = null;
    }
    if (!response.ok) {
      let reason = answer && typeof answer.error === "string" ? answer.error : text.slice(0, 500);
      // A failed graph assertion: its message, without TensorFlow's node names and stack.
      const assertion = /assertion failed: \[([^\]]*)\]/.exec(reason);
      if (assertion) reason = assertion[1];
      throw new Error("The server answered " + response.status + " " + response.statusText + ": " + reason);
    }
    if (answer === null) throw new Error("The server's answer is not JSON: " + text.slice(0, 200));
    return {answer: answer, response: response};
  }

  // The parsed answer of `request`.
  async function call(path, body) {
    return (await request(path, body)).answer;
  }

  // The rows of one predict request, once the page shows the metadata of the version that answered them.
  async function predict(signatureName, instances) {
    const asked = modelName;
    const {answer, response} = await request(modelPath() + ":predict",
      {signature_name: signatureName, instances: instances});
    const version = response.headers.get("X-Model-Version");
    if (version && version !== shownVersion && asked === modelName) await showModel(version);
    return answer.predictions;
  }

  // A score or log-probability with `digits` decimals; -Infinity is a hypothesis the search could not fit in its
  // limits (the maximum length with a forced prefix or glossary terms): an empty one.
  function formatScore(value, digits) {
    if (Number.isFinite(value)) return value.toFixed(digits === undefined ? 3 : digits);
    return value === -Infinity ? "could not fit" : String(value);
  }

  // ---- The model and its search settings ----

  const SETTING_LABELS = [
    ["source_language", "source"], ["target_language", "target"], ["beam_size", "beam"],
    ["num_hypotheses", "n-best"], ["length_normalization", "length normalisation"],
    ["length_penalty_alpha", "length penalty α"], ["maximum_length_a", "max length a"],
    ["maximum_length_b", "max length b"], ["maximum_source_length", "max source tokens"],
    ["early_stopping", "early stopping"], ["forbid_unk", "forbid <unk>"], ["sampling", "sampling"],
    ["num_samples", "samples"], ["sampling_temperature", "temperature"], ["num_alternatives", "alternatives"],
    ["maximum_batch_size", "max batch"],
  ];

  // Shows the model's metadata-driven parts (its version, signatures, settings and languages): of `version`, or
  // of the newest one when it is undefined.
  async function showModel(version) {
    const versionPath = modelPath() + (version === undefined ? "" : "/versions/" + encodeURIComponent(version));
    const metadata = await call(versionPath + "/metadata");
    languageCodes = {source: "", target: ""};
    document.getElementById("languages").hidden = true;
    page.input.removeAttribute("lang");
    page.glossary.placeholder = GLOSSARY_PLACEHOLDER;
    const signatures = metadata.metadata.signature_def.signature_def;
    shownVersion = metadata.model_spec.version;
    hasPrefixSignature = Object.prototype.hasOwnProperty.call(signatures, "translate_prefix");
    document.getElementById("prefix-hint").hidden = !hasPrefixSignature;
    hasConstrainedSignature = Object.prototype.hasOwnProperty.call(signatures, "translate_constrained");
    document.getElementById("glossary-box").hidden = !hasConstrainedSignature;
    document.getElementById("model").textContent = "Model " + modelName + ", version " + shownVersion;
    const box = document.getElementById("settings");
    box.replaceChildren();
    subwordTarget = false;
    if (!Object.prototype.hasOwnProperty.call(signatures, "settings")) return;
    const settings = await call(versionPath + ":predict", {signature_name: "settings", inputs: {}});
    const values = settings.outputs;
    subwordTarget = Boolean(values.target_codec) && values.target_codec !== "moses";
    if (values.source_language && values.target_language) await showLanguages();
    const shown = [element("span", {className: "settings-title", text: "Search settings of the export"})];
    for (const [name, label] of SETTING_LABELS) {
      if (!(name in values)) continue;
      if (!values.sampling && ["num_samples", "sampling_temperature"].includes(name)) continue;
      if (values.length_normalization !== "gnmt" && name === "length_penalty_alpha") continue;
      shown.push(element("span", {className: "setting", title: name},
        [element("span", {className: "setting-name", text: label}), element("span", {text: values[name]})]));
    }
    if (values.checkpoint) {
      shown.push(element("span", {className: "setting", title: values.checkpoint},
        [element("span", {className: "setting-name", text: "checkpoint"}),
         element("span", {text: values.checkpoint.split("/").pop()})]));
    }
    box.replaceChildren(...shown);
  }

  // The model's languages by name above the text box ("German → English", the codes in its title), named by the
  // server (POST page/languages); the text box and each side's words carry their language's code (`lang`), so
  // that the browser picks the script's fonts (Chinese, Japanese and Korean share characters), and its writing
  // direction (`dir`: Arabic, Hebrew, Persian, Urdu right to left). The glossary's placeholder names them.
  async function showLanguages() {
    const answer = await call("page/languages", {model: modelName});
    languageCodes = {source: answer.source.code, target: answer.target.code};
    const box = document.getElementById("languages");
    box.textContent = answer.source.name + " → " + answer.target.name;
    box.title = answer.source.code + " → " + answer.target.code;
    box.hidden = false;
    page.input.lang = answer.source.code;
    page.glossary.placeholder = answer.source.name + " term = " + answer.target.name + " term";
  }

  // The writing direction of language `code`, "rtl" or "ltr", as the browser's locale data (CLDR, through
  // `Intl.Locale`'s text info) has it; "auto" (the text's first letter decides) where it has none or `code` is "".
  function directionOf(code) {
    try {
      const locale = new Intl.Locale(code);
      const info = typeof locale.getTextInfo === "function" ? locale.getTextInfo() : locale.textInfo;
      return (info && info.direction) || "auto";
    } catch (error) {
      return "auto";
    }
  }

  // The `lang` and `dir` attributes of `side`'s text ("source" or "target"): no `lang` where the language is
  // unknown, and then the direction of the text's first letter.
  const languageOf = (side) => Object.assign(languageCodes[side] ? {lang: languageCodes[side]} : {},
    {dir: directionOf(languageCodes[side])});

  // ---- The glossary (the translate_constrained signature) ----

  // The glossary box's terms, [{source, target}]: a line is `source term = target term`, or a TAB between
  // them (a line of `rnnsearch translate --terminology`'s TSV file); blank lines and lines starting with #
  // are skipped, spaces around each term dropped, the first entry of a source term wins. Throws an Error
  // naming the first malformed line.
  function glossaryTerms() {
    if (!hasConstrainedSignature) return [];
    const terms = new Map();  // source term -> target term
    page.glossary.value.split("\n").forEach((raw, index) => {
      const line = raw.replace(/\r$/, "");
      if (!line.trim() || line.startsWith("#")) return;
      const fields = line.split(line.includes("\t") ? "\t" : "=").map((field) => field.trim());
      if (fields.length !== 2 || !fields[0] || !fields[1]) {
        throw new Error("Glossary line " + (index + 1) + ": expected “source term = target term” (or a TAB " +
          "between them), got “" + line.trim() + "”");
      }
      if (!terms.has(fields[0])) terms.set(fields[0], fields[1]);
    });
    return Array.from(terms, ([source, target]) => ({source: source, target: target}));
  }

  const WORD = "[\\p{L}\\p{N}\\p{M}_]";  // a word's character, for whole-word matches

  // The target terms whose source term occurs in `sentence` as whole words, case-sensitive, as
  // `translate --terminology` finds them (but on the raw text, not the codec's tokens): the longest
  // match wins where matches overlap, each target term once, in the order found.
  function sentenceConstraints(sentence, terms) {
    const matches = [];
    for (const term of terms) {
      const body = term.source.split(/\s+/).map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("\\s+");
      const pattern = new RegExp((new RegExp("^" + WORD, "u").test(term.source) ? "(?<!" + WORD + ")" : "") + body +
        (new RegExp(WORD + "$", "u").test(term.source) ? "(?!" + WORD + ")" : ""), "gu");
      for (const match of sentence.matchAll(pattern)) {
        matches.push({start: match.index, end: match.index + match[0].length, target: term.target});
      }
    }
    matches.sort((a, b) => (b.end - b.start) - (a.end - a.start) || a.start - b.start);
    const kept = [];
    for (const match of matches) {
      if (kept.every((other) => match.end <= other.start || match.start >= other.end)) kept.push(match);
    }
    kept.sort((a, b) => a.start - b.start);
    return Array.from(new Set(kept.map((match) => match.target)));
  }

  // Translates `sentences` (one request): with `translate_constrained` where the glossary gives any of them a
  // constraint (each row padded with "", which constrains nothing), else with `translate`. Resolves with
  // {predictions, constraints}: constraints[i] the target terms of sentence i.
  async function translateSentences(sentences, terms) {
    const constraints = sentences.map((sentence) => sentenceConstraints(sentence, terms));
    const width = Math.max(0, ...constraints.map((row) => row.length));
    if (!width) return {predictions: await predict("translate", sentences.map((text) => ({text: text}))), constraints};
    const instances = sentences.map((text, i) => ({text: text,
      constraints: constraints[i].concat(Array(width - constraints[i].length).fill(""))}));
    return {predictions: await predict("translate_constrained", instances), constraints};
  }

  // Where each met constraint landed among `targetWords`: a Map from word index to its target term (every
  // run of words that spells the term, spaces aside); and the sentence's one-line report of the terms not
  // met or skipped ("" when none).
  function constraintMarks(targetWords, prediction, constraints) {
    const landed = new Map();
    const notMet = [], skipped = [];
    (constraints || []).forEach((phrase, k) => {
      if (prediction.constraints_skipped && prediction.constraints_skipped[k]) return skipped.push(phrase);
      if (!prediction.constraints_met || !prediction.constraints_met[k]) return notMet.push(phrase);
      const spelled = phrase.replace(/\s+/g, "");
      for (let i = 0; i < targetWords.length; i += 1) {
        let joined = "", j = i;
        while (j < targetWords.length && joined.length < spelled.length) joined += targetWords[j++];
        if (joined !== spelled) continue;
        for (let w = i; w < j; w += 1) landed.set(w, phrase);
        i = j - 1;
      }
    });
    const report = [notMet.length ? "not met: " + notMet.join(", ") : "",
      skipped.length ? "skipped (only unknown words): " + skipped.join(", ") : ""].filter(Boolean).join("; ");
    return {landed: landed, report: report};
  }

  // ---- One sentence's result ----

  // The words of a padded row (strings after the last one are "").
  function words(row) {
    const end = row.indexOf("");
    return end < 0 ? row.slice() : row.slice(0, end);
  }

  function largestIndex(values) {
    let best = 0;
    values.forEach((value, index) => { if (value > values[best]) best = index; });
    return best;
  }

  // Sentence view: `prediction` is one row of translate (or translate_prefix, translate_constrained);
  // `forced` the number of target words the user chose (shown as such); `constraints` the sentence's target
  // terms from the glossary (highlighted where they landed; not applied to a chosen prefix). With a subword
  // codec the export's word view is shown (the words its pieces make, a word's attention summed over its
  // source pieces and averaged over its target pieces); else its tokens, which are words.
  function renderSentence(section, text, prediction, unknown, forced, constraints) {
    const view = element("div", {className: "sentence-view"});
    section.replaceChildren(view);
    const sourceWords = words(prediction.source_words || prediction.source_tokens);  // ends with </s>
    const targetWords = words(prediction.words || prediction.tokens);  // ends with </s> unless empty
    const alignment = (prediction.word_alignment || prediction.alignment).slice(0, targetWords.length)
      .map((row) => row.slice(0, sourceWords.length));  // [tgt_len, src_len]
    // A model without attention (RNNencdec) answers zeros; an attention row is a softmax, which sums to 1.
    const hasAttention = alignment.some((row) => row.some((weight) => weight > 0));
    constraints = constraints || [];
    const marks = forced ? {landed: new Map(), report: constraints.length ?
      "glossary not applied with a chosen prefix: " + constraints.join(", ") : ""} :
      constraintMarks(targetWords, prediction, constraints);

    view.appendChild(element("h2", {className: "source-text", text: text, attributes: languageOf("source")}));
    const badges = element("div", {className: "badges"});
    if (prediction.truncated) {
      badges.appendChild(element("span", {className: "badge truncated",
        text: "truncated: only the first " + (sourceWords.length - 1) + " words were translated"}));
    }
    const unknownCount = sourceWords.filter((_, j) => unknown && unknown[j]).length;
    if (unknownCount) {
      badges.appendChild(element("span", {className: "badge unknown",
        text: unknownCount + " source word" + (unknownCount > 1 ? "s" : "") + " outside the vocabulary (<unk>)"}));
    }
    if (forced) {
      badges.appendChild(element("span", {className: "badge forced",
        text: "the first " + forced + " word" + (forced > 1 ? "s were" : " was") + " chosen by you"}));
    }
    if (badges.childNodes.length) view.appendChild(badges);

    if (!targetWords.length) {
      view.appendChild(element("p", {className: "translation empty", text: "(no words to translate)"}));
      return;
    }
    // The line runs in the target's direction (an Arabic translation from the right, its score after it).
    const translation = element("p", {className: "translation", attributes: {dir: languageOf("target").dir}}, [
      element("span", {className: "translation-text", text: prediction.translation, attributes: languageOf("target")}),
      element("span", {className: "score", attributes: {dir: "ltr"},
        text: (Number.isFinite(prediction.score) ? "score " : "") + formatScore(prediction.score),
        title: "the beam search score of this translation (log p(y | x), length-normalised as the settings say)"}),
    ]);
    view.appendChild(translation);
    if (marks.report) view.appendChild(element("p", {className: "constraint-report", text: marks.report}));

    // Tokens of both sides: hovering one highlights the words it is aligned with.
    const sourceLine = element("div", {className: "tokens source-tokens", attributes: languageOf("source")},
      [element("span", {className: "side", text: "source", attributes: {lang: "en", dir: "ltr"}})]);
    const targetLine = element("div", {className: "tokens target-tokens", attributes: languageOf("target")},
      [element("span", {className: "side", text: "target", attributes: {lang: "en", dir: "ltr"}})]);
    const sourceChips = sourceWords.map((word, j) => element("span", {
      className: "token" + (unknown && unknown[j] ? " unknown" : "") + (word === EOS ? " eos" : ""),
      text: word, title: unknown && unknown[j] ? "not in the source vocabulary: read as <unk>" : undefined,
      attributes: {"data-side": "source", "data-index": j, dir: "auto"},
    }));
    // Each target word's probability under the model (a subword model's: its pieces' multiplied); none
    // from an export older than them.
    const probabilities = prediction.word_probabilities || prediction.token_probabilities || [];
    const confidence = (i) => i < probabilities.length ? "p = " + probabilities[i].toFixed(3) : undefined;
    const targetChips = targetWords.map((word, i) => element(hasPrefixSignature ? "button" : "span", {
      className: "token" + (word === UNK ? " unknown" : "") + (word === EOS ? " eos" : "") +
        (i < (forced || 0) ? " forced" : "") + (hasPrefixSignature ? " choosable" : "") +
        (probabilities[i] < LOW_CONFIDENCE ? " uncertain" : "") + (marks.landed.has(i) ? " constraint" : ""),
      text: word, title: [word === UNK ? "an unknown word: the model's <unk>" : undefined, confidence(i),
        marks.landed.has(i) ? "glossary: " + marks.landed.get(i) : undefined].filter(Boolean).join("; ") || undefined,
      attributes: Object.assign({"data-side": "target", "data-index": i, dir: "auto"},
        hasPrefixSignature ? {type: "button"} : {}),
    }));
    sourceChips.forEach((chip) => sourceLine.appendChild(chip));
    targetChips.forEach((chip) => targetLine.appendChild(chip));
    view.appendChild(sourceLine);
    view.appendChild(targetLine);

    // The attention matrix (a note where the model has none), with the n-best list beside it where the export
    // returns one.
    const table = hasAttention ? heatmap(sourceWords, targetWords, alignment, unknown, forced, marks.landed) : null;
    const analysis = element("div", {className: "analysis"}, [hasAttention ?
      element("figure", {className: "heatmap-box"}, [
        element("figcaption", {text: "Attention α: row i holds target word i's weights over the source words " +
          "(each row sums to 1); hover a cell for its value."}),
        table,
      ]) :
      element("p", {className: "no-attention", text: "No attention matrix: this model has no attention (an " +
        "encoder–decoder such as RNNencdec reads the whole source as one fixed-length vector), so no target " +
        "word is aligned to source words."})]);
    if (prediction.nbest_translations) {
      const list = element("ol", {className: "nbest", attributes: languageOf("target")});
      prediction.nbest_translations.forEach((candidate, index) => {
        const fits = prediction.nbest_scores[index] !== -Infinity;
        list.appendChild(element("li", {className: (index === 0 ? "best" : "") + (fits ? "" : " impossible")}, [
          element("span", {className: "nbest-text", text: fits ? candidate : "(no hypothesis)"}),
          element("span", {className: "score", attributes: {dir: "ltr"},
            text: formatScore(prediction.nbest_scores[index]),
            title: fits ? undefined : "no hypothesis of this rank fits the maximum length (with the chosen " +
              "words or the glossary's terms)"}),
        ]));
      });
      analysis.appendChild(element("div", {className: "nbest-box"}, [
        element("h3", {text: prediction.nbest_translations.length + " best translations"}), list]));
    }
    view.appendChild(analysis);

    const highlight = (side, index, on) => {
      const rowHeads = table.querySelectorAll("tbody th");
      const columnHeads = table.querySelectorAll("thead th.source-word");
      const mark = (node, weight, aligned) => {
        node.classList.toggle("aligned", on && aligned);
        node.style.setProperty("--weight", on ? weight.toFixed(3) : "0");
      };
      if (side === "target") {
        const row = alignment[index];
        const best = largestIndex(row);
        sourceChips.forEach((chip, j) => mark(chip, row[j], row[j] >= ALIGNED || j === best));
        columnHeads.forEach((head, j) => mark(head, row[j], row[j] >= ALIGNED || j === best));
        targetChips[index].classList.toggle("active", on);
        rowHeads[index].classList.toggle("active", on);
      } else {
        const column = alignment.map((row) => row[index]);
        const best = largestIndex(column);
        targetChips.forEach((chip, i) => mark(chip, column[i], column[i] >= ALIGNED || i === best));
        rowHeads.forEach((head, i) => mark(head, column[i], column[i] >= ALIGNED || i === best));
        sourceChips[index].classList.toggle("active", on);
        columnHeads[index].classList.toggle("active", on);
      }
    };
    view.addEventListener("mouseover", (event) => {
      const word = event.target.closest("[data-side]");
      if (word && hasAttention) highlight(word.dataset.side, Number(word.dataset.index), true);
    });
    view.addEventListener("mouseout", (event) => {
      const word = event.target.closest("[data-side]");
      if (word && hasAttention) highlight(word.dataset.side, Number(word.dataset.index), false);
    });
    if (hasPrefixSignature) {
      view.addEventListener("click", (event) => {
        const word = event.target.closest('[data-side="target"]');
        if (word) chooseWord(section, text, unknown, targetWords, Number(word.dataset.index), constraints);
      });
    }
  }

  // The attention matrix as a table: a row per target word, a column per source word (both with </s>),
  // each cell shaded by α_ij, its value in the title; `landed` the target words a glossary term put there.
  function heatmap(sourceWords, targetWords, alignment, unknown, forced, landed) {
    const head = element("tr", {attributes: languageOf("source")}, [element("th", {className: "corner", text: "α"})]);
    sourceWords.forEach((word, j) => head.appendChild(element("th", {
      className: "source-word" + (unknown && unknown[j] ? " unknown" : ""), text: word,
      attributes: {"data-side": "source", "data-index": j, scope: "col", dir: "auto"},
    })));
    const body = element("tbody", {attributes: languageOf("target")});
    targetWords.forEach((word, i) => {
      const row = element("tr", {}, [element("th", {
        className: "target-word" + (word === UNK ? " unknown" : "") + (i < (forced || 0) ? " forced" : "") +
          (hasPrefixSignature ? " choosable" : "") + (landed.has(i) ? " constraint" : ""),
        text: word, title: landed.has(i) ? "glossary: " + landed.get(i) : undefined,
        attributes: {"data-side": "target", "data-index": i, scope: "row", dir: "auto"},
      })]);
      sourceWords.forEach((sourceWord, j) => {
        const weight = alignment[i][j];
        const cell = element("td", {
          title: word + " ← " + sourceWord + ": α = " + weight.toFixed(3),
          attributes: {"data-alpha": weight},
        });
        cell.style.setProperty("--alpha", weight.toFixed(4));
        if (weight >= 0.5) cell.classList.add("strong");
        row.appendChild(cell);
      });
      body.appendChild(row);
    });
    // Its columns run in the source's direction (right to left for Arabic), each row's word in the target's.
    return element("table", {className: "heatmap", attributes: {dir: languageOf("source").dir,
      "aria-label": "attention weights: rows are target words, columns source words"}},
      [element("thead", {}, [head]), body]);
  }

  // ---- Interactive translation (the translate_prefix signature) ----

  function closeMenu() {
    if (openMenu) openMenu.remove();
    openMenu = null;
  }

  document.addEventListener("keydown", (event) => { if (event.key === "Escape") closeMenu(); });
  document.addEventListener("click", (event) => {
    if (openMenu && !openMenu.contains(event.target) && !event.target.closest('[data-side="target"]')) closeMenu();
  });

  // Asks the server which words could stand at position `index` after the words before it, and lists
  // them under the sentence's target words.
  async function chooseWord(section, text, unknown, targetWords, index, constraints) {
    closeMenu();
    const prefix = targetWords.slice(0, index);
    const close = element("button", {className: "alternatives-close", text: "×", title: "close (Esc)",
      attributes: {type: "button"}});
    close.addEventListener("click", closeMenu);
    const menu = element("div", {className: "alternatives", attributes: {role: "menu"}}, [
      element("span", {className: "side", text: "instead"}),
      element("span", {className: "alternatives-title",
        text: (index ? "after “" + prefix.join(" ") + "”" : "as the first word") + ", log p:"}),
      element("span", {className: "alternatives-loading", text: "asking the model…"}),
      close,
    ]);
    openMenu = menu;
    section.querySelector(".target-tokens").insertAdjacentElement("afterend", menu);
    let prediction;
    try {
      [prediction] = await predict("translate_prefix", [{text: text, prefix: prefix.join(" ")}]);
    } catch (error) {
      menu.querySelector(".alternatives-loading").textContent = error.message;
      menu.querySelector(".alternatives-loading").className = "error";
      return;
    }
    if (openMenu !== menu) return;
    const choices = prediction.alternatives.map((word, k) => [word, prediction.alternative_scores[k]])
      .filter(([word]) => !NOT_CHOOSABLE.has(word));
    const options = choices.map(([word, score]) => {
      // A piece is the text it adds: " word" starts a word, "s" continues the last one (shown "…s").
      const label = subwordTarget && !word.startsWith(" ") && index ? "…" + word : word.trim();
      const option = element("button", {className: "alternative" + (label === targetWords[index] ? " current" : ""),
        attributes: {type: "button", role: "menuitem"}},
        [element("span", {className: "alternative-word", text: label, attributes: languageOf("target")}),
         element("span", {className: "score", attributes: {dir: "ltr"}, text: formatScore(score, 2)})]);
      option.addEventListener("click", (event) => {
        event.stopPropagation();
        closeMenu();
        const before = prefix.join(" ");
        forcePrefix(section, text, unknown, subwordTarget ? before + word : prefix.concat([word]).join(" "),
          constraints);
      });
      return option;
    });
    menu.querySelector(".alternatives-loading").replaceWith(
      ...(options.length ? options : [element("span", {text: "no other word"})]));
  }

  // Translates `text` again with the text `prefix` forced (translate_prefix: without the glossary's
  // `constraints`, which the result names), and shows the result in place.
  async function forcePrefix(section, text, unknown, prefix, constraints) {
    prefix = prefix.trim();
    showStatus("Translating with “" + prefix + "” forced…");
    try {
      const [prediction] = await predict("translate_prefix", [{text: text, prefix: prefix}]);
      renderSentence(section, text, prediction, unknown, prefix.split(/\s+/).filter((word) => word).length,
        constraints);
      showStatus("");
    } catch (error) {
      showStatus(error.message, true);
    }
  }

  // ---- Translating the text area ----

  // Which source tokens are outside the source vocabulary (POST page/unknown_words); null if unknown.
  async function unknownWords(predictions) {
    try {
      const answer = await call("page/unknown_words", {model: modelName,
        tokens: predictions.map((prediction) => words(prediction.source_words || prediction.source_tokens))});
      return answer.unknown;
    } catch (error) {
      return predictions.map(() => null);
    }
  }

  // Paragraphs: each line split into sentences by the server (POST page/split_sentences, Moses' rules), all
  // sentences translated in one request; a line shows its sentences' translations joined, then each
  // sentence with its own heatmap.
  async function translateParagraphs(lines, terms, started, shownBefore) {
    const split = (await call("page/split_sentences", {model: modelName, text: lines})).sentences;
    const sentences = split.flat();
    const {predictions, constraints} = sentences.length ?
      await translateSentences(sentences, terms) : {predictions: [], constraints: []};
    const unknown = await unknownWords(predictions);
    page.results.textContent = "";
    let next = 0;
    split.forEach((lineSentences) => {
      const paragraph = element("div", {className: "paragraph"});
      const translations = lineSentences.map((_, k) => predictions[next + k].translation).filter((text) => text);
      paragraph.appendChild(element("p", {className: "paragraph-translation", text: translations.join(" "),
        attributes: languageOf("target")}));
      lineSentences.forEach((sentence) => {
        const section = element("section", {className: "sentence"});
        paragraph.appendChild(section);
        renderSentence(section, sentence, predictions[next], unknown[next], 0, constraints[next]);
        next += 1;
      });
      page.results.appendChild(paragraph);
    });
    showStatus("Translated " + lines.length + " line" + (lines.length > 1 ? "s" : "") + " of " + sentences.length +
      " sentence" + (sentences.length > 1 ? "s" : "") + " in " + ((performance.now() - started) / 1000).toFixed(2) +
      " s." + versionNote(shownBefore));
  }

  // What the status adds when a version other than `shownBefore` (the one shown before) answered.
  function versionNote(shownBefore) {
    if (shownBefore === null || shownBefore === shownVersion) return "";
    return " Version " + shownVersion + " answered (the page showed version " + shownBefore + "): the model's line " +
      "and settings above are now its own.";
  }

  async function translate() {
    closeMenu();
    const lines = page.input.value.split("\n").map((line) => line.trim()).filter((line) => line);
    if (!lines.length) {
      showStatus("Type a sentence to translate.", true);
      return;
    }
    let terms;
    try {
      terms = glossaryTerms();
    } catch (error) {
      showStatus(error.message, true);
      return;
    }
    page.button.disabled = true;
    showStatus("Translating " + lines.length + " sentence" + (lines.length > 1 ? "s" : "") + "…");
    const started = performance.now(), shownBefore = shownVersion;
    try {
      if (document.getElementById("split-sentences").checked) {
        await translateParagraphs(lines, terms, started, shownBefore);
        return;
      }
      const {predictions, constraints} = await translateSentences(lines, terms);
      const unknown = await unknownWords(predictions);
      page.results.textContent = "";
      predictions.forEach((prediction, index) => {
        const section = element("section", {className: "sentence"});
        page.results.appendChild(section);
        renderSentence(section, lines[index], prediction, unknown[index], 0, constraints[index]);
      });
      showStatus("Translated " + lines.length + " sentence" + (lines.length > 1 ? "s" : "") + " in " +
        ((performance.now() - started) / 1000).toFixed(2) + " s." + versionNote(shownBefore));
    } catch (error) {
      showStatus(error.message, true);
    } finally {
      page.button.disabled = false;
    }
  }

  document.getElementById("form").addEventListener("submit", (event) => {
    event.preventDefault();
    translate();
  });
  const translateOnCtrlEnter = (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      translate();
    }
  };
  page.input.addEventListener("keydown", translateOnCtrlEnter);
  page.glossary.addEventListener("keydown", translateOnCtrlEnter);
  // With several models, a choice of model: the page then translates with the chosen one.
  const choice = document.getElementById("model-select");
  if (modelNames.length > 1) {
    for (const name of modelNames) choice.appendChild(element("option", {text: name, attributes: {value: name}}));
    document.getElementById("model-choice").hidden = false;
    choice.addEventListener("change", () => {
      closeMenu();
      modelName = choice.value;
      document.getElementById("settings").textContent = "";
      page.results.textContent = "";
      showStatus("");
      showModel().catch((error) => showStatus(error.message, true));
    });
  }
  showModel().catch((error) => showStatus(error.message, true));
})();
