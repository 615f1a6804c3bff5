-- Epoch records of metrics version 3 (engine/metrics/wall.go, docs/DESIGN.md
-- §5 "Stage vocabulary"): the wall-clock stage breakdown, the epoch's
-- critical path as the trainer saw it (sample, load, train, stall; they add
-- up to epoch_s). Rows stored before have metrics_version < 3 and 0 here,
-- meaning "not measured".
ALTER TABLE epochs ADD COLUMN wall_sample_s REAL NOT NULL DEFAULT 0;
ALTER TABLE epochs ADD COLUMN wall_load_s   REAL NOT NULL DEFAULT 0;
ALTER TABLE epochs ADD COLUMN wall_train_s  REAL NOT NULL DEFAULT 0;
ALTER TABLE epochs ADD COLUMN wall_stall_s  REAL NOT NULL DEFAULT 0;
