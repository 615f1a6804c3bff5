-- 0009_refused_cells: the cells of a grid that could not start under their
-- memory limit (below the variant's floor, engine/train/feasible.go) and
-- were skipped at creation, each with its reason, so that the experiment
-- shows them as refused instead of dropping them (DESIGN §6).
ALTER TABLE experiments ADD COLUMN refused_json TEXT NOT NULL DEFAULT '[]';
