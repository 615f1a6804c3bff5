-- The compute mode of a run (docs/DESIGN.md §10: cpu, none or
-- model:PROFILE; runs stored before it existed trained on the CPU), and
-- each epoch's I/O floor (§11): the time its device reads would take at
-- the host's measured storage capability, and io_floor_s / epoch_s. NULL
-- means not measured (no `outcore bench device` profile of the host, or
-- an epoch stored before).
ALTER TABLE runs   ADD COLUMN compute       TEXT NOT NULL DEFAULT 'cpu';
ALTER TABLE epochs ADD COLUMN io_floor_s    REAL;
ALTER TABLE epochs ADD COLUMN io_efficiency REAL;
