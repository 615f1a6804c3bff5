-- 0004_dashboard: what the dashboard keeps besides the runs (DESIGN §6):
-- an experiment's notes and tags (search, filter, organise), and each
-- finished run's digest (the summary of its epochs the comparison views
-- use), so that a server's first load of a large experiment reads one row
-- per run instead of every epoch.

ALTER TABLE experiments ADD COLUMN notes TEXT NOT NULL DEFAULT '';

CREATE TABLE experiment_tags (
    experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    tag           TEXT    NOT NULL,
    PRIMARY KEY (experiment_id, tag)
) WITHOUT ROWID;
CREATE INDEX experiment_tags_tag ON experiment_tags(tag, experiment_id);

-- digest: report's summary of the run's epochs (its own compact binary
-- form, report/digest_codec.go), written by the first reader that
-- summarised a finished run; digest_epochs: the run's epochs_done then (a
-- digest whose count differs is stale and ignored).
ALTER TABLE runs ADD COLUMN digest BLOB;
ALTER TABLE runs ADD COLUMN digest_epochs INTEGER NOT NULL DEFAULT 0;
