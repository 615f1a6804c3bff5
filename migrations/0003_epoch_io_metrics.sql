-- Epoch records of metrics version 2 (engine/metrics/records.go,
-- docs/DESIGN.md §5): device reads split by file kind, rows from the device,
-- rows shared in flight, and busy/wait worker time of the sampling and
-- extracting stages. Rows stored before keep metrics_version 1: their new
-- columns are 0 and mean "not measured", and their read_amplification is
-- the old bytes_read / bytes_needed.
ALTER TABLE epochs ADD COLUMN metrics_version       INTEGER NOT NULL DEFAULT 1;
ALTER TABLE epochs ADD COLUMN feature_bytes_read    INTEGER NOT NULL DEFAULT 0;
ALTER TABLE epochs ADD COLUMN topology_bytes_read   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE epochs ADD COLUMN rows_from_device      INTEGER NOT NULL DEFAULT 0;
ALTER TABLE epochs ADD COLUMN rows_shared_in_flight INTEGER NOT NULL DEFAULT 0;
ALTER TABLE epochs ADD COLUMN sample_busy_s         REAL    NOT NULL DEFAULT 0;
ALTER TABLE epochs ADD COLUMN sample_wait_s         REAL    NOT NULL DEFAULT 0;
ALTER TABLE epochs ADD COLUMN extract_busy_s        REAL    NOT NULL DEFAULT 0;
ALTER TABLE epochs ADD COLUMN extract_wait_s        REAL    NOT NULL DEFAULT 0;
