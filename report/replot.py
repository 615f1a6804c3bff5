#!/usr/bin/env python3
"""Re-plot an outcore paper bundle's figures from its chart CSVs.

    python3 replot.py [OUTDIR]     (writes OUTDIR/<chart>.pdf)

Needs Python 3 and matplotlib (pip install matplotlib, or the
python3-matplotlib package of your distribution).

Each charts/<chart>.csv row is one point: series, role (line, bar, stack,
marker), parent (the stage a nested stage is part of), x in real units
(x_unit) or empty for a category (x_label), y_mean, y_sd, n and status.
charts/<chart>.json gives the figure's title, its axis labels (with their
units) and each series' colour and marker, as the dashboard draws them.
"""
import csv
import glob
import json
import os
import sys
from collections import OrderedDict

try:
    import matplotlib
except ImportError:
    sys.exit("replot.py needs matplotlib: pip install matplotlib (or your distribution's python3-matplotlib)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "replotted")
PALETTE = ["#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#7F7F7F", "#F0E442"]
MARKERS = ["o", "^", "s", "D", "x", "+", "v", "p", "h"]
# the dashboard's marker names (report.Series.Marker) in matplotlib's
MARKER_OF = {"circle": "o", "triangle": "^", "rect": "s", "square": "s", "diamond": "D", "cross": "x",
             "plus": "+", "ring": "o", "none": "", "dash": "_"}
DASH_OF = {0: "-", 1: "--", 2: ":", 3: "-."}


def style_of(path):
    """The chart's charts/<chart>.json (title, axis labels, series styles), {} without one."""
    try:
        with open(os.path.splitext(path)[0] + ".json") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def num(s):
    return float(s) if s not in ("", None) else None


def plot(path):
    rows = list(csv.DictReader(open(path, newline="")))
    if not rows:
        return None
    chart = rows[0]["chart"]
    st = style_of(path)
    by_name = {x["name"]: x for x in st.get("series") or []}

    def colour(name, i):
        return by_name.get(name, {}).get("color") or PALETTE[i % len(PALETTE)]

    def marker(name, i):
        return MARKER_OF.get(by_name.get(name, {}).get("marker"), MARKERS[i % len(MARKERS)])

    def dash(name):
        return DASH_OF.get(by_name.get(name, {}).get("dash", 0), "-")

    series = OrderedDict()
    cats = []
    for r in rows:
        series.setdefault(r["series"], []).append(r)
        if r["x_label"] not in cats:
            cats.append(r["x_label"])
    fig, ax = plt.subplots(figsize=(7.16, 3.3))
    role = rows[0]["role"]
    numeric = all(r["x"] != "" for r in rows) and role == "line"
    if role in ("bar", "stack", "marker") or not numeric:
        pos = {c: i for i, c in enumerate(cats)}
        layers = [s for s in series if series[s][0]["role"] != "marker"]
        width = 0.8 / (1 if role == "stack" else max(1, len(layers)))
        base = [0.0] * len(cats)
        for i, name in enumerate(series):
            pts = series[name]
            col = colour(name, i)
            if pts[0]["role"] == "marker":
                xs = [pos[p["x_label"]] for p in pts if p["y_mean"]]
                ys = [num(p["y_mean"]) for p in pts if p["y_mean"]]
                ax.hlines(ys, [x - 0.4 for x in xs], [x + 0.4 for x in xs], colors="black", linewidth=2, label=name)
                continue
            if pts[0]["role"] == "line":
                xs = [pos[p["x_label"]] for p in pts if p["y_mean"]]
                ys = [num(p["y_mean"]) for p in pts if p["y_mean"]]
                ax.errorbar(xs, ys, yerr=[num(p["y_sd"]) or 0 for p in pts if p["y_mean"]], marker=marker(name, i), color=col, label=name, capsize=2, linestyle=dash(name))
                continue
            off = 0 if role == "stack" else (i - (len(layers) - 1) / 2) * width
            xs, ys, bottoms = [], [], []
            for p in pts:
                if not p["y_mean"]:
                    if p["status"] in ("oom", "failed", "cancelled") and (role != "stack" or i == 0):
                        ax.text(pos[p["x_label"]] + off, 0, p["status"].upper() if p["status"] == "oom" else p["status"],
                                rotation=90, ha="center", va="bottom", fontsize=7, color=col)
                    continue
                j = pos[p["x_label"]]
                xs.append(j + off)
                ys.append(num(p["y_mean"]))
                bottoms.append(base[j] if role == "stack" else 0)
                if role == "stack":
                    base[j] += num(p["y_mean"])
            ax.bar(xs, ys, width, bottom=bottoms, color=col, edgecolor="#3c3c3c", linewidth=0.5, label=name)
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels(cats, rotation=30 if len(cats) > 4 else 0, ha="right" if len(cats) > 4 else "center", fontsize=7)
    else:
        for i, (name, pts) in enumerate(series.items()):
            good = [p for p in pts if p["y_mean"]]
            ax.errorbar([num(p["x"]) for p in good], [num(p["y_mean"]) for p in good],
                        yerr=[num(p["y_sd"]) or 0 for p in good], marker=marker(name, i), color=colour(name, i),
                        label=name, capsize=2, linewidth=1.2, markersize=4, linestyle=dash(name))
            for p in pts:
                if p["status"] == "oom":
                    ax.plot([num(p["x"])], [0], marker="x", color=colour(name, i))
        if rows[0]["x_unit"] == "bytes":
            ax.set_xscale("log", base=2)
            xs = sorted({num(r["x"]) for r in rows})
            label = {num(r["x"]): r["x_label"] for r in rows}
            ax.set_xticks(xs)
            ax.set_xticklabels([label[x] for x in xs])
    ax.set_ylim(bottom=0)
    ax.set_title(st.get("title") or chart, fontsize=10)
    # axis labels with their units, as the dashboard writes them
    xl = st.get("x_label") or ""
    unit = rows[0].get("x_unit") or ""
    if unit and unit not in ("bytes", "epoch") and "(" not in xl:
        xl += " (%s)" % unit
    ax.set_xlabel(xl, fontsize=8)
    ax.set_ylabel(st.get("y_label") or "", fontsize=8)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    os.makedirs(OUT, exist_ok=True)
    out = os.path.join(OUT, chart + ".pdf")
    fig.savefig(out)
    plt.close(fig)
    return out


if __name__ == "__main__":
    for path in sorted(glob.glob(os.path.join(HERE, "charts", "*.csv"))):
        out = plot(path)
        if out:
            print(out)
