// The page's behaviour: sortable tables, the per_file toggle, the per-query drill-down.
// No framework and no network: everything comes from the JSON block in the page, and
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

  var data = null;
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

  function corpus() { return data.corpora[state.corpus]; }
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

  function setCorpus(name) {
    state.corpus = name;
    var c = corpus();
    state.pass = String(c.passes[0]);
    var engines = c.engines.filter(function (e) { return run(e); });
    state.a = engines[0] || null;
    state.b = engines[1] || engines[0] || null;
    fill($("dd-pass"), c.passes.map(String), null, state.pass);
    fill($("dd-a"), engines, null, state.a);
    fill($("dd-b"), engines, null, state.b);
    state.query = null;
    var notes = $("dd-notes");
    notes.textContent = "";
    c.notes.forEach(function (n) { notes.appendChild(el("li", { text: n })); });
  }

  function rankText(o, which) {
    if (!o) return "—";
    if (o.error) return "error";
    var slot = which === "chunk" ? o.first_chunk : o.first_file;
    return slot ? "#" + slot : "miss";
  }

  function renderList() {
    var c = corpus();
    if (!state.a) {
      $("dd-filters").textContent = "";
      $("dd-list").textContent = "";
      $("dd-list").appendChild(el("p", { "class": "note", text: "No engine has rows on this corpus." }));
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

  function textBlock(key, open, label, path) {
    var c = corpus();
    var t = key ? c.text[key] : null;
    if (!t) return el("div", { "class": "notext", text: key === null && c.notes.length ?
                               "(text not available: see the notes above)" : "(no span: whole file)" });
    if (t.missing) return el("div", { "class": "notext", text: "(the file or lines are not in the tree)" });
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
    o.slots.forEach(function (slot, i) {
      if (i === data.cutoff) list.appendChild(el("li", { "class": "cutoff", text: "cutoff k=" + data.cutoff }));
      var marks = [];
      if (slot.fg > 0) marks.push(el("span", { "class": "mark file", text: "✓ gold file" }));
      if (slot.cg > 0) marks.push(el("span", { "class": "mark chunk", text: "✓ gold chunk" }));
      var item = el("li", { "class": "slot" + (slot.fg > 0 ? " hit" : "") + (slot.cg > 0 ? " chunkhit" : "") }, [
        el("div", { "class": "slot-head" }, [el("span", { "class": "rank", text: "#" + (i + 1) }),
          el("span", { "class": "path", text: slot.path })].concat(marks))
      ]);
      slot.chunks.forEach(function (ch) {
        var label = spanText(ch.s, ch.e) + (ch.gold ? "  ◀ overlaps gold" : "");
        item.appendChild(textBlock(ch.key, ch.gold, label, slot.path));
      });
      if (!slot.chunks.length) item.appendChild(el("div", { "class": "notext", text: "(no span: whole file)" }));
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
        gold.appendChild(textBlock(g.key, true, spanText(g.start, g.end), null));
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
    data = JSON.parse(block.textContent);
    var names = Object.keys(data.corpora);
    if (!names.length) return;
    $("dd-controls").hidden = false;
    state.metric = data.metrics[0];
    fill($("dd-corpus"), names, null, names[0]);
    fill($("dd-metric"), data.metrics, null, state.metric);
    setCorpus(names[0]);
    function bind(id, key) {
      $(id).addEventListener("change", function () {
        if (key === "corpus") setCorpus($(id).value); else state[key] = $(id).value;
        $("dd-detail").textContent = "";
        renderList();
      });
    }
    bind("dd-corpus", "corpus"); bind("dd-pass", "pass"); bind("dd-a", "a");
    bind("dd-b", "b"); bind("dd-metric", "metric");
    $("dd-swap").addEventListener("click", function () {
      var a = state.a; state.a = state.b; state.b = a;
      $("dd-a").value = state.a; $("dd-b").value = state.b;
      renderList();
      if (state.query) openQuery(state.query);
    });
    renderList();
  }

  document.addEventListener("DOMContentLoaded", function () {
    initSorting();
    initDrill();
    document.body.setAttribute("data-ready", "1");
  });
})();
