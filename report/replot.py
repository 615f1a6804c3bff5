#!/usr/bin/env python3
"""Re-plot an outcore paper bundle's figures from its chart CSVs.

    python3 replot.py [OUTDIR]     (needs matplotlib; writes OUTDIR/<chart>.pdf)

Each charts/<chart>.csv row is one point: series, role (line, bar, stack,
marker), parent (the stage a nested stage is part of), x in real units
(x_unit) or empty for a category (x_label), y_mean, y_sd, n and status.
"""
import csv
import glob
import os
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "replotted")
PALETTE = ["#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#7F7F7F", "#F0E442"]
MARKERS = ["o", "^", "s", "D", "x", "+", "v", "p", "h"]


def num(s):
    return float(s) if s not in ("", None) else None


def plot(path):
    rows = list(csv.DictReader(open(path, newline="")))
    if not rows:
        return None
    chart = rows[0]["chart"]
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
            col = PALETTE[i % len(PALETTE)]
            if pts[0]["role"] == "marker":
                xs = [pos[p["x_label"]] for p in pts if p["y_mean"]]
                ys = [num(p["y_mean"]) for p in pts if p["y_mean"]]
                ax.hlines(ys, [x - 0.4 for x in xs], [x + 0.4 for x in xs], colors="black", linewidth=2, label=name)
                continue
            if pts[0]["role"] == "line":
                xs = [pos[p["x_label"]] for p in pts if p["y_mean"]]
                ys = [num(p["y_mean"]) for p in pts if p["y_mean"]]
                ax.errorbar(xs, ys, yerr=[num(p["y_sd"]) or 0 for p in pts if p["y_mean"]], marker=MARKERS[i % 9], color=col, label=name, capsize=2)
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
                        yerr=[num(p["y_sd"]) or 0 for p in good], marker=MARKERS[i % 9], color=PALETTE[i % len(PALETTE)],
                        label=name, capsize=2, linewidth=1.2, markersize=4)
            for p in pts:
                if p["status"] == "oom":
                    ax.plot([num(p["x"])], [0], marker="x", color=PALETTE[i % len(PALETTE)])
        if rows[0]["x_unit"] == "bytes":
            ax.set_xscale("log", base=2)
            xs = sorted({num(r["x"]) for r in rows})
            label = {num(r["x"]): r["x_label"] for r in rows}
            ax.set_xticks(xs)
            ax.set_xticklabels([label[x] for x in xs])
    ax.set_ylim(bottom=0)
    ax.set_title(chart, fontsize=10)
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
