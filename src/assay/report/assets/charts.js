/* assay charts: small canvas line charts written for these reports, no dependencies.
 * A Group links the charts that share a time axis: one legend, one crosshair, one zoom
 * (drag across a chart to zoom, double-click to reset). Text goes into the page only through
 * textContent, never as markup. */
"use strict";
var AssayCharts = (function () {
  var PALETTE = ["#2563eb", "#e8590c", "#2f9e44", "#c2255c", "#7048e8", "#0c8599", "#b08900",
    "#495057", "#f06595", "#1098ad", "#5c940d", "#862e9c", "#fd7e14", "#364fc7", "#087f5b",
    "#a61e4d"];
  var DASHES = [[], [7, 4], [2, 3], [9, 3, 2, 3]];
  var MARGIN = { l: 60, r: 14, t: 22, b: 26 };
  // platform health (report.py platform band states): the strip above a chart's plot
  var STRIP = { ok: "#2da44e", warn: "#d4a72c", err: "#cf222e", gone: "#8c959f" }, STRIP_H = 6;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function pad2(n) { return (n < 10 ? "0" : "") + n; }
  function fmtTime(s) {
    var neg = s < 0; s = Math.round(Math.abs(s));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    return (neg ? "-" : "") + (h ? h + ":" + pad2(m) + ":" + pad2(sec) : m + ":" + pad2(sec));
  }
  function fmtNum(v) {
    if (v === null || v === undefined || !isFinite(v)) return "–";
    var a = Math.abs(v);
    if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 0 : 1) + "M";
    if (a >= 1e4) return (v / 1e3).toFixed(a >= 1e5 ? 0 : 1) + "k";
    if (a >= 100) return v.toFixed(0);
    if (a >= 10) return String(+v.toFixed(1));
    if (a >= 1) return String(+v.toFixed(2));
    if (a === 0) return "0";
    return v.toPrecision(2);
  }
  function fmtMs(v) {
    if (v === null || v === undefined || !isFinite(v)) return "–";
    if (v < 1) return +(v * 1000).toPrecision(3) + "µs";
    if (v < 1000) return +v.toPrecision(3) + "ms";
    return +(v / 1000).toPrecision(3) + "s";
  }
  function niceStep(span, n) {
    var raw = span / Math.max(n, 1);
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var r = raw / mag;
    return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10) * mag;
  }
  function linTicks(lo, hi, n) {
    var st = niceStep(hi - lo || 1, n), out = [];
    for (var v = Math.ceil(lo / st) * st; v <= hi + st * 1e-9; v += st) out.push(+v.toPrecision(12));
    return out;
  }
  function timeTicks(lo, hi, n) {
    var steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
      43200, 86400], st = steps[steps.length - 1];
    for (var i = 0; i < steps.length; i++) if ((hi - lo) / steps[i] <= n) { st = steps[i]; break; }
    var out = [];
    for (var v = Math.ceil(lo / st) * st; v <= hi + 1e-9; v += st) out.push(v);
    return out;
  }
  function logTicks(lo, hi) {
    var out = [], a = Math.floor(Math.log10(lo)), b = Math.ceil(Math.log10(hi));
    for (var e = a; e <= b; e++) {
      var base = Math.pow(10, e);
      out.push(base);
      if (b - a <= 2) { out.push(2 * base); out.push(5 * base); }
    }
    return out.filter(function (v) { return v >= lo * 0.999 && v <= hi * 1.001; });
  }
  function nearest(xs, x) {  // index of the point closest to x (xs sorted)
    var lo = 0, hi = xs.length - 1;
    if (hi < 0) return -1;
    while (hi - lo > 1) { var mid = (lo + hi) >> 1; if (xs[mid] < x) lo = mid; else hi = mid; }
    return Math.abs(xs[lo] - x) <= Math.abs(xs[hi] - x) ? lo : hi;
  }
  // the runs of points a line joins: a missing value, or a step in time far wider than the
  // series' own (no sample there: a host's IO froze), lifts the pen; a line across it would
  // draw values nobody measured
  function segments(xs, ys, log) {
    var steps = [];
    for (var i = 1; i < xs.length && steps.length < 64; i++) steps.push(xs[i] - xs[i - 1]);
    steps.sort(function (a, b) { return a - b; });
    var step = steps.length ? steps[Math.floor(steps.length / 2)] : 0;
    var out = [], run = null;
    for (var j = 0; j < xs.length; j++) {
      var v = ys[j];
      if (v === null || v === undefined || (log && v <= 0)) { run = null; continue; }
      if (run && step > 0 && xs[j] - xs[run[run.length - 1]] > 2.5 * step) run = null;
      if (!run) { run = []; out.push(run); }
      run.push(j);
    }
    return out;
  }
  function swatch(color, dash) {
    var c = document.createElement("canvas");
    c.width = 22; c.height = 10; c.className = "swatch-line";
    c.style.width = "22px"; c.style.height = "10px"; c.style.marginRight = "5px";
    c.style.verticalAlign = "-1px";
    var ctx = c.getContext("2d");
    ctx.strokeStyle = color; ctx.lineWidth = 2.5; ctx.setLineDash(dash || []);
    ctx.beginPath(); ctx.moveTo(1, 5); ctx.lineTo(21, 5); ctx.stroke();
    return c;
  }

  /* items: [{key, label, color, dash}] shared by the group's charts */
  function Group(items) {
    this.items = items;
    this.hidden = {};
    this.range = null;  // [t0, t1] when zoomed
    this.charts = [];
    var self = this, pending = false;
    window.addEventListener("resize", function () {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(function () { pending = false; self.redraw(); });
    });
  }
  Group.prototype.redraw = function () { this.charts.forEach(function (c) { c.draw(); }); };
  Group.prototype.setRange = function (r) { this.range = r; this.redraw(); };
  Group.prototype.hover = function (t, source) {
    this.charts.forEach(function (c) { if (c.opts.xKind === "time") c.crosshair(t, c === source); });
  };
  Group.prototype.legend = function (container) {
    var self = this, box = el("div", "legend");
    this.items.forEach(function (it) {
      var s = el("span");
      s.dataset.key = it.key;
      s.appendChild(swatch(it.color, it.dash));
      s.appendChild(document.createTextNode(it.label));
      s.title = "click to show or hide";
      s.addEventListener("click", function () {
        self.hidden[it.key] = !self.hidden[it.key];
        s.classList.toggle("off", !!self.hidden[it.key]);
        self.redraw();
      });
      box.appendChild(s);
    });
    container.appendChild(box);
    return box;
  };

  /* opts: {title, fmt, log, allowLog, xKind: "time"|"nines", series: [{key, x, y}],
   *        bands: [{name, start, end, kind}], events: [{name, start, end, outcome, detail}]} */
  function Chart(group, container, opts) {
    this.g = group; this.opts = opts; this.log = !!opts.log;
    this.byKey = {};
    var self = this;
    group.items.forEach(function (it) { self.byKey[it.key] = it; });
    var box = el("div", "chart");
    box.dataset.chart = opts.id || opts.title;
    var head = el("div", "head"), tools = el("div", "tools");
    head.appendChild(el("span", "title", opts.title));
    if (opts.allowLog) {
      var b = el("button", null, this.log ? "linear" : "log");
      b.type = "button";
      b.addEventListener("click", function () {
        self.log = !self.log; b.textContent = self.log ? "linear" : "log"; self.draw();
      });
      tools.appendChild(b);
    }
    head.appendChild(tools);
    box.appendChild(head);
    this.plot = el("div", "plot");
    this.canvas = el("canvas", "base");
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute("aria-label", opts.title);
    this.overlay = el("canvas", "overlay");
    this.markers = el("div", "markers");
    this.tip = el("div", "tooltip");
    [this.canvas, this.overlay, this.markers, this.tip].forEach(function (e) { self.plot.appendChild(e); });
    box.appendChild(this.plot);
    container.appendChild(box);
    this.box = box;
    group.charts.push(this);
    this._bind();
  }

  Chart.prototype.fullX = function () {
    if (this.opts.xDomain) return this.opts.xDomain.slice();  // one axis shared with other charts
    var lo = Infinity, hi = -Infinity;
    this.opts.series.forEach(function (s) {
      if (s.x.length) { lo = Math.min(lo, s.x[0]); hi = Math.max(hi, s.x[s.x.length - 1]); }
    });
    if (this.opts.xKind === "time") {
      lo = Math.min(lo, 0);
      (this.opts.bands || []).forEach(function (b) { hi = Math.max(hi, b.end); });
    }
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    if (hi <= lo) hi = lo + 1;
    return [lo, hi];
  };
  Chart.prototype.xRange = function () {
    return this.opts.xKind === "time" && this.g.range ? this.g.range : this.fullX();
  };
  Chart.prototype.visible = function () {
    var g = this.g;
    return this.opts.series.filter(function (s) { return !g.hidden[s.key]; });
  };

  Chart.prototype.draw = function () {
    var w = this.plot.clientWidth, h = this.plot.clientHeight;
    if (!w || !h) return;
    var dpr = window.devicePixelRatio || 1, m = MARGIN, self = this;
    [this.canvas, this.overlay].forEach(function (c) { c.width = Math.round(w * dpr); c.height = Math.round(h * dpr); });
    var ctx = this.canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    var xr = this.xRange(), x0 = xr[0], x1 = xr[1], log = this.log;
    var ymin = Infinity, ymax = -Infinity, vis = this.visible(), g0 = this.g;
    vis.forEach(function (s) {
      for (var i = 0; i < s.x.length; i++) {
        var v = s.y[i];
        if (v === null || s.x[i] < x0 || s.x[i] > x1 || (log && v <= 0)) continue;
        if (v < ymin) ymin = v;
        if (v > ymax) ymax = v;
      }
    });
    var lo, hi, ticks, hb = this.opts.hbands || [];
    hb.forEach(function (b) { if (!g0.hidden[b.key]) { ymin = Math.min(ymin, b.lo); ymax = Math.max(ymax, b.hi); } });
    if (!isFinite(ymax)) { ymin = log ? 0.1 : 0; ymax = 1; }
    if (log) {
      lo = Math.pow(10, Math.floor(Math.log10(ymin)));
      hi = Math.pow(10, Math.ceil(Math.log10(ymax)));
      if (hi <= lo) hi = lo * 10;
      ticks = logTicks(lo, hi);
    } else {
      lo = Math.min(0, ymin);
      ticks = linTicks(lo, ymax > lo ? ymax * 1.05 : lo + 1, 5);
      hi = Math.max(ticks[ticks.length - 1], ymax > 0 ? ymax * 1.05 : ymax);  // a flat line stays off the edge
    }
    var pw = w - m.l - m.r, ph = h - m.t - m.b;
    this.sx = function (x) { return m.l + (x - x0) / (x1 - x0) * pw; };
    this.ix = function (px) { return x0 + (px - m.l) / pw * (x1 - x0); };
    this.sy = log ? function (y) { return m.t + ph - (Math.log10(y) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) * ph; }
      : function (y) { return m.t + ph - (y - lo) / (hi - lo) * ph; };
    var sx = this.sx, sy = this.sy;
    ctx.font = "11px -apple-system, 'Segoe UI', Arial, sans-serif";
    // phase shading
    (this.opts.bands || []).forEach(function (b, i) {
      var a = Math.max(sx(b.start), m.l), z = Math.min(sx(b.end), m.l + pw);
      if (z <= a) return;
      ctx.fillStyle = b.kind === "warmup" ? "rgba(100,116,139,0.13)" : b.kind === "after" ?
        "rgba(100,116,139,0.08)" : b.kind === "during" ? "rgba(234,179,8,0.10)" :
        (i % 2 ? "rgba(37,99,235,0.04)" : "rgba(37,99,235,0.07)");
      ctx.fillRect(a, m.t, z - a, ph);
      ctx.fillStyle = "#64748b";
      if (ctx.measureText(b.name).width + 8 <= z - a) ctx.fillText(b.name, a + 4, m.t + ph - 6);  // whole, or not at all
    });
    // horizontal bands (X-Ray's 95 % band around a target rate), in the series' colour
    hb.forEach(function (b) {
      if (g0.hidden[b.key] || (log && b.lo <= 0)) return;
      var top = Math.max(sy(b.hi), m.t), bot = Math.min(sy(b.lo), m.t + ph);
      if (bot <= top) return;
      ctx.globalAlpha = 0.16; ctx.fillStyle = b.color; ctx.fillRect(m.l, top, pw, Math.max(bot - top, 1));
      ctx.globalAlpha = 1;
    });
    // grid and axes
    ctx.strokeStyle = "#eef0f3"; ctx.lineWidth = 1; ctx.fillStyle = "#616e7c";
    ctx.textAlign = "right"; ctx.textBaseline = "middle";
    var fmt = this.opts.fmt || fmtNum;
    ticks.forEach(function (v) {
      var y = Math.round(sy(v)) + 0.5;
      if (y < m.t - 1 || y > m.t + ph + 1) return;
      ctx.beginPath(); ctx.moveTo(m.l, y); ctx.lineTo(m.l + pw, y); ctx.stroke();
      ctx.fillText(fmt(v), m.l - 6, y);
    });
    ctx.textAlign = "center"; ctx.textBaseline = "top";
    var xt = this.opts.xKind === "time" ? timeTicks(x0, x1, Math.max(2, Math.floor(pw / 80))) : this.opts.xTicks(x0, x1);
    var xf = this.opts.xKind === "time" ? fmtTime : this.opts.xFmt;
    xt.forEach(function (v) {
      var x = Math.round(sx(v)) + 0.5;
      ctx.strokeStyle = "#f3f4f6";
      ctx.beginPath(); ctx.moveTo(x, m.t); ctx.lineTo(x, m.t + ph); ctx.stroke();
      ctx.fillText(xf(v), x, m.t + ph + 6);
    });
    ctx.strokeStyle = "#cbd2d9";
    ctx.beginPath(); ctx.moveTo(m.l, m.t + ph + 0.5); ctx.lineTo(m.l + pw, m.t + ph + 0.5); ctx.stroke();
    // the platform's health strip along the top of the plot, on this chart's own x scale
    (this.opts.strip || []).forEach(function (b) {
      var a = Math.max(sx(b[0]), m.l), z = Math.min(sx(b[1]), m.l + pw);
      if (z <= a) return;
      ctx.fillStyle = STRIP[b[2]] || STRIP.gone;
      ctx.fillRect(a, m.t - STRIP_H - 1, z - a, STRIP_H);
    });
    // event bands and lines
    var evs = (this.opts.events || []).filter(function (e) { return e.start <= x1 && (e.end || e.start) >= x0; });
    evs.forEach(function (e) {
      var bad = /fail|error|abort|timeout|unfinished/i.test(e.outcome || "");
      var a = sx(e.start), z = e.end !== null && e.end !== undefined ? sx(e.end) : a;
      if (z - a >= 1) {
        ctx.fillStyle = bad ? "rgba(198,40,40,0.10)" : "rgba(79,70,229,0.07)";
        ctx.fillRect(Math.max(a, m.l), m.t, Math.min(z, m.l + pw) - Math.max(a, m.l), ph);
      }
      if (a >= m.l && a <= m.l + pw) {
        ctx.strokeStyle = bad ? "#c62828" : "#4f46e5"; ctx.setLineDash([4, 3]);
        ctx.beginPath(); ctx.moveTo(Math.round(a) + 0.5, m.t); ctx.lineTo(Math.round(a) + 0.5, m.t + ph); ctx.stroke();
        ctx.setLineDash([]);
      }
    });
    // the lines
    ctx.save();
    ctx.beginPath(); ctx.rect(m.l, m.t - 2, pw, ph + 4); ctx.clip();
    ctx.lineWidth = 1.5; ctx.lineJoin = "round";
    vis.forEach(function (s) {
      var it = self.byKey[s.key] || {};
      ctx.strokeStyle = it.color || "#333"; ctx.setLineDash(it.dash || []);
      ctx.beginPath();
      segments(s.x, s.y, log).forEach(function (run) {
        run.forEach(function (i, k) {
          var x = sx(s.x[i]), y = sy(s.y[i]);
          if (k) ctx.lineTo(x, y); else ctx.moveTo(x, y);
        });
      });
      ctx.stroke();
    });
    ctx.restore();
    // event labels as DOM (readable, hoverable, testable)
    this.markers.textContent = "";
    var dense = evs.length > pw / 70;
    // labels of steps close in time go to the next row down instead of covering each other
    var rows = [];
    ctx.save();
    ctx.font = "10.5px sans-serif";  // .event-marker's
    evs.slice().sort(function (p, q) { return p.start - q.start; }).forEach(function (e) {
      var a = sx(e.start);
      if (a < m.l || a > m.l + pw) return;
      var bad = /fail|error|abort|timeout|unfinished/i.test(e.outcome || "");
      var d = el("div", "event-marker" + (bad ? " failed" : ""), dense ? "▾" : e.name);
      var half = Math.min(140, ctx.measureText(dense ? "▾" : e.name).width + 8) / 2 + 2;
      var row = 0;
      while (row < rows.length && rows[row] > a - half) row++;
      if (row > 2) { row = 0; d.textContent = "▾"; }  // a crowd: its name stays in the tooltip
      rows[row] = a + half;
      d.style.left = a + "px";
      d.style.top = (2 + 15 * row) + "px";
      d.title = e.name + (e.action ? " (" + e.action + ")" : "") + " at " + fmtTime(e.start) +
        (e.end !== null && e.end !== undefined ? "–" + fmtTime(e.end) : "") +
        (e.outcome ? ": " + e.outcome : "") + (e.detail ? " — " + e.detail : "");
      d.dataset.name = e.name;
      self.markers.appendChild(d);
    });
    ctx.restore();
    this.drawn = true;
  };

  Chart.prototype.crosshair = function (t, withTip) {
    var ctx = this.overlay.getContext("2d"), dpr = window.devicePixelRatio || 1, m = MARGIN;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, this.overlay.width, this.overlay.height);
    this.tip.style.display = "none";
    if (t === null || !this.sx) return;
    var x = this.sx(t), h = this.plot.clientHeight, w = this.plot.clientWidth;
    if (x < m.l || x > w - m.r) return;
    ctx.strokeStyle = "rgba(31,41,51,0.45)"; ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(Math.round(x) + 0.5, m.t); ctx.lineTo(Math.round(x) + 0.5, h - m.b); ctx.stroke();
    if (this.sel !== undefined && this.sel !== null) {
      ctx.fillStyle = "rgba(37,99,235,0.12)";
      ctx.fillRect(Math.min(this.sel, x), m.t, Math.abs(x - this.sel), h - m.t - m.b);
    }
    if (!withTip) return;
    var self = this, fmt = this.opts.fmt || fmtNum, rows = [];
    this.visible().forEach(function (s) {
      var i = nearest(s.x, t);
      if (i < 0 || s.y[i] === null) return;
      var it = self.byKey[s.key] || {};
      ctx.fillStyle = it.color || "#333";
      ctx.beginPath(); ctx.arc(self.sx(s.x[i]), self.sy(s.y[i]), 2.5, 0, 2 * Math.PI); ctx.fill();
      rows.push([it, s.y[i]]);
    });
    this.tip.textContent = "";
    var head = this.opts.xKind === "time" ? fmtTime(t) : this.opts.xFmt(t);
    this.tip.appendChild(el("div", "muted", head));
    rows.slice(0, 16).forEach(function (r) {
      var line = el("div");
      var sw = el("span", "swatch"); sw.style.background = r[0].color;
      line.appendChild(sw);
      line.appendChild(document.createTextNode(r[0].label + "  " + fmt(r[1])));
      self.tip.appendChild(line);
    });
    this.tip.style.display = "block";
    var left = x + 14;
    if (left + this.tip.offsetWidth > w) left = x - 14 - this.tip.offsetWidth;
    this.tip.style.left = Math.max(0, left) + "px";
    this.tip.style.top = m.t + 4 + "px";
  };

  Chart.prototype._bind = function () {
    var self = this, ov = this.overlay;
    function tAt(ev) { var r = ov.getBoundingClientRect(); return self.ix(ev.clientX - r.left); }
    ov.addEventListener("mousemove", function (ev) {
      if (!self.ix) return;
      var t = tAt(ev);
      if (self.opts.xKind === "time") self.g.hover(t, self); else self.crosshair(t, true);
    });
    ov.addEventListener("mouseleave", function () {
      self.sel = null;
      if (self.opts.xKind === "time") self.g.hover(null, self); else self.crosshair(null, false);
    });
    if (this.opts.xKind !== "time") return;
    ov.addEventListener("mousedown", function (ev) {
      var r = ov.getBoundingClientRect(); self.sel = ev.clientX - r.left; self.selT = tAt(ev);
    });
    ov.addEventListener("mouseup", function (ev) {
      var r = ov.getBoundingClientRect(), px = ev.clientX - r.left;
      if (self.sel !== null && self.sel !== undefined && Math.abs(px - self.sel) > 6) {
        var t = tAt(ev), a = Math.min(t, self.selT), b = Math.max(t, self.selT);
        self.sel = null;
        self.g.setRange([a, b]);
      }
      self.sel = null;
    });
    ov.addEventListener("dblclick", function () { self.g.setRange(null); });
  };

  /* the "nines" axis of a latency-by-percentile chart: x = -log10(1 - p) */
  function nines(p) { return p >= 100 ? 6 : Math.min(6, -Math.log10(1 - p / 100)); }
  function ninesTicks(lo, hi) {
    return [0, 1, 2, 3, 4, 5, 6].filter(function (v) { return v >= lo - 1e-9 && v <= hi + 1e-9; });
  }
  function ninesFmt(x) {
    var p = 100 * (1 - Math.pow(10, -x));
    return x === 0 ? "0%" : x >= 6 ? "max" : +p.toPrecision(Math.max(2, Math.round(x) + 1)) + "%";
  }

  return {
    PALETTE: PALETTE, DASHES: DASHES, Group: Group, Chart: Chart, el: el,
    fmtTime: fmtTime, fmtNum: fmtNum, fmtMs: fmtMs, nines: nines, ninesTicks: ninesTicks,
    ninesFmt: ninesFmt, swatch: swatch, segments: segments
  };
})();
