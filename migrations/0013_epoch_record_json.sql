-- 0013_epoch_record_json: an epoch is stored as its record's JSON
-- (metrics.EpochRecord, docs/ARCHITECTURE.md "Adding a metric"), the source
-- of truth of its measurements, read through engine/metrics/fields; SQL
-- columns are kept only for what is looked up by: the run and the epoch
-- number (the key) and when it was received. A metric added to the
-- record needs no column and no migration.
--
-- Every column of the rows stored before moves into the record under its
-- record key: stages_json, tiers_json, counters_json, host_pressure_json
-- and io_requests_json as the stages, tiers, counters, host_pressure and
-- io_requests objects; empty ones, NULLs and io_bytes 0 are left out, as
-- the record leaves them out (json_patch drops null members). Real
-- numbers are written with 17 significant digits (printf '%!.17g'), which
-- read back exactly: json_object's own rendering keeps 15.
CREATE TABLE epochs_new (
    run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    epoch       INTEGER NOT NULL,
    received_at INTEGER NOT NULL,
    record_json TEXT    NOT NULL, -- the epoch record (metrics.EpochRecord) as JSON
    PRIMARY KEY (run_id, epoch)
) WITHOUT ROWID;

INSERT INTO epochs_new (run_id, epoch, received_at, record_json)
SELECT run_id, epoch, received_at, json_patch('{}', json_object(
    'type', 'epoch', 'epoch', epoch, 'warmup', json(CASE WHEN warmup THEN 'true' ELSE 'false' END),
    'epoch_s', json(printf('%!.17g', epoch_s)), 'sample_s', json(printf('%!.17g', sample_s)), 'extract_s', json(printf('%!.17g', extract_s)), 'train_s', json(printf('%!.17g', train_s)), 'stall_s', json(printf('%!.17g', stall_s)),
    'stages', CASE WHEN stages_json NOT IN ('', '{}') THEN json(stages_json) END,
    'wall_sample_s', json(printf('%!.17g', wall_sample_s)), 'wall_load_s', json(printf('%!.17g', wall_load_s)), 'wall_train_s', json(printf('%!.17g', wall_train_s)), 'wall_stall_s', json(printf('%!.17g', wall_stall_s)),
    'host_pressure', CASE WHEN host_pressure_json != '' THEN json(host_pressure_json) END,
    'batches', batches,
    'tiers', CASE WHEN tiers_json NOT IN ('', '{}') THEN json(tiers_json) END,
    'counters', CASE WHEN counters_json NOT IN ('', '{}') THEN json(counters_json) END,
    'metrics_version', metrics_version,
    'bytes_needed', bytes_needed, 'bytes_read', bytes_read,
    'feature_bytes_read', feature_bytes_read, 'topology_bytes_read', topology_bytes_read,
    'rows_from_device', rows_from_device, 'rows_shared_in_flight', rows_shared_in_flight,
    'read_amplification', json(printf('%!.17g', read_amplification)),
    'sample_busy_s', json(printf('%!.17g', sample_busy_s)), 'sample_wait_s', json(printf('%!.17g', sample_wait_s)), 'extract_busy_s', json(printf('%!.17g', extract_busy_s)), 'extract_wait_s', json(printf('%!.17g', extract_wait_s)),
    'io_floor_s', CASE WHEN io_floor_s IS NOT NULL THEN json(printf('%!.17g', io_floor_s)) END, 'io_efficiency', CASE WHEN io_efficiency IS NOT NULL THEN json(printf('%!.17g', io_efficiency)) END,
    'io_requests', CASE WHEN io_requests_json != '' THEN json(io_requests_json) END,
    'io_bytes', nullif(io_bytes, 0),
    'train_loss', json(printf('%!.17g', train_loss)), 'train_acc', json(printf('%!.17g', train_acc)), 'val_acc', json(printf('%!.17g', val_acc)), 'test_acc', json(printf('%!.17g', test_acc)),
    'eval_s', json(printf('%!.17g', eval_s)), 'wall_s', json(printf('%!.17g', wall_s))))
FROM epochs;

DROP TABLE epochs;
ALTER TABLE epochs_new RENAME TO epochs;

-- The epochs whose floor can still be filled in (0012's index, over the
-- record): few, among all epochs; every server start looks for them.
CREATE INDEX epochs_floorless ON epochs(run_id, epoch)
    WHERE json_extract(record_json, '$.io_floor_s') IS NULL AND json_type(record_json, '$.io_requests') IS NOT NULL;
