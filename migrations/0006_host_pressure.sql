-- Host pressure while a run ran (engine/metrics/pressure.go, docs/DESIGN.md
-- §5 "Host pressure"): per second in samples, per epoch in epochs (as the
-- record's JSON object), per run in the summary record (summary_json).
-- NULL: not recorded (rows stored before) or, for a PSI column, the
-- kernel had no /proc/pressure.
ALTER TABLE samples ADD COLUMN host_load1          REAL;
ALTER TABLE samples ADD COLUMN host_others_cpu_pct REAL;
ALTER TABLE samples ADD COLUMN host_steal_pct      REAL;
ALTER TABLE samples ADD COLUMN psi_cpu_pct         REAL;
ALTER TABLE samples ADD COLUMN psi_io_pct          REAL;
ALTER TABLE samples ADD COLUMN psi_memory_pct      REAL;
ALTER TABLE epochs ADD COLUMN host_pressure_json TEXT;
