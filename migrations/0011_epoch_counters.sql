-- Each epoch's variant-specific event counts (metrics.EpochRecord's
-- counters: GIDS's storage_MBps and accumulator_passes, Helios's
-- pipeline_stall_ms, ...), a JSON object of name to integer, so that the
-- figures built on them (GIDS Fig. 8–10, Helios Fig. 11) can be exported
-- from the store as the stages and tiers are. '{}': none, or an epoch
-- stored before.
ALTER TABLE epochs ADD COLUMN counters_json TEXT NOT NULL DEFAULT '{}';
