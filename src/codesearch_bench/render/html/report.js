// The page's behaviour: sortable tables, the per_file toggle, the per-query drill-down.
// No framework and no network: everything comes from the data blocks in the page, and
// every piece of it reaches the DOM through textContent, never as HTML.
(function () {
  "use strict";

  function el(name, attrs, children) {
    var node = document.createElement(name);
    Object.keys(attrs || {}).forEach(function (key) {
      if (attrs[key] === null || attrs[key] === undefined || attrs[key] === false) return;
      if (key === "text") node.textContent = String(attrs[key]);
      else node.setAttribute(key, attrs[key] === true ? "" : String(attrs[key]));
    });
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  // Sorting: a score column ("num") sorts best first, high to low; a cost or rank
  // column ("rank": latency, tokens, p, tier) low to high; text A to Z. A second
  // click reverses. Cells without a number always go last.
  function sortBy(table, index, th) {
    var type = th.getAttribute("data-type");
    var numeric = type !== "text";
    var current = th.getAttribute("aria-sort");
    var descending = current ? current === "ascending" : type === "num";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell) {
      cell.removeAttribute("aria-sort");
    });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (row, i) { row.__order = i; });
    rows.sort(function (a, b) {
      var ca = a.cells[index], cb = b.cells[index];
      var va = ca ? ca.getAttribute("data-v") : null, vb = cb ? cb.getAttribute("data-v") : null;
      var cmp;
      if (numeric) {
        if (va === null || vb === null) return (va === null) - (vb === null) || a.__order - b.__order;
        cmp = parseFloat(va) - parseFloat(vb);
      } else {
        var ta = ca ? ca.getAttribute("data-s") || ca.textContent : "";
        var tb = cb ? cb.getAttribute("data-s") || cb.textContent : "";
        cmp = ta < tb ? -1 : ta > tb ? 1 : 0;  // code-point order: the same in every locale
      }
      return (descending ? -cmp : cmp) || a.__order - b.__order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function initSorting() {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
        th.classList.add("sort");
        th.addEventListener("click", function () { sortBy(table, index, th); });
        th.addEventListener("keydown", function (ev) {
          if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); sortBy(table, index, th); }
        });
      });
    });
    Array.prototype.forEach.call(document.querySelectorAll("input.every-pass"), function (box) {
      box.addEventListener("change", function () {
        var section = document.getElementById(box.getAttribute("data-section"));
        if (section) section.classList.toggle("show-extra", box.checked);
      });
    });
  }

  // ---- drill-down --------------------------------------------------------------
  // Each corpus's data is a gzipped, base64'd block, unpacked (DecompressionStream)
  // the first time that corpus is chosen; the small "bench-data" block names them.

  var index = null;
  var loaded = {};  // corpus -> its unpacked data
  var state = { corpus: null, pass: null, a: null, b: null, metric: null, query: null };
  var CATS = [
    ["won", "A found, B missed"], ["lost", "B found, A missed"],
    ["missed", "both missed"], ["found", "both found"], ["ne", "not entered"]
  ];
  var shown = { won: true, lost: true, missed: true, found: false, ne: false };

  function $(id) { return document.getElementById(id); }

  function fill(select, values, labels, chosen) {
    select.textContent = "";
    values.forEach(function (v, i) {
      select.appendChild(el("option", { value: v, text: labels ? labels[i] : v, selected: v === chosen }));
    });
    select.value = chosen;
  }

  function unpack(entry) {
    if (loaded[entry.name]) return Promise.resolve(loaded[entry.name]);
    if (typeof DecompressionStream === "undefined") {
      return Promise.reject(new Error("this browser cannot unpack the drill-down's data " +
        "(it needs DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or later); " +
        "the tables above do not need it"));
    }
    var stream;
    try {
      var raw = atob($(entry.block).textContent);
      var bytes = new Uint8Array(raw.length);
      for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
      stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    } catch (err) {
      return Promise.reject(err);  // a damaged block: said where the list would be
    }
    return new Response(stream).text().then(function (text) {
      loaded[entry.name] = JSON.parse(text);
      return loaded[entry.name];
    });
  }

  function corpus() { return loaded[state.corpus]; }
  function run(engine) { return corpus().runs[engine + "|" + state.pass]; }

  function value(engine, qid) {
    var r = run(engine);
    var o = r && r.outcomes[qid];
    if (!o) return null;
    if (o.scores[state.metric] !== undefined) return o.scores[state.metric];
    return o.error ? 0 : null;  // a failed query scores as a miss, as in the tables
  }

  function category(qid) {
    var a = value(state.a, qid), b = value(state.b, qid);
    if (a === null || b === null) return "ne";
    if (a > 0 && b > 0) return "found";
    if (a > 0) return "won";
    if (b > 0) return "lost";
    return "missed";
  }

  function say(text, cls) {
    $("dd-filters").textContent = "";
    $("dd-detail").textContent = "";
    var list = $("dd-list");
    list.textContent = "";
    list.appendChild(el("p", { "class": cls || "note", text: text }));
  }

  // Opens a corpus once its data is unpacked; a later choice wins over a slower earlier one.
  function setCorpus(name) {
    state.corpus = name;
    state.query = null;
    $("drill").removeAttribute("data-loaded");
    $("dd-notes").textContent = "";
    var entry = index.corpora.filter(function (c) { return c.name === name; })[0];
    if (!loaded[name]) say("Unpacking the data of " + name + "…");
    return unpack(entry).then(function () {
      if (state.corpus !== name) return;
      var c = corpus();
      state.pass = String(c.passes[0]);
      var engines = c.engines.filter(function (e) { return run(e); });
      state.a = engines[0] || null;
      state.b = engines[1] || engines[0] || null;
      fill($("dd-pass"), c.passes.map(String), null, state.pass);
      fill($("dd-a"), engines, null, state.a);
      fill($("dd-b"), engines, null, state.b);
      c.notes.forEach(function (n) { $("dd-notes").appendChild(el("li", { text: n })); });
      renderList();
      $("drill").setAttribute("data-loaded", name);
    }, function (err) {
      if (state.corpus === name) say(String(err.message || err), "warning");
    });
  }

  function rankText(o, which) {
    if (!o) return "—";
    if (o.error) return "error";
    var slot = which === "chunk" ? o.first_chunk : o.first_file;
    return slot ? "#" + slot : "miss";
  }

  function renderList() {
    var c = corpus();
    if (!c) return;
    if (!state.a) {
      say("No engine has rows on this corpus.");
      return;
    }
    var counts = {};
    CATS.forEach(function (cat) { counts[cat[0]] = 0; });
    var track = state.metric.split(".")[0];
    var body = el("tbody");
    c.queries.forEach(function (q) {
      var cat = category(q.id);
      counts[cat] += 1;
      if (!shown[cat]) return;
      var oa = run(state.a) && run(state.a).outcomes[q.id];
      var ob = run(state.b) && run(state.b).outcomes[q.id];
      var tr = el("tr", { tabindex: "0", "data-query": q.id, "class": "q " + cat +
                          (state.query === q.id ? " current" : "") }, [
        el("td", { "class": "mono", text: q.id }),
        el("td", { "class": "qtext", text: q.text || "" }),
        el("td", { "class": "num", text: rankText(oa, track) }),
        el("td", { "class": "num", text: rankText(ob, track) }),
        el("td", {}, [el("span", { "class": "cat " + cat, text: catLabel(cat) })])
      ]);
      tr.addEventListener("click", function () { openQuery(q.id); });
      tr.addEventListener("keydown", function (ev) { if (ev.key === "Enter") openQuery(q.id); });
      body.appendChild(tr);
    });
    var filters = $("dd-filters");
    filters.textContent = "";
    CATS.forEach(function (cat) {
      var box = el("input", { type: "checkbox", checked: shown[cat[0]], "data-cat": cat[0] });
      box.addEventListener("change", function () { shown[cat[0]] = box.checked; renderList(); });
      filters.appendChild(el("label", { "class": "filter " + cat[0] }, [box,
        " " + catLabel(cat[0]) + " ", el("b", { text: String(counts[cat[0]]) })]));
    });
    var head = el("thead", {}, [el("tr", {}, [
      el("th", { text: "query" }), el("th", { text: "text" }),
      el("th", { "class": "num", text: "A: " + state.a, title: "first gold " + track + " slot" }),
      el("th", { "class": "num", text: "B: " + state.b, title: "first gold " + track + " slot" }),
      el("th", { text: state.metric })])]);
    var list = $("dd-list");
    list.textContent = "";
    if (!body.rows.length) {
      list.appendChild(el("p", { "class": "note", text: "No query in the chosen groups." }));
    } else {
      list.appendChild(el("table", { "class": "queries" }, [head, body]));
    }
  }

  function catLabel(cat) {
    var names = { won: "A only", lost: "B only", missed: "both missed", found: "both found",
                  ne: "not entered" };
    return names[cat];
  }

  // The gold lines of a path, so a slot's text can show where the answer sits in it.
  function goldLines(path) {
    var q = currentQuery();
    return (q ? q.gold : []).filter(function (g) {
      return g.path === path && g.start !== null && g.start !== undefined;
    });
  }

  function currentQuery() {
    return corpus().queries.filter(function (x) { return x.id === state.query; })[0];
  }

  // The lines a span shows, cut from its file's runs of kept lines: null when they were
  // not kept (no tree, or the page's text budget ran out), "missing" when the file is not
  // in the tree.
  function spanLines(path, s, e) {
    var t = corpus().text[path];
    if (t === null) return "missing";
    if (!t) return null;
    var first = Math.max(s, 1), end = Math.min(e, t.n);
    var last = Math.min(end, first + index.shown - 1);
    if (last < first) return { start: first, lines: [], more: 0 };
    for (var i = 0; i < t.runs.length; i++) {
      var at = t.runs[i][0], lines = t.runs[i][1];
      if (at <= first && last < at + lines.length) {
        return { start: first, lines: lines.slice(first - at, last - at + 1), more: end - last };
      }
    }
    return null;
  }

  function textBlock(path, s, e, open, label) {
    if (s === null || s === undefined || e === null || e === undefined) {
      return el("div", { "class": "notext", text: "(no span: whole file)" });
    }
    var t = spanLines(path, s, e);
    if (!t) return el("div", { "class": "notext", text: "(text not available: see the notes above)" });
    if (t === "missing") return el("div", { "class": "notext", text: "(the file or lines are not in the tree)" });
    var gold = goldLines(path);
    var lines = t.lines.map(function (line, i) {
      var n = t.start + i;
      var inGold = gold.some(function (g) { return g.start <= n && n <= g.end; });
      return el("span", { "class": inGold ? "ln g" : "ln", "data-n": String(n) }, [line + "\n"]);
    });
    if (t.more) lines.push(el("span", { "class": "more", text: "… " + t.more + " more lines" }));
    return el("details", { open: open }, [el("summary", { text: label }), el("pre", {}, lines)]);
  }

  function spanText(s, e) { return s === null || s === undefined ? "file" : "L" + s + "–" + e; }

  function engineColumn(engine, qid) {
    var r = run(engine);
    var o = r && r.outcomes[qid];
    var col = el("div", { "class": "engine-col", "data-engine": engine });
    col.appendChild(el("h4", { text: engine + " · per_file " + state.pass }));
    if (!o) { col.appendChild(el("p", { "class": "note", text: "no outcome for this query" })); return col; }
    var facts = [
      "first gold file slot: " + (o.first_file || "none"),
      "first gold chunk slot: " + (o.entered ? (o.first_chunk || "none") : "n/e"),
      "latency: " + (o.latency === null ? "—" : (o.latency * 1000).toFixed(1) + " ms"),
      "raw hits: " + o.raw, "tokens@10: " + (o.tokens === null ? "—" : o.tokens)
    ];
    if (o.outside) facts.push("outside the tree: " + o.outside);
    col.appendChild(el("p", { "class": "facts", text: facts.join(" · ") }));
    if (o.error) col.appendChild(el("p", { "class": "error", text: "error: " + o.error }));
    if (!o.slots.length) col.appendChild(el("p", { "class": "note", text: "no slots" }));
    var list = el("ol", { "class": "slots" });
    var paths = corpus().paths;
    o.slots.forEach(function (slot, i) {  // [path index, file gain, chunk gain, chunks]
      var path = paths[slot[0]], fg = slot[1], cg = slot[2], chunks = slot[3];
      if (i === index.cutoff) list.appendChild(el("li", { "class": "cutoff", text: "cutoff k=" + index.cutoff }));
      var marks = [];
      if (fg > 0) marks.push(el("span", { "class": "mark file", text: "✓ gold file" }));
      if (cg > 0) marks.push(el("span", { "class": "mark chunk", text: "✓ gold chunk" }));
      var item = el("li", { "class": "slot" + (fg > 0 ? " hit" : "") + (cg > 0 ? " chunkhit" : "") }, [
        el("div", { "class": "slot-head" }, [el("span", { "class": "rank", text: "#" + (i + 1) }),
          el("span", { "class": "path", text: path })].concat(marks))
      ]);
      chunks.forEach(function (ch) {  // [start, end - start, overlaps gold]
        var s = ch[0], e = s === null || ch[1] === null ? null : s + ch[1];
        var label = spanText(s, e) + (ch[2] ? "  ◀ overlaps gold" : "");
        item.appendChild(textBlock(path, s, e, !!ch[2], label));
      });
      if (!chunks.length) item.appendChild(el("div", { "class": "notext", text: "(no span: whole file)" }));
      list.appendChild(item);
    });
    col.appendChild(list);
    return col;
  }

  function openQuery(qid) {
    state.query = qid;
    var q = currentQuery();
    var box = $("dd-detail");
    box.textContent = "";
    box.appendChild(el("h3", {}, [el("span", { "class": "mono", text: q.id }), " ",
                                  el("span", { text: q.text || "(query text not available)" })]));
    var meta = [];
    if (q.split) meta.push("split " + q.split);
    if (q.tags.length) meta.push("tags " + q.tags.join(", "));
    meta.push(catLabel(category(qid)) + " on " + state.metric);
    box.appendChild(el("p", { "class": "facts", text: meta.join(" · ") }));
    var gold = el("div", { "class": "gold" }, [el("h4", { text: "gold" })]);
    if (!q.gold.length) gold.appendChild(el("p", { "class": "note",
      text: "gold items not available (see the notes above); the ✓ marks come from the run's gains" }));
    q.gold.forEach(function (g) {
      gold.appendChild(el("div", { "class": "gold-item" + (g.unresolved ? " unresolved" : ""), text: g.label }));
      if (!g.unresolved && g.start !== null && g.start !== undefined) {
        gold.appendChild(textBlock(g.path, g.start, g.end, true, spanText(g.start, g.end)));
      }
    });
    var cols = el("div", { "class": "cols" }, [gold, engineColumn(state.a, qid)]);
    if (state.b !== state.a) cols.appendChild(engineColumn(state.b, qid));
    box.appendChild(cols);
    Array.prototype.forEach.call(document.querySelectorAll("#dd-list tr.q"), function (tr) {
      tr.classList.toggle("current", tr.getAttribute("data-query") === qid);
    });
    box.scrollIntoView({ block: "start" });
  }

  function initDrill() {
    var block = $("bench-data");
    if (!block) return;
    index = JSON.parse(block.textContent);
    var names = index.corpora.map(function (c) { return c.name; });
    if (!names.length) return;
    $("dd-controls").hidden = false;
    state.metric = index.metrics[0];
    fill($("dd-corpus"), names, null, names[0]);
    fill($("dd-metric"), index.metrics, null, state.metric);
    function bind(id, key) {
      $(id).addEventListener("change", function () {
        $("dd-detail").textContent = "";
        if (key === "corpus") { setCorpus($(id).value); return; }
        state[key] = $(id).value;
        renderList();
      });
    }
    bind("dd-corpus", "corpus"); bind("dd-pass", "pass"); bind("dd-a", "a");
    bind("dd-b", "b"); bind("dd-metric", "metric");
    $("dd-swap").addEventListener("click", function () {
      if (!corpus()) return;
      var a = state.a; state.a = state.b; state.b = a;
      $("dd-a").value = state.a; $("dd-b").value = state.b;
      renderList();
      if (state.query) openQuery(state.query);
    });
    setCorpus(names[0]);
  }

  document.addEventListener("DOMContentLoaded", function () {
    initSorting();
    initDrill();
    document.body.setAttribute("data-ready", "1");
  });
})();
