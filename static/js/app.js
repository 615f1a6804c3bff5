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
      .then(function (data) {
        (data.charts || []).forEach(drawChart);
        drawCaveats(data.caveats);
        document.dispatchEvent(new CustomEvent("outcore:charts-drawn"));
        loadRunsView();
      })
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

  function tooltip(ch, s, p, also) {
    var lines = ["<b>" + esc(s.name) + "</b>" + (s.parent ? " <span style='color:#666'>(part of " + esc(s.parent) + ")</span>" : ""), esc(p.label || "")];
    if (p.y !== null && p.y !== undefined) {
      var line = "mean " + fmtNum(p.y);
      if (p.n > 1) line += " ± " + fmtNum(p.sd) + " (s.d.), min " + fmtNum(p.min) + ", max " + fmtNum(p.max);
      lines.push(line);
    }
    lines.push("n = " + p.n + (p.status && p.status !== "ok" ? " · " + p.status : ""));
    if (p.detail) lines.push(esc(p.detail));
    if (p.runs && p.runs.length) lines.push("runs " + p.runs.slice(0, 12).join(", ") + (p.runs.length > 12 ? "…" : ""));
    if (also && also.length) lines.push("<span style='color:#666'>same point: " + also.map(esc).join(", ") + "</span>");
    return lines.join("<br>");
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]; });
  }

  // Build the ECharts option for one chart of report/chart.go.
  function option(ch, view) {
    var isBar = ch.kind === "bar" || ch.kind === "stack";
    var layers = ch.series.filter(function (s) { return s.role !== "marker"; });
    var nGroups = ch.kind === "bar" ? layers.length : 1;
    var catAxis = ch.x_type === "category";
    var many = false;
    ch.series.forEach(function (s) { if (s.points.length > 60) many = true; });
    // Every mark sits at its value: a marker on its line, where the axes
    // say. (Series once "dodged" by a symbol offset drew markers pixels
    // beside their lines — 4.5 MiB off on a memory axis.) Series that
    // share a point are named together in its tooltip instead.
    var logX = !catAxis && view.log.x, logY = view.log.y;
    // the top of the data: a stack's total, or a value with its error bar;
    // yRange spans the positive values (a log axis's range)
    var yTop = 0, stackTop = {}, yRange = [Infinity, 0];
    ch.series.forEach(function (s) { s.points.forEach(function (p) { if (p.y > 0) { yRange[0] = Math.min(yRange[0], p.y); yRange[1] = Math.max(yRange[1], p.y); } }); });
    ch.series.forEach(function (s) {
      s.points.forEach(function (p) {
        if (p.y === null || p.y === undefined) return;
        if (ch.kind === "stack" && s.role !== "marker") { stackTop[p.x] = (stackTop[p.x] || 0) + p.y; yTop = Math.max(yTop, stackTop[p.x] + (p.sd || 0)); }
        else yTop = Math.max(yTop, p.y + (p.sd || 0));
      });
    });
    function sharing(s, p) {
      if (isBar || p.y === null || p.y === undefined) return [];
      return ch.series.filter(function (o) {
        return o !== s && o.role !== "marker" && o.points.some(function (q) {
          return q.x === p.x && q.y !== null && q.y !== undefined && Math.abs(q.y - p.y) <= 0.015 * (yTop || 1);
        });
      }).map(function (o) { return o.name; });
    }
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
        tooltip: { formatter: function (prm) { return tooltip(ch, s, prm.data.point, sharing(s, prm.data.point)); } }
      };
      if (isBar) {
        if (ch.kind === "stack") ser.stack = s.stack || "stack";
        ser.barGap = "0%"; ser.barCategoryGap = "20%";
      } else {
        ser.symbol = s.marker === "none" ? "none" : (symbols[s.marker] || "circle");
        ser.symbolSize = 8;
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
            marks.push({ kind: "err", x: p.x, y: base + p.y, sd: p.sd, slot: slot, color: isBar ? "#222" : s.color });
          }
        } else if (statusWord[p.status] && !(ch.kind === "stack" && !firstLayer)) {
          // Words of several series at one x (and bar slot) are stacked
          // upwards: side by side, a few pixels apart, they overprint
          // ("OOOM").
          var wk = p.x + "|" + slot;
          var level = wordLevels[wk] || 0;
          wordLevels[wk] = level + 1;
          marks.push({ kind: "word", x: p.x, y: 0, word: statusWord[p.status], slot: slot, color: s.color, bar: isBar && ch.kind === "bar", level: level });
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
          var cs = params.coordSys, bottom = cs.y + cs.height;
          // x from the value; y from the value, or the plot's floor for a
          // status word (y 0, which a log axis does not have)
          var pt = api.coord([m.x, m.y > 0 ? m.y : yTop || 1]);
          if (m.kind === "word") pt[1] = logY ? bottom : api.coord([m.x, 0])[1];
          var x = pt[0];
          if (catAxis && nGroups > 1) {
            var catW = api.size([1, 0])[0], barW = catW * 0.8 / nGroups;
            x += (m.slot - (nGroups - 1) / 2) * barW;
          }
          if (m.kind === "err") {
            var lo = logY && m.y - m.sd <= 0 ? bottom : api.coord([m.x, m.y - m.sd])[1], hi = api.coord([m.x, m.y + m.sd])[1];
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
    var rotated = catAxis && (ch.categories || []).length > 5;
    // rotated labels drop by their width × sin 28°: the axis name goes below the longest
    var longest = 0;
    (ch.categories || []).forEach(function (c) { longest = Math.max(longest, String(c).length); });
    var nameGap = rotated ? Math.round(Math.max(58, 20 + longest * 6.4 * 0.47)) : 28;
    var xLog = ch.x_type === "log" || logX;
    var xAxis = {
      name: ch.x_label + (logX ? " · log" : ""), nameLocation: "middle", nameGap: nameGap,
      type: catAxis ? "category" : (xLog ? "log" : "value"),
      axisLabel: { hideOverlap: true }
    };
    if (xLog) xAxis.logBase = ch.x_type === "log" ? (ch.x_log_base || 10) : logBase(extentOf(ch, "x"));
    if (ch.x_format === "bytes") xAxis.axisLabel.formatter = fmtBytes;
    if (catAxis) {
      xAxis.data = ch.categories || [];
      xAxis.axisLabel.interval = 0;
      if (rotated) xAxis.axisLabel.rotate = 28;
    } else {
      xAxis.scale = true;
      if (ch.x_format === "bytes" && !xLog) binaryTicks(xAxis, extentOf(ch, "x"), 1);
    }
    var yAxis = {
      type: ch.y_type === "log" || logY ? "log" : "value", name: ch.y_label + (logY ? " · log" : ""), nameLocation: "middle", nameGap: 46,
      axisLabel: { formatter: fmtNum }
    };
    if (yAxis.type === "value") yAxis.min = 0;
    if (logY) { yAxis.logBase = logBase(yRange); yAxis.minorTick = { show: true }; yAxis.minorSplitLine = { show: true, lineStyle: { opacity: 0.4 } }; }
    if (ch.y_unit === "MiB" && yAxis.type === "value") binaryTicks(yAxis, [0, yTop], 1 << 20);
    var bottom = rotated ? nameGap + 28 : 52;
    var opt = {
      animation: false,
      color: ch.series.map(function (s) { return s.color; }),
      // a plain legend wraps onto as many lines as it needs (drawChart
      // moves the plot below it): it never pages or cuts a name short
      legend: { type: "plain", top: 4, left: 8, right: 8, data: legend, textStyle: { fontSize: 11 } },
      grid: { left: 62, right: ch.x_format === "bytes" ? 34 : 20, top: 36, bottom: bottom + zoomH },
      tooltip: { trigger: "item", confine: true },
      // zoom on x: wheel and drag in the plot, and a slider below it
      dataZoom: [
        { type: "inside", xAxisIndex: 0, filterMode: "none", start: view.zoom[0], end: view.zoom[1] },
        { type: "slider", xAxisIndex: 0, filterMode: "none", start: view.zoom[0], end: view.zoom[1], height: 18, bottom: 6,
          labelFormatter: ch.x_format === "bytes" ? function (v) { return fmtBytes(v); } : catAxis ? null : function (v) { return fmtNum(v); } }
      ],
      xAxis: xAxis,
      yAxis: yAxis,
      series: series
    };
    return opt;
  }
  var zoomH = 34; // room below the x axis for the zoom slider

  // logBase for a log time axis: 2 (1, 2, 4, 8 s) over less than two
  // decades, where base 10 would label only one or two ticks; 10 beyond.
  function logBase(ext) {
    return ext[0] > 0 && ext[1] / ext[0] < 100 ? 2 : 10;
  }

  // extentOf is the [min, max] of a chart's x values (dim "x") over every
  // series.
  function extentOf(ch, dim) {
    var lo = Infinity, hi = -Infinity;
    ch.series.forEach(function (s) { s.points.forEach(function (p) { lo = Math.min(lo, p[dim]); hi = Math.max(hi, p[dim]); }); });
    return lo <= hi ? [lo, hi] : [0, 1];
  }
  // binaryStep is the smallest power of two (in bytes) that puts at most
  // `most` ticks in [lo, hi] bytes — report/figure.go's niceStep for
  // bytes, so the dashboard and the figures tick alike: 16/32/48/64 MiB,
  // never 38.1/57.2/76.3 MiB (40, 60, 80 million bytes).
  function binaryStep(lo, hi, most) {
    if (!(hi > lo)) return Math.pow(2, Math.round(Math.log2(Math.max(Math.abs(hi), 1))));
    var count = function (s) { return Math.floor(hi / s + 1e-9) - Math.ceil(lo / s - 1e-9) + 1; };
    var step = Math.pow(2, Math.floor(Math.log2((hi - lo) / most)));
    while (count(step) > most) step *= 2;
    return step;
  }
  // binaryValues are the multiples of a binary step in [lo, hi] (in units
  // of `unit` bytes: 1 for bytes, 2^20 for MiB).
  function binaryValues(lo, hi, unit) {
    var step = binaryStep(lo * unit, hi * unit, 7) / unit, out = [];
    for (var k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k++) out.push(k * step);
    return out;
  }
  // binaryTicks makes a value axis of sizes tick at binary steps: the axis
  // runs from a tick to a tick around ext, and the labels and ticks are
  // the steps' multiples (drawChart recomputes them for a zoomed window).
  function binaryTicks(axis, ext, unit) {
    var step = binaryStep(ext[0] * unit, ext[1] * unit, 6) / unit;
    var lo = axis.min === 0 ? 0 : Math.floor(ext[0] / step) * step, hi = Math.ceil(ext[1] / step) * step;
    if (hi <= lo) hi = lo + step;
    axis.min = lo; axis.max = hi;
    axis.scale = false;
    var vals = binaryValues(lo, hi, unit);
    axis.axisLabel.customValues = vals;
    axis.axisTick = { customValues: vals };
  }

  // What a reader chose on a chart — a log axis, a zoom window — by
  // chart id: kept across the live redraws.
  var views = {};
  var lastCharts = {};
  function viewOf(id) {
    return views[id] || (views[id] = { log: { x: false, y: false }, zoom: [0, 100] });
  }
  // The charts not drawn (no data, or an axis the experiment did not
  // vary), each reason once, below the charts: no empty frame stays on
  // the page.
  var notDrawn = {};
  function showNotDrawn() {
    var r = root();
    if (!r) return;
    var el = document.getElementById("charts-not-drawn");
    if (!el) {
      el = document.createElement("div");
      el.id = "charts-not-drawn";
      el.className = "small muted charts-not-drawn";
      r.appendChild(el);
    }
    var byReason = {}, order = [];
    Object.keys(notDrawn).forEach(function (id) {
      var w = notDrawn[id];
      if (!byReason[w.reason]) { byReason[w.reason] = []; order.push(w.reason); }
      byReason[w.reason].push(w.title);
    });
    el.hidden = order.length === 0;
    el.innerHTML = order.length ? "<b>Not drawn</b><ul>" + order.map(function (reason) {
      return "<li>" + byReason[reason].map(esc).join(", ") + ": " + esc(reason) + "</li>";
    }).join("") + "</ul>" : "";
  }
  // logTools puts a "log x" / "log y" toggle in the chart's header for
  // each axis report.Chart.LogAxes allows (time axes).
  function logTools(ch, card) {
    if (!card) return;
    var h = card.querySelector("h3");
    var tools = card.querySelector(".chart-tools");
    if (!tools) {
      tools = document.createElement("span");
      tools.className = "chart-tools";
      h.insertBefore(tools, h.querySelector(".exports"));
    }
    var axes = ch.log_axes || [], v = viewOf(ch.id);
    tools.innerHTML = axes.map(function (a) {
      return "<button type=\"button\" class=\"small toggle\" data-log-toggle=\"" + a + "\" aria-pressed=\"" + (v.log[a] ? "true" : "false") +
        "\" title=\"" + (a === "x" ? "x" : "y") + " axis on a log scale\">log " + a + "</button>";
    }).join("");
  }
  document.addEventListener("click", function (e) {
    var b = e.target && e.target.closest && e.target.closest("[data-log-toggle]");
    if (!b) return;
    var card = b.closest("[data-chart-card]"), id = card && card.getAttribute("data-chart-card");
    if (!id || !lastCharts[id]) return;
    var v = viewOf(id), a = b.getAttribute("data-log-toggle");
    v.log[a] = !v.log[a];
    drawChart(lastCharts[id]);
  });

  function drawChart(ch) {
    var box = document.querySelector('[data-chart="' + ch.id + '"]');
    if (!box) return;
    var card = box.closest("[data-chart-card]");
    var note = document.querySelector('[data-chart-note="' + ch.id + '"]');
    if (note) note.textContent = ch.note || "";
    var title = document.querySelector('[data-chart-title="' + ch.id + '"]');
    if (title) title.textContent = ch.title;
    if (ch.empty || !ch.series || ch.series.length === 0) {
      if (charts[ch.id]) { charts[ch.id].dispose(); delete charts[ch.id]; }
      box.classList.add("empty");
      box.textContent = ch.empty || "No data yet.";
      box.setAttribute("data-rendered", "empty");
      if (card) card.hidden = true;
      notDrawn[ch.id] = { title: ch.title, reason: ch.empty || "No data yet." };
      showNotDrawn();
      return;
    }
    if (card) card.hidden = false;
    if (notDrawn[ch.id]) { delete notDrawn[ch.id]; showNotDrawn(); }
    lastCharts[ch.id] = ch;
    logTools(ch, card);
    if (box.classList.contains("empty")) { box.classList.remove("empty"); box.textContent = ""; }
    var inst = charts[ch.id];
    if (!inst || inst.isDisposed()) {
      inst = echarts.init(box, null, { renderer: "svg" });
      charts[ch.id] = inst;
      inst.on("datazoom", function () { rezoom(ch.id); });
    }
    var view = viewOf(ch.id);
    var opt = option(ch, view);
    inst.setOption(opt, true);
    fitLegend(inst, box, opt);
    rezoom(ch.id);
    box.setAttribute("data-rendered", "chart");
    box.setAttribute("data-series", String(ch.series.length));
  }
  // fitLegend moves the plot below the legend, however many lines it
  // wrapped onto, and makes the chart taller by as much.
  function fitLegend(inst, box, opt) {
    var lm = inst.getModel().getComponent("legend", 0);
    var lv = lm && inst.getViewOfComponentModel(lm);
    if (!lv) return;
    var h = lv.group.getBoundingRect().height;
    var top = Math.ceil(4 + h + 14);
    // the plot keeps its height (240 px) whatever the legend, the x
    // labels and the slider take
    var height = top + 240 + opt.grid.bottom;
    if (Math.abs(box.clientHeight - height) > 1) {
      box.style.height = height + "px";
      inst.resize();
    }
    if (opt.grid.top !== top) {
      opt.grid.top = top;
      inst.setOption({ grid: { top: top } });
    }
  }
  // rezoom keeps the zoom window across redraws and, on a size axis,
  // recomputes the binary ticks for the window shown.
  function rezoom(id) {
    var inst = charts[id];
    if (!inst) return;
    var dz = (inst.getOption().dataZoom || [])[0];
    if (dz) viewOf(id).zoom = [dz.start, dz.end];
    var xa = inst.getOption().xAxis[0];
    if (!xa || !xa.axisTick || !xa.axisTick.customValues) return;
    var ext = inst.getModel().getComponent("xAxis", 0).axis.scale.getExtent();
    var vals = binaryValues(ext[0], ext[1], 1);
    if (vals.join() === (xa.axisLabel.customValues || []).join()) return;
    inst.setOption({ xAxis: { axisLabel: { customValues: vals }, axisTick: { customValues: vals } } });
  }
  window.addEventListener("resize", function () {
    Object.keys(charts).forEach(function (k) {
      var inst = charts[k];
      if (inst.isDisposed()) return;
      inst.resize();
      // the legend rewraps at the new width
      var g = inst.getOption().grid[0];
      fitLegend(inst, inst.getDom(), { grid: { top: g.top, bottom: g.bottom } });
    });
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
  var runsChart = null, runsLines = [];
  // showRunsSelection lists the runs inside every interval brushed on the
  // runs view's axes (drag along an axis; click it to clear), with links.
  function showRunsSelection() {
    var box = document.getElementById("runs-parallel");
    if (!box || !runsChart) return;
    var el = document.getElementById("runs-selection");
    if (!el) {
      el = document.createElement("p");
      el.id = "runs-selection";
      el.className = "small";
      box.parentNode.insertBefore(el, box.nextSibling);
    }
    var model = runsChart.getModel(), brushed = false, ids = [];
    model.eachComponent("parallelAxis", function (ax) { if (ax.activeIntervals && ax.activeIntervals.length) brushed = true; });
    if (brushed) {
      model.eachSeriesByType("parallel", function (s) {
        var data = s.getData();
        s.getRawIndicesByActiveState("active").forEach(function (i) {
          var item = s.option.data[i];
          if (item && item.run !== undefined) ids.push(item.run);
        });
      });
      ids.sort(function (a, b) { return a - b; });
    }
    el.setAttribute("data-selected", ids.join(","));
    if (!brushed) {
      el.innerHTML = "<span class=\"muted\">Drag along an axis to select runs; click the axis to clear.</span>";
      return;
    }
    el.innerHTML = "<b>" + ids.length + " of " + runsLines.length + " runs selected</b>" + (ids.length ? ": " + ids.map(function (id) {
      return "<a href=\"/runs/" + id + "\">#" + id + "</a>";
    }).join(", ") : "");
  }
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
      // an id by name: a brushed interval stays on its axis across redraws
      if (d.categories && d.categories.length) return { id: "ax:" + name, dim: i, name: name, type: "category", data: d.categories };
      // the axis spans every group's runs (each group is its own series)
      var top = 0;
      v.lines.forEach(function (l) { if (typeof l.values[i] === "number") top = Math.max(top, l.values[i]); });
      var max = 1, interval;
      if (top > 0 && d.unit === "MiB") {
        // a size ticks at binary steps, as the charts' size axes do
        interval = binaryStep(0, top * 1.05 * 1048576, 6) / 1048576;
        max = Math.ceil(top * 1.05 / interval) * interval;
      } else if (top > 0) { var p = Math.pow(10, Math.floor(Math.log10(top * 1.05))); max = Math.ceil(top * 1.05 / p * 2) / 2 * p; }
      var ax = { id: "ax:" + name, dim: i, name: name, type: "value", min: 0, max: max, axisLabel: { formatter: fmtNum } };
      if (interval) ax.interval = interval;
      return ax;
    });
    var groups = {};
    v.lines.forEach(function (l) {
      (groups[l.group] = groups[l.group] || { color: l.color, data: [] }).data.push({ value: l.values.map(function (x) { return x === null ? "-" : x; }), run: l.run, status: l.status });
    });
    var series = (v.groups || []).map(function (g) {
      return { name: g.key, type: "parallel", lineStyle: { width: 1.5, opacity: 0.7, color: g.color }, data: (groups[g.key] || { data: [] }).data };
    });
    runsLines = v.lines;
    // the intervals brushed so far, by axis id, to brush again after the redraw
    var brushed = [];
    runsChart.getModel() && runsChart.getModel().eachComponent("parallelAxis", function (ax) {
      if (ax.activeIntervals && ax.activeIntervals.length) brushed.push({ id: ax.id, intervals: ax.activeIntervals.map(function (iv) { return iv.slice(); }) });
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
    brushed.forEach(function (b) {
      if (axes.some(function (a) { return a.id === b.id; })) runsChart.dispatchAction({ type: "axisAreaSelect", parallelAxisId: b.id, intervals: b.intervals });
    });
    if (!runsChart.__brushing) {
      runsChart.__brushing = true;
      runsChart.on("axisareaselected", showRunsSelection);
    }
    showRunsSelection();
    box.setAttribute("data-rendered", "chart");
    box.setAttribute("data-lines", String(v.lines.length));
    box.setAttribute("data-group-by", v.group_by);
  }
  document.addEventListener("change", function (e) {
    if (e.target && e.target.id === "group-by") loadRunsView();
  });

  // --- Run tables choose their columns: a table[data-columns] with an id
  // gets a "Columns" chooser before it; the headers unchecked are hidden
  // by a style rule on the table's id (rows the live stream adds follow
  // it) and remembered in localStorage per table.
  function hiddenColumns(id) {
    try { return JSON.parse(localStorage.getItem("outcore.columns." + id) || "[]"); } catch (e) { return []; }
  }
  function applyColumns(table) {
    var hidden = hiddenColumns(table.id), rules = [];
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (hidden.indexOf(th.textContent.trim()) >= 0) rules.push("#" + table.id + " tr > :nth-child(" + (i + 1) + ")");
    });
    var st = document.getElementById("columns-style-" + table.id);
    if (!st) {
      st = document.createElement("style");
      st.id = "columns-style-" + table.id;
      document.head.appendChild(st);
    }
    st.textContent = rules.length ? rules.join(",\n") + " { display: none; }" : "";
  }
  function setupColumns() {
    document.querySelectorAll("table[data-columns][id]").forEach(function (table) {
      if (!table.tHead || !table.tHead.rows.length) return;
      applyColumns(table);
      if (document.querySelector('[data-columns-for="' + table.id + '"]')) return;
      var hidden = hiddenColumns(table.id);
      var box = document.createElement("details");
      box.className = "column-chooser";
      box.setAttribute("data-columns-for", table.id);
      box.innerHTML = "<summary>Columns</summary>" + Array.prototype.map.call(table.tHead.rows[0].cells, function (th) {
        var name = th.textContent.trim();
        if (!name) return "";
        return "<label><input type=\"checkbox\" data-column=\"" + esc(name) + "\"" + (hidden.indexOf(name) >= 0 ? "" : " checked") + "> " + esc(name) + "</label>";
      }).join("");
      box.addEventListener("change", function (e) {
        var name = e.target.getAttribute("data-column");
        if (!name) return;
        var h = hiddenColumns(table.id).filter(function (n) { return n !== name; });
        if (!e.target.checked) h.push(name);
        try { localStorage.setItem("outcore.columns." + table.id, JSON.stringify(h)); } catch (err) { /* private mode: this visit only */ }
        applyColumns(document.getElementById(table.id) || table);
      });
      var anchor = table.closest(".table-scroll") || table;
      anchor.parentNode.insertBefore(box, anchor);
    });
  }
  document.addEventListener("htmx:afterSettle", setupColumns);

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
    setupColumns();
    loadCharts();
    loadRunsView();
  });
})();
