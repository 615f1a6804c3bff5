#!/usr/bin/env bash
# runs.sh DB EXPERIMENT_ID: system, mem_limit_bytes, status and the
# summary's prepare_s of an experiment's runs, as CSV (for table.py).
python3 - "$1" "$2" <<'PY'
import csv, json, sqlite3, sys
c = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
w = csv.writer(sys.stdout)
w.writerow(["run_id", "system", "mem_limit_bytes", "status", "prepare_s"])
for rid, sysname, lim, status, summ in c.execute(
        "select id, system, mem_limit_bytes, status, summary_json from runs where experiment_id = ? and superseded = 0 order by id", (int(sys.argv[2]),)):
    p = ""
    try:
        p = json.loads(summ or "{}").get("prepare_s", "")
    except ValueError:
        pass
    w.writerow([rid, sysname, lim, status, p])
PY
