// outcore dashboard glue: CSRF header for htmx, the live stream (resume by
// event id, reload when resuming is impossible), ECharts rendering of the
// server's chart data (web/chart.go), elapsed-time tickers.
(function () {
  "use strict";

  // --- CSRF: every htmx request repeats the token the page was rendered with.
  function csrfToken() {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.getAttribute("content") : "";
  }
  document.addEventListener("htmx:configRequest", function (e) {
    e.detail.headers["X-CSRF-Token"] = csrfToken();
  });

  // --- Live stream. The browser resumes by itself with Last-Event-ID; when
  // htmx has to open a new EventSource (after the old one closed) the URL
  // carries after=<last id seen>, so nothing is repeated or skipped.
  var lastSeen = {};
  var liveNames = ["update", "reload"];
  function setLive(state) {
    var dot = document.getElementById("live-dot"), txt = document.getElementById("live-text");
    if (!dot) return;
    dot.className = "dot " + (state === "on" ? "on" : state === "off" ? "off" : "");
    txt.textContent = state === "on" ? "live" : state === "off" ? "reconnecting…" : "connecting…";
  }
  // A page kept in the back-forward cache must not keep its stream open:
  // browsers allow six connections to a host, and cached pages holding
  // theirs leave none for the next page. Close on pagehide; a page shown
  // again from the cache reloads to be live and current.
  var sources = [];
  window.addEventListener("pagehide", function () {
    sources.forEach(function (es) { es.close(); });
    sources = [];
  });
  window.addEventListener("pageshow", function (e) { if (e.persisted) window.location.reload(); });
  htmx.createEventSource = function (url) {
    var u = new URL(url, window.location.href);
    if (lastSeen[url]) u.searchParams.set("after", lastSeen[url]);
    var es = new EventSource(u.toString());
    sources.push(es);
    liveNames.forEach(function (name) {
      es.addEventListener(name, function (e) {
        if (e.lastEventId) lastSeen[url] = e.lastEventId;
        document.body.setAttribute("data-last-event-id", e.lastEventId || "");
      });
    });
    es.addEventListener("reload", function () { es.close(); window.location.reload(); });
    es.addEventListener("update", function (e) {
      if (e.data && e.data.indexOf("data-charts-changed") >= 0) scheduleCharts();
    });
    es.addEventListener("open", function () { setLive("on"); });
    es.addEventListener("error", function () { setLive("off"); });
    return es;
  };

  // Never insert a row twice: an appended element whose id is already in
  // the page is dropped from the fragment.
  document.addEventListener("htmx:oobBeforeSwap", function (e) {
    var frag = e.detail.fragment, target = e.detail.target;
    if (!frag || !frag.children || !frag.hasAttribute || !frag.hasAttribute("data-append")) return;
    Array.prototype.slice.call(frag.children).forEach(function (el) {
      var existing = el.id && document.getElementById(el.id);
      if (existing && existing !== target) frag.removeChild(el);
    });
  });

  // --- Plain forms that ask first (data-confirm): deleting a dataset.
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (f && f.getAttribute && f.getAttribute("data-confirm") && !window.confirm(f.getAttribute("data-confirm"))) e.preventDefault();
  });

  // --- The new-experiment form's preview answers the form on screen.
  // Each preview request carries a number (preview_seq), echoed as the
  // answer's data-seq; an answer older than the last request sent is
  // dropped (hx-sync="this:replace" aborts the older request too). A form
  // the browser restored (back, reload) with values other than those the
  // page was rendered with is previewed again at once.
  var previewSent = 0;
  document.addEventListener("htmx:configRequest", function (e) {
    if (e.detail.elt && e.detail.elt.id === "preview-box") e.detail.parameters["preview_seq"] = String(++previewSent);
  });
  document.addEventListener("htmx:beforeSwap", function (e) {
    if (!e.detail.elt || e.detail.elt.id !== "preview-box" || !e.detail.xhr) return;
    var m = /data-seq="(\d+)"/.exec(e.detail.xhr.responseText || "");
    if (m && +m[1] < previewSent) e.detail.shouldSwap = false;
  });
  function formRestored(form) {
    return Array.prototype.some.call(form.elements, function (el) {
      if (el.type === "checkbox" || el.type === "radio") return el.checked !== el.defaultChecked;
      if (el.tagName === "SELECT") return Array.prototype.some.call(el.options, function (o) { return o.selected !== o.defaultSelected; });
      if (el.type === "hidden") return false;
      return "defaultValue" in el && el.value !== el.defaultValue;
    });
  }
  function previewIfRestored() {
    var form = document.getElementById("experiment-form");
    if (form && document.getElementById("preview-box") && formRestored(form)) htmx.trigger(form, "change");
  }
  window.addEventListener("pageshow", previewIfRestored);

  // --- Charts.
  var charts = {}; // id -> echarts instance
  var chartTimer = null, chartBusy = false, chartAgain = false;
  function root() { return document.getElementById("charts-root"); }
  function chartsURL() {
    var r = root();
    if (!r) return null;
    var u = new URL(r.getAttribute("data-charts-url"), window.location.href);
    var b = document.getElementById("baseline");
    if (b && b.value) u.searchParams.set("baseline", b.value);
    return u.toString();
  }
  function scheduleCharts() {
    if (chartTimer) return;
    chartTimer = setTimeout(function () { chartTimer = null; loadCharts(); }, 300);
  }
  function loadCharts() {
    var url = chartsURL();
    if (!url) return;
    if (chartBusy) { chartAgain = true; return; }
    chartBusy = true;
    fetch(url, { headers: { "Accept": "application/json" } })
      .then(function (r) { if (!r.ok) throw new Error(r.status + " " + r.statusText); return r.json(); })
      .then(function (data) { (data.charts || []).forEach(drawChart); drawCaveats(data.caveats); loadRunsView(); })
      .catch(function (err) { console.error("charts:", err); })
      .then(function () {
        chartBusy = false;
        if (chartAgain) { chartAgain = false; scheduleCharts(); }
      });
  }

  // What makes the charts unsafe to read (report.Caveats: runs measured on
  // a busy host, different hosts), above the charts.
  function drawCaveats(list) {
    var box = document.getElementById("chart-caveats");
    if (!box) return;
    box.innerHTML = (list || []).map(function (c) { return "<div class=\"alert warn chart-caveat\">" + esc(c) + "</div>"; }).join("");
  }

  var symbols = {
    circle: "circle", triangle: "triangle", rect: "rect", diamond: "diamond", ring: "emptyCircle", square: "roundRect",
    cross: "path://M2,0 L5,3 L8,0 L10,2 L7,5 L10,8 L8,10 L5,7 L2,10 L0,8 L3,5 L0,2 Z",
    plus: "path://M4,0 H6 V4 H10 V6 H6 V10 H4 V6 H0 V4 H4 Z"
  };
  var dashes = ["solid", "dashed", "dotted", [6, 2, 1.5, 2]];
  var statusWord = { oom: "OOM", failed: "failed", cancelled: "cancelled", interrupted: "interrupted", "no-baseline": "n/a", unmeasured: "n/a" };

  function fmtBytes(v) {
    var u = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (Math.round(v * 10) / 10) + " " + u[i];
  }
  function fmtNum(v) {
    if (v === null || v === undefined) return "–";
    var a = Math.abs(v);
    if (a !== 0 && (a < 0.001 || a >= 1e6)) return v.toExponential(2);
    return String(Math.round(v * 1000) / 1000);
  }

  function tooltip(ch, s, p) {
    var lines = ["<b>" + esc(s.name) + "</b>" + (s.parent ? " <span style='color:#666'>(part of " + esc(s.parent) + ")</span>" : ""), esc(p.label || "")];
    if (p.y !== null && p.y !== undefined) {
      var line = "mean " + fmtNum(p.y);
      if (p.n > 1) line += " ± " + fmtNum(p.sd) + " (s.d.), min " + fmtNum(p.min) + ", max " + fmtNum(p.max);
      lines.push(line);
    }
    lines.push("n = " + p.n + (p.status && p.status !== "ok" ? " · " + p.status : ""));
    if (p.detail) lines.push(esc(p.detail));
    if (p.runs && p.runs.length) lines.push("runs " + p.runs.slice(0, 12).join(", ") + (p.runs.length > 12 ? "…" : ""));
    return lines.join("<br>");
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]; });
  }

  // Build the ECharts option for one chart of report/chart.go.
  function option(ch) {
    var isBar = ch.kind === "bar" || ch.kind === "stack";
    var layers = ch.series.filter(function (s) { return s.role !== "marker"; });
    var nGroups = ch.kind === "bar" ? layers.length : 1;
    var catAxis = ch.x_type === "category";
    var many = false;
    ch.series.forEach(function (s) { if (s.points.length > 60) many = true; });
    // Dodge: series sharing an x are drawn a few pixels apart so that no
    // marker or OOM cross hides another (the data keep their x).
    var nLines = ch.series.length;
    function dodgePx(si) { return ch.dodge && !isBar && nLines > 1 ? (si - (nLines - 1) / 2) * 7 : 0; }
    var series = [], legend = [], seen = {};
    var marks = []; // error bars and status words, drawn by one custom series
    var wordLevels = {}; // status words already placed at an x (and bar slot)
    var stackBase = {};
    var layerIndex = 0;
    ch.series.forEach(function (s, si) {
      if (!seen[s.name]) { seen[s.name] = true; legend.push(s.name); }
      var data = s.points.map(function (p) {
        return { value: [p.x, p.y === null ? null : p.y], point: p };
      });
      var ser;
      if (s.role === "marker") {
        ser = {
          name: s.name, type: "scatter", data: data, z: 12,
          symbol: "rect", symbolSize: [30, 3], itemStyle: { color: s.color },
          tooltip: { formatter: function (prm) { return tooltip(ch, s, prm.data.point); } }
        };
        series.push(ser);
        return;
      }
      var li = layerIndex++;
      ser = {
        name: s.name, type: isBar ? "bar" : "line", data: data,
        itemStyle: { color: s.color, borderColor: isBar ? "#3c3c3c" : s.color, borderWidth: isBar ? 0.5 : 1 },
        emphasis: { focus: "series" },
        tooltip: { formatter: function (prm) { return tooltip(ch, s, prm.data.point); } }
      };
      if (isBar) {
        if (ch.kind === "stack") ser.stack = s.stack || "stack";
        ser.barGap = "0%"; ser.barCategoryGap = "20%";
      } else {
        ser.symbol = s.marker === "none" ? "none" : (symbols[s.marker] || "circle");
        ser.symbolSize = 8;
        ser.symbolOffset = [dodgePx(si), 0];
        ser.showSymbol = !many && s.marker !== "none";
        ser.connectNulls = false;
        ser.lineStyle = { color: s.color, width: 1.8, type: dashes[s.dash || 0] };
      }
      series.push(ser);
      var firstLayer = li === 0;
      s.points.forEach(function (p) {
        var slot = ch.kind === "bar" ? li : 0;
        if (p.y !== null && p.y !== undefined) {
          var base = 0;
          if (ch.kind === "stack") { base = stackBase[p.x] || 0; stackBase[p.x] = base + p.y; }
          if (p.n > 1 && p.sd > 0) {
            marks.push({ kind: "err", x: p.x, y: base + p.y, sd: p.sd, slot: slot, dx: dodgePx(si), color: isBar ? "#222" : s.color });
          }
        } else if (statusWord[p.status] && !(ch.kind === "stack" && !firstLayer)) {
          // Words of several series at one x (and bar slot) are stacked
          // upwards: side by side, a few pixels apart, they overprint
          // ("OOOM").
          var wk = p.x + "|" + slot;
          var level = wordLevels[wk] || 0;
          wordLevels[wk] = level + 1;
          marks.push({ kind: "word", x: p.x, y: 0, word: statusWord[p.status], slot: slot, dx: dodgePx(si), color: s.color, bar: isBar && ch.kind === "bar", level: level });
        }
      });
    });
    if (marks.length) {
      series.push({
        type: "custom", name: "__marks", silent: true, z: 10, tooltip: { show: false },
        data: marks.map(function (m, i) { return [m.x, m.y, i]; }),
        encode: { x: 0, y: 1 },
        renderItem: function (params, api) {
          var m = marks[api.value(2)];
          var pt = api.coord([m.x, m.y]);
          var x = pt[0] + (m.dx || 0);
          if (catAxis && nGroups > 1) {
            var catW = api.size([1, 0])[0], barW = catW * 0.8 / nGroups;
            x += (m.slot - (nGroups - 1) / 2) * barW;
          }
          if (m.kind === "err") {
            var lo = api.coord([m.x, m.y - m.sd])[1], hi = api.coord([m.x, m.y + m.sd])[1];
            var st = { stroke: m.color, lineWidth: 1.2 };
            return { type: "group", children: [
              { type: "line", shape: { x1: x, y1: lo, x2: x, y2: hi }, style: st },
              { type: "line", shape: { x1: x - 4, y1: lo, x2: x + 4, y2: lo }, style: st },
              { type: "line", shape: { x1: x - 4, y1: hi, x2: x + 4, y2: hi }, style: st }
            ] };
          }
          return { type: "group", children: [
            { type: "text", x: m.bar ? x : pt[0], y: m.bar ? pt[1] - 8 : pt[1] - 8 - 13 * (m.level || 0), rotation: m.bar ? Math.PI / 2 : 0,
              style: { text: m.word, fill: m.color === "#000000" ? "#333" : m.color, font: "bold 11px sans-serif",
                       align: m.bar ? "left" : "center", verticalAlign: m.bar ? "middle" : "bottom" } },
            { type: "path", shape: { pathData: "M-4,-4 L4,4 M-4,4 L4,-4" }, x: x, y: pt[1],
              style: { stroke: m.color === "#000000" ? "#333" : m.color, lineWidth: 2, fill: null } }
          ] };
        }
      });
    }
    var xAxis = {
      name: ch.x_label, nameLocation: "middle", nameGap: catAxis && ch.categories && ch.categories.length > 5 ? 58 : 28,
      type: catAxis ? "category" : (ch.x_type === "log" ? "log" : "value"),
      axisLabel: { hideOverlap: true }
    };
    if (ch.x_type === "log") xAxis.logBase = ch.x_log_base || 10;
    if (ch.x_format === "bytes") xAxis.axisLabel.formatter = fmtBytes;
    if (catAxis) {
      xAxis.data = ch.categories || [];
      xAxis.axisLabel.interval = 0;
      if ((ch.categories || []).length > 5) xAxis.axisLabel.rotate = 28;
    } else {
      xAxis.scale = true;
    }
    return {
      animation: false,
      color: ch.series.map(function (s) { return s.color; }),
      legend: { type: "scroll", top: 0, data: legend, textStyle: { fontSize: 11 } },
      grid: { left: 62, right: 20, top: 36, bottom: catAxis && (ch.categories || []).length > 5 ? 86 : 52 },
      tooltip: { trigger: "item", confine: true },
      xAxis: xAxis,
      yAxis: {
        type: ch.y_type === "log" ? "log" : "value", name: ch.y_label, nameLocation: "middle", nameGap: 46,
        min: 0, axisLabel: { formatter: fmtNum }
      },
      series: series
    };
  }

  function drawChart(ch) {
    var box = document.querySelector('[data-chart="' + ch.id + '"]');
    if (!box) return;
    var note = document.querySelector('[data-chart-note="' + ch.id + '"]');
    if (note) note.textContent = ch.note || "";
    var title = document.querySelector('[data-chart-title="' + ch.id + '"]');
    if (title) title.textContent = ch.title;
    if (ch.empty || !ch.series || ch.series.length === 0) {
      if (charts[ch.id]) { charts[ch.id].dispose(); delete charts[ch.id]; }
      box.classList.add("empty");
      box.textContent = ch.empty || "No data yet.";
      box.setAttribute("data-rendered", "empty");
      return;
    }
    if (box.classList.contains("empty")) { box.classList.remove("empty"); box.textContent = ""; }
    var inst = charts[ch.id];
    if (!inst || inst.isDisposed()) {
      inst = echarts.init(box, null, { renderer: "svg" });
      charts[ch.id] = inst;
    }
    inst.setOption(option(ch), true);
    box.setAttribute("data-rendered", "chart");
    box.setAttribute("data-series", String(ch.series.length));
  }
  window.addEventListener("resize", function () {
    Object.keys(charts).forEach(function (k) { charts[k].resize(); });
  });
  document.addEventListener("change", function (e) {
    if (e.target && e.target.id === "baseline") {
      document.querySelectorAll("[data-baseline-link]").forEach(function (a) {
        var u = new URL(a.getAttribute("href"), window.location.href);
        u.searchParams.set("baseline", e.target.value);
        a.setAttribute("href", u.pathname + u.search);
      });
      loadCharts();
    }
  });

  // --- Runs view: every run as a line across parallel axes (the grid's
  // varying settings, epoch time, peak memory, test accuracy), coloured by
  // the grouping chosen, and the groups' mean ± s.d. (report.Parallel).
  var runsChart = null;
  function fmtSummary(s, digits) {
    if (!s || !s.n) return "–";
    var t = s.mean.toFixed(digits);
    if (s.n > 1) t += " ± " + s.sd.toFixed(digits);
    return t + " (n=" + s.n + ")";
  }
  function loadRunsView() {
    var card = document.getElementById("runs-view");
    if (!card) return;
    var sel = document.getElementById("group-by");
    var u = new URL(card.getAttribute("data-runs-url"), window.location.href);
    if (sel && sel.value) u.searchParams.set("group", sel.value);
    fetch(u.pathname + u.search, { headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) throw new Error(r.status + " " + r.statusText); return r.json(); })
      .then(drawRunsView)
      .catch(function (err) { console.error("runs view:", err); });
  }
  function drawRunsView(v) {
    var box = document.getElementById("runs-parallel");
    var note = document.getElementById("runs-view-note");
    if (note) note.textContent = v.note || "";
    var body = document.querySelector("#run-groups tbody");
    if (body) {
      body.innerHTML = (v.groups || []).map(function (g) {
        return "<tr data-group=\"" + esc(g.key) + "\"><td><span class=\"swatch\" style=\"background:" + esc(g.color) + "\"></span>" + esc(g.key) +
          "</td><td class=\"num\">" + g.runs + "</td><td class=\"num\">" + g.done + "</td><td class=\"num\">" + g.oom +
          "</td><td class=\"num\">" + fmtSummary(g.epoch_s, 3) + "</td><td class=\"num\">" + fmtSummary(g.peak_mib, 1) +
          "</td><td class=\"num\">" + fmtSummary(g.test_acc, 3) + "</td></tr>";
      }).join("");
    }
    if (!box) return;
    if (!v.lines || v.lines.length === 0) {
      box.classList.add("empty");
      box.textContent = "No runs yet.";
      box.setAttribute("data-rendered", "empty");
      return;
    }
    box.classList.remove("empty");
    if (!runsChart || runsChart.isDisposed()) { box.textContent = ""; runsChart = echarts.init(box, null, { renderer: "svg" }); }
    var axes = v.dims.map(function (d, i) {
      var name = d.name + (d.unit ? " (" + d.unit + ")" : "");
      if (d.categories && d.categories.length) return { dim: i, name: name, type: "category", data: d.categories };
      // the axis spans every group's runs (each group is its own series)
      var top = 0;
      v.lines.forEach(function (l) { if (typeof l.values[i] === "number") top = Math.max(top, l.values[i]); });
      var max = 1;
      if (top > 0) { var p = Math.pow(10, Math.floor(Math.log10(top * 1.05))); max = Math.ceil(top * 1.05 / p * 2) / 2 * p; }
      return { dim: i, name: name, type: "value", min: 0, max: max, axisLabel: { formatter: fmtNum } };
    });
    var groups = {};
    v.lines.forEach(function (l) {
      (groups[l.group] = groups[l.group] || { color: l.color, data: [] }).data.push({ value: l.values.map(function (x) { return x === null ? "-" : x; }), run: l.run, status: l.status });
    });
    var series = (v.groups || []).map(function (g) {
      return { name: g.key, type: "parallel", lineStyle: { width: 1.5, opacity: 0.7, color: g.color }, data: (groups[g.key] || { data: [] }).data };
    });
    runsChart.setOption({
      animation: false,
      color: (v.groups || []).map(function (g) { return g.color; }),
      legend: { top: 0, data: (v.groups || []).map(function (g) { return g.key; }) },
      tooltip: { formatter: function (p) { return "run #" + p.data.run + " (" + esc(p.data.status) + ")"; } },
      parallel: { left: 60, right: 90, top: 50, bottom: 30 },
      parallelAxis: axes,
      series: series
    }, true);
    box.setAttribute("data-rendered", "chart");
    box.setAttribute("data-lines", String(v.lines.length));
    box.setAttribute("data-group-by", v.group_by);
  }
  document.addEventListener("change", function (e) {
    if (e.target && e.target.id === "group-by") loadRunsView();
  });

  // --- Elapsed time: <span data-since="unix ms" data-until="unix ms|">.
  function fmtDur(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    if (h) return h + "h " + (m < 10 ? "0" : "") + m + "m";
    if (m) return m + "m " + (r < 10 ? "0" : "") + r + "s";
    return r + "s";
  }
  function tick() {
    document.querySelectorAll("[data-since]").forEach(function (el) {
      var since = +el.getAttribute("data-since");
      if (!since) return;
      var until = +el.getAttribute("data-until") || Date.now();
      el.textContent = fmtDur(until - since);
    });
  }
  setInterval(tick, 1000);

  document.addEventListener("DOMContentLoaded", function () {
    tick();
    loadCharts();
    loadRunsView();
  });
})();
