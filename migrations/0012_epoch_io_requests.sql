-- Each epoch's device requests by size class (metrics.RequestClassBytes,
-- a JSON array) and their bytes: what its I/O floor is computed from
-- (DESIGN §11), kept so that the floor of an epoch recorded before its
-- host's storage was measured is filled in once a profile of that storage
-- exists. '' and 0: none kept (epochs stored before).
ALTER TABLE epochs ADD COLUMN io_requests_json TEXT NOT NULL DEFAULT '';
ALTER TABLE epochs ADD COLUMN io_bytes INTEGER NOT NULL DEFAULT 0;
-- The epochs whose floor can still be filled in, which every server start
-- looks for (experiments.FillIOFloors): few, among all epochs.
CREATE INDEX epochs_floorless ON epochs(run_id, epoch) WHERE io_floor_s IS NULL AND io_requests_json != '';
-- How many times some of a run's epochs had their floor filled in after
-- they were stored: a digest of the run made before is stale (the
-- dashboard's digest cache compares it, and the fill clears the stored
-- digest).
ALTER TABLE runs ADD COLUMN io_floor_fills INTEGER NOT NULL DEFAULT 0;
