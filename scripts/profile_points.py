#!/usr/bin/env python3
"""Turn scripts/pyg_profile.py's raw CSV into accelerator-profile points.

One JSON object per line, engine/accel's Point: the step's shape (model,
in_dim, hidden, classes, heads, rows, seeds, layers [{src, dst, edges}],
input layer first) and step_s. pyg_profile.py times the step with its batch
already on the GPU and, separately, pinned host-to-device copies; a point's
step_s is the measured step plus the copy of the bytes the step moves (input
features float32, two int64 per edge, the seeds' int64 labels) at the copy
rate fitted to those measurements (latency + bytes / bandwidth, least
squares over the measured sizes). Both parts are printed to stderr.

    python3 scripts/profile_points.py profile-raw.csv [profile-raw.json] > points.jsonl
"""
import csv
import json
import os
import sys


def h2d_fit(samples):
    """Least-squares latency (s) and seconds per byte over (bytes, seconds)."""
    n = len(samples)
    sx = sum(s["bytes"] for s in samples)
    sy = sum(s["seconds"] for s in samples)
    sxx = sum(s["bytes"] ** 2 for s in samples)
    sxy = sum(s["bytes"] * s["seconds"] for s in samples)
    per_byte = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    lat = max((sy - per_byte * sx) / n, 0.0)
    return lat, per_byte


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    raw = sys.argv[1]
    meta_path = sys.argv[2] if len(sys.argv) > 2 else os.path.splitext(raw)[0] + ".json"
    with open(meta_path) as f:
        meta = json.load(f)
    lat, per_byte = h2d_fit(meta["h2d_pinned"])
    print(f"h2d pinned: latency {lat*1e6:.1f} us, {1/per_byte/1e9:.1f} GB/s", file=sys.stderr)
    n = 0
    with open(raw) as f:
        for r in csv.DictReader(f):
            src = [int(v) for v in r["src_per_layer"].split("-")]
            dst = [int(v) for v in r["dst_per_layer"].split("-")]
            edges = [int(v) for v in r["edges_per_layer"].split("-")]
            seeds = int(r["batch"])
            rows = int(r["input_rows"])
            nbytes = rows * int(r["in_dim"]) * 4 + sum(edges) * 16 + seeds * 8
            h2d = lat + nbytes * per_byte
            p = {"model": r["model"], "in_dim": int(r["in_dim"]), "hidden": int(r["hidden"]),
                 "classes": int(r["classes"]), "rows": rows, "seeds": seeds,
                 "layers": [{"src": s, "dst": d, "edges": e} for s, d, e in zip(src, dst, edges)],
                 "step_s": float(r["step_s"]) + h2d}
            if r["model"] == "gat":
                p["heads"] = int(r["heads"])
            print(json.dumps(p, separators=(",", ":")))
            n += 1
    print(f"{n} points", file=sys.stderr)


if __name__ == "__main__":
    main()
