/* assay report page: builds the run report or the comparison from the embedded JSON.
 * Every piece of run data reaches the page through textContent (AssayCharts.el), never as
 * markup, so a scenario named like a script tag is shown, not run. */
"use strict";
(function () {
  var C = AssayCharts, el = C.el;
  var data = JSON.parse(document.getElementById("assay-data").textContent);
  var app = document.getElementById("app");
  app.textContent = "";
  var METRICS = [
    { key: "iops", title: "IOPS", fmt: C.fmtNum },
    { key: "mbps", title: "Throughput (MB/s)", fmt: C.fmtNum },
    { key: "lat_avg_ms", title: "Latency, average", fmt: C.fmtMs, log: true },
    { key: "lat_p99_ms", title: "Latency, 99th percentile", fmt: C.fmtMs, log: true }
  ];

  function add(parent, tag, cls, text) { var e = el(tag, cls, text); parent.appendChild(e); return e; }
  function num(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return "–";
    return Number(v).toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }
  function metricFmt(metric, v) {
    return /^lat_/.test(metric) ? C.fmtMs(v) : metric === "behind" ? num(v, 2) + " s" : num(v, 1);
  }
  function table(parent, headers, numeric) {
    var t = add(parent, "table"), tr = add(add(t, "thead"), "tr");
    headers.forEach(function (h, i) { add(tr, "th", numeric && numeric[i] ? "num" : null, h); });
    return add(t, "tbody");
  }
  function row(tbody, cells, numeric) {
    var tr = add(tbody, "tr");
    cells.forEach(function (c, i) {
      var td = add(tr, "td", numeric && numeric[i] ? "num" : null);
      if (c instanceof Node) td.appendChild(c); else td.textContent = c === null || c === undefined ? "–" : String(c);
    });
    return tr;
  }
  function mark(ok) { return el("span", ok ? "ok" : "bad", ok ? "✓ pass" : "✗ fail"); }
  function dateText(epoch) {
    if (!epoch) return "–";
    var d = new Date(epoch * 1000);
    return d.getFullYear() + "-" + ("0" + (d.getMonth() + 1)).slice(-2) + "-" + ("0" + d.getDate()).slice(-2) +
      " " + ("0" + d.getHours()).slice(-2) + ":" + ("0" + d.getMinutes()).slice(-2);
  }
  function kvTable(parent, pairs) {
    var body = table(parent, ["fact", "value"]);
    body.parentNode.classList.add("kv");
    pairs.forEach(function (p) { row(body, [p[0], p[1]]); });
  }
  function colours(keys) {
    var out = {};
    keys.forEach(function (k, i) { out[k] = C.PALETTE[i % C.PALETTE.length]; });
    return out;
  }
  function withSwatch(text, color) {
    var s = el("span"), sw = el("span", "swatch");
    sw.style.background = color;
    s.appendChild(sw); s.appendChild(document.createTextNode(text));
    return s;
  }
  function chartGrid(parent, group, seriesFor, bands, events, hbands) {
    var grid = add(parent, "div", "charts");
    METRICS.forEach(function (m) {
      new C.Chart(group, grid, { id: m.key, title: m.title, fmt: m.fmt, log: m.log, allowLog: true,
        xKind: "time", series: seriesFor(m.key), bands: bands, events: events,
        strip: data.platform ? data.platform.band : null,
        hbands: m.key === "iops" ? (hbands || []) : [] });
    });
  }
  var HOST_CHARTS = [
    { id: "host-cpu", title: "Host CPU %", keys: [["cpu_pct", "busy"], ["cpu_user_pct", "user"], ["cpu_system_pct", "system"], ["cpu_iowait_pct", "iowait"]] },
    { id: "host-mem", title: "Host memory used %", keys: [["mem_used_pct", "memory"]] },
    { id: "host-net", title: "Host network MB/s (all NICs)", keys: [["net_rx_mbps", "received"], ["net_tx_mbps", "sent"]] }
  ];
  // the platform's own state (Ceph): its series under a health strip, on the IO charts' x axis
  var PLATFORM_CHARTS = [["pgs", "PGs not active+clean", ["not_clean"]],
    ["objects", "Degraded / misplaced objects", ["degraded_objects", "misplaced_objects"]],
    ["recovery", "Recovery MB/s", ["recovery_mbps"]],
    ["client", "Client IO/s, as the platform reports it", ["client_iops"]]];
  function platformSection(p, bands, events, io) {
    add(app, "h2", null, "Platform state").id = "platform";
    add(app, "p", "hint", "The platform's own view each second, on the run's clock and the IO charts' time axis. The strip along the top of every chart, here and above: green HEALTH_OK with every PG active+clean; amber a warning, degraded, recovering or peering; red HEALTH_ERR; grey no answer. Dashed lines: timeline steps.");
    var keys = Object.keys(p.labels);
    var group = new C.Group(keys.map(function (k, i) {
      return { key: "platform:" + k, label: p.labels[k], color: C.PALETTE[(i + 3) % C.PALETTE.length], dash: [] };
    }));
    group.legend(app);
    var grid = add(app, "div", "charts");
    PLATFORM_CHARTS.forEach(function (c) {
      new C.Chart(group, grid, { id: "platform-" + c[0], title: c[1], fmt: C.fmtNum, allowLog: false, xKind: "time",
        series: c[2].map(function (k) { return { key: "platform:" + k, x: p.series[k][0], y: p.series[k][1] }; }),
        bands: bands, events: events, strip: p.band, xDomain: io && io.charts.length ? io.charts[0].fullX() : null });
    });
    if (io) {  // one zoom for both: a drag on either redraws the other on the same range
      var ioSet = io.setRange.bind(io), pSet = group.setRange.bind(group);
      io.setRange = function (r) { ioSet(r); pSet(r); };
      group.setRange = function (r) { pSet(r); ioSet(r); };
    }
  }
  function hostCharts(bands, events) {
    var hosts = Object.keys(data.hosts || {});
    add(app, "h2", null, "Hosts").id = "hosts";
    if (!hosts.length) { add(app, "p", "muted", "No host utilisation was recorded for this run."); return null; }
    add(app, "p", "hint", "Utilisation of every host of the run, each second, on the same clock as the IO above (X-Ray charts cluster CPU and network; Jetstress reports host CPU and memory).");
    var items = [], n = 0;
    hosts.forEach(function (h) {
      HOST_CHARTS.forEach(function (c) {
        c.keys.forEach(function (k) {
          items.push({ key: h + ":" + k[0], label: (hosts.length > 1 ? h + " " : "") + k[1], color: C.PALETTE[n++ % C.PALETTE.length], dash: [] });
        });
      });
    });
    var group = new C.Group(items);
    group.legend(app);
    var grid = add(app, "div", "charts");
    HOST_CHARTS.forEach(function (c) {
      var series = [];
      hosts.forEach(function (h) {
        c.keys.forEach(function (k) {
          var s = data.hosts[h][k[0]];
          if (s) series.push({ key: h + ":" + k[0], x: s[0], y: s[1] });
        });
      });
      new C.Chart(group, grid, { id: c.id, title: c.title, fmt: C.fmtNum, allowLog: false, xKind: "time",
        series: series, bands: bands, events: events });
    });
    return group;
  }
  // a cluster run: each host's own lines, a colour per host, a dash per component; one
  // legend entry per host and component switches it (a lost host's line ends at its loss)
  var DASHES = [[], [6, 3], [2, 2], [8, 3, 2, 3]];
  function hostIoCharts(bands, events) {
    var hosts = Object.keys(data.host_io || {});
    if (!hosts.length) return null;
    add(app, "h3", null, "Per host").id = "per-host-charts";
    var lost = (data.cluster && data.cluster.lost) || {};
    add(app, "p", "hint", "Each host's own series, on the cluster's clock: a colour per host, a dash per component; click a legend entry to hide or show it." +
      (Object.keys(lost).length ? " A lost host's line ends at its loss (" + Object.keys(lost).map(function (h) { return h + " at " + lost[h].t + " s"; }).join(", ") + ")." : ""));
    var items = [], comps = {};
    hosts.forEach(function (h, hi) {
      Object.keys(data.host_io[h]).forEach(function (c) {
        if (!(c in comps)) comps[c] = Object.keys(comps).length;
        items.push({ key: h + "|" + c, label: h + " " + c + (lost[h] ? " (lost)" : ""),
          color: C.PALETTE[hi % C.PALETTE.length], dash: DASHES[comps[c] % DASHES.length] });
      });
    });
    var group = new C.Group(items);
    group.legend(app).id = "per-host-legend";
    var grid = add(app, "div", "charts");
    METRICS.forEach(function (m) {
      var series = [];
      hosts.forEach(function (h) {
        Object.keys(data.host_io[h]).forEach(function (c) {
          var s = data.host_io[h][c][m.key];
          if (s) series.push({ key: h + "|" + c, x: s[0], y: s[1] });
        });
      });
      new C.Chart(group, grid, { id: "per-host-" + m.key, title: m.title + ", per host", fmt: m.fmt, log: m.log,
        allowLog: true, xKind: "time", series: series, bands: bands, events: events });
    });
    return group;
  }
  function integrity(d) {
    add(app, "h2", null, "Data integrity").id = "integrity";
    var st = d.settings || {}, files = d.files || [];
    add(app, "p", "hint", "Integrity mode: " + files.map(function (f) {
      return f.workload + " (" + num(f.blocks, 0) + " blocks of " + num(f.block_size, 0) + " B, " + num(f.acknowledged, 0) + " acknowledged writes, " + num(f.write_errors, 0) + " failed)";
    }).join("; ") + " at " + num(st.rate, 0) + " writes/s each. Lost: no block where an acknowledged write should be; stale: an older generation than acknowledged; corrupt: bad checksum or address; unreadable: the read failed. Status: " + d.status + (d.reason ? " (" + d.reason + ")" : "") + ".");
    var kinds = ["lost", "stale", "corrupt", "unreadable"], numeric = [false, true, false, true, true, true, true, true, true];
    var tb = table(app, ["pass", "t", "status", "checked", "lost", "stale", "corrupt", "unreadable", "MB/s"], numeric);
    tb.parentNode.id = "integrity-passes";
    (d.passes || []).forEach(function (p) {
      row(tb, [p.label, p.t === undefined ? "–" : C.fmtTime(p.t), el("span", p.status === "completed" ? "ok" : "bad", p.status), num(p.checked, 0)].concat(kinds.map(function (k) {
        return p[k] ? el("span", "bad", num(p[k], 0)) : "0";
      })).concat([num(p.mbps, 1)]), numeric);
    });
    (d.passes || []).forEach(function (p) {
      Object.keys(p.workloads || {}).forEach(function (w) {
        var offs = p.workloads[w].offsets || {};
        kinds.forEach(function (k) {
          if (offs[k] && offs[k].length) add(app, "p", "muted", p.label + ": " + w + " " + k + " at byte offsets " + offs[k].join(", ") + (p.workloads[w][k] > offs[k].length ? " (first " + offs[k].length + ")" : ""));
        });
      });
      var sums = p.data_files;
      if (!sums) return;
      add(app, "p", sums.corrupt || sums.unreadable ? "bad" : "hint", p.label + ": data files (fio's verify headers, Jetstress' checksum pass): " + num(sums.checked, 0) + " of " + num(sums.blocks, 0) + " blocks in " + num(sums.files, 0) + " files, " + num(sums.corrupt, 0) + " corrupt, " + num(sums.unreadable, 0) + " unreadable").className += " data-files";
      Object.keys(sums.workloads || {}).forEach(function (w) {
        var offs = sums.workloads[w].offsets || [];
        if (offs.length) add(app, "p", "muted", p.label + ": " + w + " data " + offs.map(function (o) {
          return o.file + " at " + o.offset + " (" + (o.fault || o.state) + ")";
        }).join(", "));
      });
    });
  }

  function footer() {
    var f = add(app, "footer", null, "Generated by " + data.generator + " on " + dateText(data.generated) +
      " from the stored results; one file, works offline.");
    return f;
  }

  /* ---------------------------------------------------------------- run report */
  // a cluster run: the cluster's line first, then one line per host, shown on demand
  function clusterSection(c) {
    add(app, "h2", null, "Cluster");
    var line = c.hosts + " hosts, " + c.active + " active at the end";
    if (c.worst_skew_ms !== null && c.worst_skew_ms !== undefined) line += "; start skew worst " + num(c.worst_skew_ms, 1) + " ms";
    add(app, "p", "cluster-line", line).id = "cluster";
    (c.thresholds || []).forEach(function (t) {
      var p = add(app, "p");
      p.appendChild(mark(t.passed));
      p.appendChild(document.createTextNode(" " + t.expr + ": " + (t.observed === null ? "–" : num(t.observed, 1) + " " + (t.unit || "ms"))));
    });
    Object.keys(c.lost || {}).forEach(function (h) {
      var l = c.lost[h];
      add(app, "div", "warning", "Host lost: " + h + " at " + l.t + " s (" + l.phase + "): " + l.reason);
    });
    (c.restarts || []).forEach(function (line) { add(app, "div", "note", line); });
    Object.keys(c.not_graded || {}).forEach(function (h) {
      add(app, "div", "warning", "Not graded on " + h + ": " + c.not_graded[h].join("; "));
    });
    var d = add(app, "details", "hosts");
    d.id = "per-host";
    var graded = c.rows.some(function (r) { return r.graded !== false; });
    add(d, "summary", null, "Per-host lines (" + c.rows.length + " hosts, " +
      (graded ? "each graded on its own)" : "no threshold of their own: each_host.)"));
    var due = c.rows.some(function (r) { return r.due_p99_ms !== null && r.due_p99_ms !== undefined; });
    var nh = [false, false, true, true].concat(due ? [true] : [], [true, false, false]);
    var body = table(d, ["result", "host", "IO/s", "worst p99"].concat(due ? ["p99 from due"] : [],
      ["late", "state", "failed"]), nh);
    c.rows.forEach(function (r) {
      row(body, [r.graded === false ? el("span", "muted", "–") : mark(r.passed), r.host, num(r.iops, 1), C.fmtMs(r.p99_ms)].concat(due ? [C.fmtMs(r.due_p99_ms)] : []).concat([
        r.late_ms === null || r.late_ms === undefined ? "–" : (r.late_ms < 0 ? "" : "+") + num(r.late_ms, 1) + " ms",
        r.lost ? "lost at " + r.lost.t + " s" + (r.back_s === null || r.back_s === undefined ? "" : ", back at " + r.back_s + " s") : "active",
        r.failed.map(function (f) { return f.expr + (f.note ? " (" + f.note + ")" : ""); }).join("; ")]), nh);
    });
  }

  function runReport() {
    var run = data.run, stats = data.stats, comps = data.components, col = colours(comps);
    var status = run.status || "unknown";
    document.title = "assay: " + (run.scenario.name || run.id) + " (" + status + ")";
    var banner = add(app, "section", "banner " + status);
    banner.id = "verdict";
    add(banner, "div", "verdict", run.headline || status.toUpperCase());
    var what = add(banner, "div", "what");
    add(what, "h1", "scenario-name", run.scenario.name || "(unnamed scenario)");
    if (run.scenario.description) add(what, "p", "muted", run.scenario.description);
    var facts = add(what, "div", "facts");
    function fact(label, value) { var s = add(facts, "span"); s.appendChild(document.createTextNode(label + " ")); add(s, "b", null, value); }
    var v = run.verdict || {};
    fact("thresholds", status === "completed" ? "none: nothing graded" : (v.passed || 0) + " passed, " + (v.failed || 0) + " failed" + (v.not_graded ? ", " + v.not_graded + " not graded" : ""));
    fact("measured", C.fmtTime(run.window[1] - run.window[0]) + " after " + C.fmtTime(run.window[0]) + " warm-up");
    if (run.graded_s !== null && run.graded_s !== undefined) fact("graded", run.graded_s.toFixed(1) + " s");
    fact("started", dateText(run.started));
    var tgt = {};
    data.target.forEach(function (p) { tgt[p[0]] = p[1]; });
    fact("target", [tgt.platform, tgt.fstype, tgt.path].filter(Boolean).join(" · "));
    fact("run", run.id);
    if (run.reason) add(app, "div", "reason", "Reason: " + run.reason);
    (run.warnings || []).forEach(function (w) { add(app, "div", "warning", "Warning: " + w); });

    add(app, "h2", null, "Thresholds");
    if (!data.thresholds.length) add(app, "p", "muted", "No thresholds were declared or evaluated: nothing was graded.");
    else {
      var nt = [false, false, false, true, true, false];
      var tb = table(app, ["result", "threshold", "component", "observed", "bound", "source"], nt);
      tb.parentNode.id = "thresholds";
      data.thresholds.forEach(function (r) {
        row(tb, [r.graded === false ? el("span", "muted", "not graded") : mark(r.passed), el("code", null, r.expr), withSwatch(r.component, col[r.component] || "#999"),
          metricFmt(r.metric, r.observed), metricFmt(r.metric, r.bound), [r.source, r.note].filter(Boolean).join("; ")], nt);
      });
    }

    if (data.cluster) clusterSection(data.cluster);

    add(app, "h2", null, "Workloads");
    var byWl = {};
    Object.keys(stats).forEach(function (c) { var w = c.split(".")[0]; (byWl[w] = byWl[w] || []).push(c); });
    var nw = [false, true, true, true, true, true, true, true, true, true, true];
    Object.keys(byWl).forEach(function (w) {
      add(app, "h3", null, "Workload " + w);
      var body = table(app, ["component", "target IO/s", "achieved IO/s", "%", "MB/s", "read avg", "read p99",
        "read max", "write avg", "write p99", "write max"], nw);
      body.parentNode.className = "workload";
      byWl[w].forEach(function (c) {
        var s = stats[c], read = /\.read$/.test(c);
        var lat = [C.fmtMs(s.lat_avg_ms), C.fmtMs(s.lat_p99_ms), C.fmtMs(s.lat_max_ms)];
        var pct = s.achieved_pct === null || s.achieved_pct === undefined ? null : s.achieved_pct;
        var pctCell = el("span", pct !== null && pct < 99 ? "bad" : null, pct === null ? "–" : num(pct, 1));
        row(body, [withSwatch(c.split(".").slice(1).join("."), col[c] || "#999"), num(s.target_iops, 1), num(s.iops, 1),
          pctCell, num(s.mbps, 2)].concat(read ? lat.concat(["", "", ""]) : ["", "", ""].concat(lat)), nw);
      });
    });

    add(app, "h2", null, "Per second");
    var items = comps.map(function (c) { return { key: c, label: c, color: col[c], dash: [] }; });
    var group = new C.Group(items);
    group.legend(app);
    add(app, "p", "hint", "Shaded: warm-up and phases. Dashed lines: timeline steps. Drag across a chart to zoom, double-click to reset; click a legend entry to hide it.");
    chartGrid(app, group, function (metric) {
      return comps.filter(function (c) { return data.series[c]; }).map(function (c) {
        return { key: c, x: data.series[c][metric][0], y: data.series[c][metric][1] };
      });
    }, data.phases, data.steps, Object.keys(data.bands || {}).filter(function (c) { return data.series[c]; }).map(function (c) {
      return { key: c, lo: data.bands[c][0], hi: data.bands[c][1], color: col[c] || "#999" };
    }));
    if (Object.keys(data.bands || {}).length) add(app, "p", "hint", "Tinted band on the IOPS chart: X-Ray's 95 % band around each fixed-rate component's target, target ± 1.96·√target per 1 s sample.");
    var lostHosts = Object.keys((data.cluster && data.cluster.lost) || {});
    if (lostHosts.length) add(app, "p", "hint n-minus-1", "After " + lostHosts.map(function (h) { return h + "'s loss at " + data.cluster.lost[h].t + " s"; }).join(", ") +
      ", each component's target is the surviving hosts' share (N-1): the IOPS drop there is the lost host's load leaving, graded against the survivors' target, not a shortfall.");
    hostIoCharts(data.phases, data.steps);
    if (data.platform) platformSection(data.platform, data.phases, data.steps, group);
    var hgroup = hostCharts(data.phases, data.steps);

    add(app, "h3", null, "Timeline steps");
    if (!data.steps.length) add(app, "p", "muted", "No timeline steps ran in this run.");
    else {
      var sb = table(app, ["step", "action", "start", "end", "outcome", "detail"]);
      sb.parentNode.id = "steps";
      data.steps.forEach(function (s) {
        var bad = /fail|error|abort|timeout|unfinished/i.test(s.outcome);
        row(sb, [s.name, s.action, C.fmtTime(s.start), s.end === null ? "–" : C.fmtTime(s.end),
          el("span", bad ? "bad" : "ok", s.outcome || "–"), s.detail]);
      });
    }

    if (data.integrity) integrity(data.integrity);

    add(app, "h2", null, "Latency by percentile (measured window)");
    var curves = data.latency.curves, ck = Object.keys(curves);
    if (!ck.length) add(app, "p", "muted", "No latency histograms were stored for the measured window.");
    else {
      var pgroup = new C.Group(ck.map(function (c) { return { key: c, label: c, color: col[c] || "#999", dash: [] }; }));
      pgroup.legend(app);
      var wrap = add(app, "div");
      new C.Chart(pgroup, wrap, { id: "percentiles", title: "Latency (log) by percentile, merged histograms",
        fmt: C.fmtMs, log: true, allowLog: true, xKind: "nines", xTicks: C.ninesTicks, xFmt: C.ninesFmt,
        series: ck.map(function (c) {
          return { key: c, x: curves[c].map(function (p) { return C.nines(p[0]); }), y: curves[c].map(function (p) { return p[1]; }) };
        }) });
      if (data.latency.sampled) add(app, "p", "hint", "samples.ndjson is large: the histogram was merged from evenly spread slices of it.");
    }

    add(app, "h2", null, "Environment");
    var g2 = add(app, "div", "grid2"), left = add(g2, "div"), right = add(g2, "div");
    add(left, "h3", null, "Host");
    kvTable(left, data.environment);
    add(right, "h3", null, "Target");
    kvTable(right, data.target);

    add(app, "h2", null, "Scenario");
    var pre = add(app, "pre", "source scenario-yaml", data.scenario_yaml || "(scenario.yaml is missing)");
    pre.id = "scenario";
    Object.keys(data.job_files).forEach(function (h) {
      var d = add(app, "details"), s = add(d, "summary", null, "fio job file for host " + h);
      s.id = "jobs-" + h;
      add(d, "pre", "source", data.job_files[h]);
    });
    footer();
    group.redraw(); pgroup && pgroup.redraw(); hgroup && hgroup.redraw();
  }

  /* ---------------------------------------------------------------- comparison */
  function compareReport() {
    var runs = data.runs, rc = {}, pgroup = null;
    runs.forEach(function (r, i) { rc[r.label] = C.PALETTE[i % C.PALETTE.length]; });
    document.title = "assay: comparison of " + runs.length + " runs";
    var banner = add(app, "section", "banner");
    banner.id = "verdict";
    add(banner, "div", "verdict", "COMPARE");
    var what = add(banner, "div", "what");
    add(what, "h1", null, "Comparison of " + runs.length + " runs");
    add(what, "p", "muted", data.alignment_note);
    var rb = table(app, ["run", "scenario", "status", "thresholds", "target", "started", "id"]);
    rb.parentNode.id = "runs";
    runs.forEach(function (r) {
      row(rb, [withSwatch(r.label, rc[r.label]), r.scenario, el("span", r.status === "passed" || r.status === "completed" ? "ok" : "bad", r.status),
        (r.verdict.passed || 0) + " passed, " + (r.verdict.failed || 0) + " failed", r.target, dateText(r.started), r.id]);
    });

    add(app, "h2", null, "Differences in results");
    add(app, "p", "muted", data.method);
    var heads = ["component", "metric", runs[0].label + " (baseline)"];
    runs.slice(1).forEach(function (r) { heads.push(r.label); heads.push("Δ"); heads.push("verdict"); });
    var nd = heads.map(function (h, i) { return i >= 2 && !/verdict/.test(h); });
    var db = table(app, heads, nd);
    db.parentNode.id = "deltas";
    data.deltas.forEach(function (d) {
      var cells = [d.component, d.metric, metricFmt(d.metric, d.values[0])];
      d.versus.forEach(function (v, i) {
        cells.push(metricFmt(d.metric, d.values[i + 1]));
        cells.push(v.delta_pct === null ? "–" : (v.delta_pct > 0 ? "+" : "") + num(v.delta_pct, 1) + " %");
        var txt = v.significant === null ? "n/a" : v.significant ? "differs" : "within noise";
        var sp = el("span", v.significant ? "bad" : "noise", txt);
        if (v.p !== null) sp.title = "p = " + v.p.toPrecision(2) + " (" + v.basis + ")";
        cells.push(sp);
      });
      row(db, cells, nd);
    });

    add(app, "h2", null, "What differed");
    if (!data.differences.length) add(app, "p", "muted", "No configuration or environment fact differs between these runs.");
    else {
      var fb = table(app, ["fact"].concat(runs.map(function (r) { return r.label; })));
      fb.parentNode.id = "differences";
      fb.parentNode.classList.add("kv");
      data.differences.forEach(function (d) { row(fb, [d[0]].concat(d[1])); });
    }

    add(app, "h2", null, "Per second, overlaid");
    var sel = add(app, "p", "hint", "Colour: run. Line style: component. ");
    var comps = data.components;
    var items = [];
    runs.forEach(function (r) {
      comps.forEach(function (c, j) {
        if (r.series[c]) items.push({ key: r.label + "|" + c, label: r.label + " · " + c, color: rc[r.label], dash: C.DASHES[j % C.DASHES.length], run: r, comp: c });
      });
    });
    var group = new C.Group(items);
    var picker = add(sel, "select");
    picker.id = "component-filter";
    add(picker, "option", null, "all components").value = "";
    comps.forEach(function (c) { add(picker, "option", null, c).value = c; });
    picker.addEventListener("change", function () {
      items.forEach(function (it) { group.hidden[it.key] = !!picker.value && it.comp !== picker.value; });
      var spans = app.querySelectorAll(".legend span");
      for (var i = 0; i < spans.length; i++) spans[i].classList.toggle("off", !!group.hidden[spans[i].dataset.key]);
      group.redraw();
    });
    group.legend(app);
    var events = [];
    runs.forEach(function (r) {
      r.steps.forEach(function (s) {
        events.push({ name: r.label + ": " + s.name, action: s.action, start: s.start, end: s.end, outcome: s.outcome, detail: s.detail });
      });
    });
    chartGrid(app, group, function (metric) {
      return items.map(function (it) { var s = it.run.series[it.comp][metric]; return { key: it.key, x: s[0], y: s[1] }; });
    }, runs[0].phases, events);
    add(app, "p", "hint", "Shading: the warm-up and phases of run " + runs[0].label + ".");

    add(app, "h2", null, "Latency by percentile, overlaid (measured windows)");
    var withCurves = items.filter(function (it) { return it.run.latency && it.run.latency[it.comp]; });
    if (!withCurves.length) add(app, "p", "muted", "No latency histograms were stored for these runs.");
    else {
      var wrap = add(app, "div");
      new C.Chart(group, wrap, { id: "percentiles", title: "Latency (log) by percentile, merged histograms",
        fmt: C.fmtMs, log: true, allowLog: true, xKind: "nines", xTicks: C.ninesTicks, xFmt: C.ninesFmt,
        series: withCurves.map(function (it) {
          var pts = it.run.latency[it.comp];
          return { key: it.key, x: pts.map(function (p) { return C.nines(p[0]); }), y: pts.map(function (p) { return p[1]; }) };
        }) });
    }
    footer();
    group.redraw();
    return pgroup;
  }

  if (data.kind === "compare") compareReport(); else runReport();
  document.body.dataset.rendered = "true";
})();
