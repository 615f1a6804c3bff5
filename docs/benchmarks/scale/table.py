#!/usr/bin/env python3
"""Medians of the scale sweep (docs/benchmarks/variants.md, "Scale") from
the experiments' epoch and run CSVs (outcore exp export ID --csv --what
epochs|runs): per dataset, variant and share, the 20-batch epoch time,
MiB read from the device, io_efficiency and prepare_s.
usage: table.py DATASET=EPOCHS.csv:RUNS.csv:FEATURE_BYTES ..."""
import csv, json, statistics as st, sys, collections

rows = []
for arg in sys.argv[1:]:
    name, rest = arg.split("=", 1)
    ep, rn, fb = rest.split(":")
    fb = int(fb)
    prep = {}
    status = collections.defaultdict(list)
    for r in csv.DictReader(open(rn)):
        if r.get("superseded") == "1":  # a retried attempt: its cell counts once
            continue
        share = round(int(r["mem_limit_bytes"] or 0) / fb * 100)
        status[(r["system"], share)].append(r["status"])
        if r.get("prepare_s") and r["status"] == "done":
            prep.setdefault((r["system"], share), []).append(float(r["prepare_s"]))
    g = collections.defaultdict(list)
    for r in csv.DictReader(open(ep)):
        share = round(int(r["mem_limit_bytes"] or 0) / fb * 100)
        g[(r["system"], share)].append(r)
    for k in sorted(set(g) | set(status)):
        v = g.get(k, [])
        med = lambda n: st.median(float(x[n] or 0) for x in v) if v else None
        sts = status.get(k, [])
        rows.append((name, fb, k[0], k[1], len(v), ", ".join(f"{sts.count(x)} {x}" for x in sorted(set(sts))),
                     med("epoch_s"), [round(float(x["epoch_s"]), 2 if float(x["epoch_s"]) < 10 else 1) for x in v],
                     (med("bytes_read") or 0) / 2**20 if v else None, med("io_efficiency"),
                     st.median(prep[k]) if k in prep else None))
print("| dataset (features) | variant | share | runs | 20-batch epoch s, median (runs) | MiB read | io_efficiency | prepare s |")
print("|---|---|---:|---|---:|---:|---:|---:|")
for name, fb, sysname, share, n, stat, e, es, mib, eff, prep in sorted(rows, key=lambda r: (r[2], r[3], r[1])):
    f = lambda x, p=1: "–" if x is None else f"{x:.{p}f}"
    ep = "–" if e is None else f"{f(e, 2 if e < 10 else 1)} ({', '.join(map(str, es))})"
    print(f"| {name} ({fb/2**30:.0f} GiB) | {sysname} | {share} % | {stat} | {ep} | {f(mib,0)} | {f(eff,2)} | {f(prep)} |")
