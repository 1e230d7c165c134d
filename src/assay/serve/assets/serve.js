/* assay serve: the runs list (filters, selection for an overlay) and search/sweep records.
 * Every piece of run data reaches the page through textContent (AssayCharts.el), never as
 * markup; links are built from encodeURIComponent'd ids. */
"use strict";
(function () {
  var el = AssayCharts.el;
  var data = JSON.parse(document.getElementById("assay-data").textContent);
  var app = document.getElementById("app");
  app.textContent = "";

  function add(parent, tag, cls, text) { var e = el(tag, cls, text); parent.appendChild(e); return e; }
  function link(parent, href, text, cls) {
    var a = add(parent, "a", cls, text); a.setAttribute("href", href); return a;
  }
  function runHref(id) { return "/runs/" + encodeURIComponent(id) + "/"; }
  function dateText(epoch) {
    if (!epoch) return "–";
    var d = new Date(epoch * 1000), p = function (n) { return ("0" + n).slice(-2); };
    return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + " " + p(d.getHours()) + ":" + p(d.getMinutes());
  }
  function duration(s) {
    if (s === null || s === undefined) return "–";
    return s >= 3600 ? (s / 3600).toFixed(1) + " h" : s >= 60 ? (s / 60).toFixed(1) + " min" : Math.round(s) + " s";
  }
  function table(parent, headers, id) {
    var t = add(parent, "table"), tr = add(add(t, "thead"), "tr");
    if (id) t.id = id;
    headers.forEach(function (h) { add(tr, "th", null, h); });
    return add(t, "tbody");
  }
  function cell(tr, content, cls) {
    var td = add(tr, "td", cls);
    if (content instanceof Node) td.appendChild(content); else td.textContent = content === null || content === undefined ? "–" : String(content);
    return td;
  }
  function status(s) { return el("span", s === "passed" ? "ok" : s === "failed" ? "bad" : "muted", s); }

  function filters(parent) {
    var f = data.filters, form = add(parent, "form", "filters");
    form.setAttribute("method", "get"); form.setAttribute("action", "/");
    form.style.cssText = "display:flex;flex-wrap:wrap;gap:8px 14px;align-items:end;margin:14px 0";
    function field(name, label, input) {
      var l = add(form, "label", null); l.style.cssText = "display:flex;flex-direction:column;font-size:12px;color:#616e7c";
      l.appendChild(document.createTextNode(label)); l.appendChild(input);
      input.name = name; input.id = "f-" + name; input.value = f[name] || "";
    }
    function text(name, label, placeholder, type) {
      var i = el("input"); i.type = type || "text"; if (placeholder) i.placeholder = placeholder; field(name, label, i);
    }
    function choice(name, label) {
      var s = el("select"); add(s, "option", null, "any").value = "";
      (data.choices[name] || []).forEach(function (v) { add(s, "option", null, v).value = v; });
      field(name, label, s); s.value = f[name] || "";
    }
    text("scenario", "scenario", "name contains");
    choice("platform", "platform"); choice("status", "status"); choice("host", "host");
    text("since", "from", "", "date"); text("until", "to", "", "date");
    text("field", "field", "e.g. compressibility"); text("value", "equals", "e.g. 2.0");
    var b = add(form, "button", null, "Filter"); b.type = "submit"; b.id = "apply";
    link(form, "/", "clear");
  }

  function runsPage() {
    add(app, "h1", null, "assay results");
    add(app, "p", "muted", data.runs.length + " run" + (data.runs.length === 1 ? "" : "s") +
        " shown. Select two or more to overlay them.");
    if (data.notice) add(app, "p", "warning", data.notice);
    filters(app);
    var bar = add(app, "p"), go = add(bar, "button", null, "Overlay selected runs");
    go.id = "overlay"; go.disabled = true;
    var count = add(bar, "span", "muted", ""); count.style.marginLeft = "10px";
    var body = table(app, ["", "started", "scenario", "status", "verdict", "platform", "host", "duration", "run"], "runs");
    var boxes = [];
    function selected() { return boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; }); }
    function update() {
      var n = selected().length; go.disabled = n < 2; count.textContent = n ? n + " selected" : "";
    }
    data.runs.forEach(function (r) {
      var tr = add(body, "tr"); tr.dataset.run = r.id;
      var box = el("input"); box.type = "checkbox"; box.value = r.id; box.className = "pick";
      box.addEventListener("change", update); boxes.push(box); cell(tr, box);
      cell(tr, dateText(r.started));
      var name = el("div"); link(name, runHref(r.id), r.scenario || r.id, "open");
      if (r.description) add(name, "div", "muted", r.description);
      cell(tr, name, "scenario");
      var st = el("span"); st.appendChild(status(r.status));
      if (r.status === "running") { st.appendChild(document.createTextNode(" ")); add(st, "span", "muted", "(live)"); }
      cell(tr, st, "status").style.whiteSpace = "nowrap";
      cell(tr, r.passed === null || r.passed === undefined ? "–" : r.passed + " passed, " + (r.failed || 0) + " failed");
      cell(tr, r.platform || "–");
      cell(tr, (r.hosts || []).join(", ") || "–").style.whiteSpace = "nowrap";
      cell(tr, duration(r.duration_s)); cell(tr, r.id, "mono");
    });
    if (!data.runs.length) add(app, "p", "muted", "No run matches these filters.");
    go.addEventListener("click", function () {
      var q = selected().map(function (id) { return "run=" + encodeURIComponent(id); }).join("&");
      window.location.href = "/compare?" + q;
    });
    add(app, "h2", null, "Searches and sweeps");
    if (!data.records.length) { add(app, "p", "muted", "None in this results directory."); return; }
    var rb = table(app, ["created", "kind", "scenario", "status", "trials", "record"], "records");
    data.records.forEach(function (r) {
      var tr = add(rb, "tr");
      cell(tr, dateText(r.created)); cell(tr, r.kind); cell(tr, r.scenario); cell(tr, r.status); cell(tr, r.trials);
      var a = el("span"); link(a, "/records/" + encodeURIComponent(r.kind) + "/" + encodeURIComponent(r.id), r.id);
      cell(tr, a, "mono");
    });
  }

  function recordPage() {
    var rec = data.record;
    link(app, "/", "← all runs");
    add(app, "h1", null, data.record_kind + ": " + (rec.scenario || data.id));
    var facts = [];
    Object.keys(rec).forEach(function (k) {
      var v = rec[k];
      if (k !== "trials" && (v === null || typeof v !== "object"))
        facts.push([k, /^(created|started|ended)$/.test(k) && typeof v === "number" ? dateText(v) : v]);
    });
    var kv = table(app, ["field", "value"]);
    kv.parentNode.classList.add("kv");
    facts.forEach(function (p) { var tr = add(kv, "tr"); cell(tr, p[0]); cell(tr, p[1]); });
    var trials = Array.isArray(rec.trials) ? rec.trials : [];
    add(app, "h2", null, "Trials (" + trials.length + ")");
    var keys = [];
    trials.forEach(function (t) {
      Object.keys(t).forEach(function (k) {
        if (keys.indexOf(k) < 0 && (t[k] === null || typeof t[k] !== "object")) keys.push(k);
      });
    });
    var tb = table(app, keys, "trials");
    trials.forEach(function (t) {
      var tr = add(tb, "tr");
      keys.forEach(function (k) {
        if (k === "run_id" && t[k]) { var s = el("span"); link(s, runHref(t[k]), t[k]); cell(tr, s, "mono"); }
        else cell(tr, t[k]);
      });
    });
  }

  if (data.kind === "record") recordPage(); else runsPage();
  document.body.dataset.rendered = "true";
})();
