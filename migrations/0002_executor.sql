-- 0002_executor: runs handed to an executor other than local children
-- (docs/ARCHITECTURE.md "Executors"). A slurm run is one Slurm job; its
-- records reach the server through a file in the run's directory, ingested
-- from records_file at records_offset (the byte after the last record
-- committed), so a restarted server resumes without losing or repeating one.
ALTER TABLE runs ADD COLUMN executor       TEXT    NOT NULL DEFAULT 'local'; -- local or slurm
ALTER TABLE runs ADD COLUMN job_id         TEXT    NOT NULL DEFAULT '';      -- Slurm job id
ALTER TABLE runs ADD COLUMN node           TEXT    NOT NULL DEFAULT '';      -- node(s) the job ran on
ALTER TABLE runs ADD COLUMN job_state      TEXT    NOT NULL DEFAULT '';      -- last Slurm state seen (PENDING, RUNNING, ...)
ALTER TABLE runs ADD COLUMN records_file   TEXT    NOT NULL DEFAULT '';      -- records file being ingested (name in the run directory)
ALTER TABLE runs ADD COLUMN records_offset INTEGER NOT NULL DEFAULT 0;       -- bytes of it committed
