-- 0001_init: the experiment store (DESIGN §2, §5).
-- Times are unix milliseconds (UTC). Booleans are 0/1 integers.
-- JSON columns hold the engine's records verbatim where a shape is open-ended.

-- datasets: a catalogue of the datasets experiments ran on, filled from each
-- dataset's meta.json when an experiment uses it.
CREATE TABLE datasets (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE,
    path        TEXT    NOT NULL,
    nodes       INTEGER NOT NULL DEFAULT 0,
    edges       INTEGER NOT NULL DEFAULT 0,
    feature_dim INTEGER NOT NULL DEFAULT 0,
    classes     INTEGER NOT NULL DEFAULT 0,
    source      TEXT    NOT NULL DEFAULT '',   -- "generator", "linqs", "npy", "ogb", ...
    meta_json   TEXT    NOT NULL DEFAULT '{}', -- meta.json as read
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- experiments: one grid file, expanded into runs.
CREATE TABLE experiments (
    id               INTEGER PRIMARY KEY,
    name             TEXT    NOT NULL DEFAULT '',
    dataset          TEXT    NOT NULL,
    grid_json        TEXT    NOT NULL,   -- the grid file as given (normalised JSON)
    base_config_json TEXT    NOT NULL,   -- the grid's top-level keys other than axes
    created_at       INTEGER NOT NULL
);
CREATE INDEX experiments_created ON experiments(created_at DESC, id DESC);

-- runs: one child process (`outcore train`) in one memory cgroup.
-- status moves queued -> running -> one of the outcomes; a retry is a new row
-- (attempt+1, retry_of = the old id) and marks the old row superseded.
CREATE TABLE runs (
    id               INTEGER PRIMARY KEY,
    experiment_id    INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    seq              INTEGER NOT NULL,             -- index in the experiment's expansion
    attempt          INTEGER NOT NULL DEFAULT 1,
    retry_of         INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    superseded       INTEGER NOT NULL DEFAULT 0,   -- 1 once a retry replaced this run
    queue_pos        INTEGER NOT NULL,             -- global queue order (lower runs first)
    status           TEXT    NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued','running','done','failed','oom','cancelled','interrupted')),
    cancel_requested INTEGER NOT NULL DEFAULT 0,

    -- the grid cell
    system           TEXT    NOT NULL,
    dataset          TEXT    NOT NULL,
    model            TEXT    NOT NULL DEFAULT '',
    mem_limit_bytes  INTEGER NOT NULL DEFAULT 0,   -- 0 = no limit
    feature_dim      INTEGER NOT NULL DEFAULT 0,
    batch_size       INTEGER NOT NULL DEFAULT 0,
    fanout           TEXT    NOT NULL DEFAULT '',  -- e.g. "10,10,10"
    repeat           INTEGER NOT NULL DEFAULT 0,   -- 0-based repeat index
    config_json      TEXT    NOT NULL,             -- the full config given to the child

    -- how it ran
    limit_enforced   INTEGER NOT NULL DEFAULT 0,
    limit_note       TEXT    NOT NULL DEFAULT '',  -- why not enforced, or which cgroup version
    cgroup_path      TEXT    NOT NULL DEFAULT '',
    cache_dropped    INTEGER NOT NULL DEFAULT 0,   -- page cache dropped before the run
    host_json        TEXT    NOT NULL DEFAULT '{}',
    io_backend       TEXT    NOT NULL DEFAULT '',
    devices_json     TEXT    NOT NULL DEFAULT '{}',
    deviations_json  TEXT    NOT NULL DEFAULT '[]',
    outcore_version  TEXT    NOT NULL DEFAULT '',
    go_version       TEXT    NOT NULL DEFAULT '',
    pid              INTEGER NOT NULL DEFAULT 0,

    -- how it ended
    exit_code        INTEGER,                      -- NULL while running or when killed by a signal
    signal           TEXT    NOT NULL DEFAULT '',
    error            TEXT    NOT NULL DEFAULT '',
    stderr_tail      TEXT    NOT NULL DEFAULT '',
    epochs_done      INTEGER NOT NULL DEFAULT 0,
    mean_epoch_s     REAL,                         -- over non-warm-up epochs in the epochs table
    best_val_acc     REAL,
    test_acc         REAL,                         -- at the epoch of best val_acc
    total_s          REAL,
    peak_rss_bytes   INTEGER,
    peak_cgroup_bytes INTEGER,
    summary_json     TEXT,
    progress_json    TEXT,                         -- last progress record

    queued_at        INTEGER NOT NULL,
    started_at       INTEGER,
    ended_at         INTEGER
);
-- the queue: next queued run
CREATE INDEX runs_queue ON runs(status, queue_pos);
-- experiment list with progress counts
CREATE INDEX runs_experiment_status ON runs(experiment_id, superseded, status);
-- run comparison grouped by variant x limit x dim x batch
CREATE INDEX runs_compare ON runs(experiment_id, system, mem_limit_bytes, feature_dim, batch_size, model, fanout);

-- epochs: one row per EpochRecord (engine/metrics/records.go).
CREATE TABLE epochs (
    run_id             INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    epoch              INTEGER NOT NULL,
    warmup             INTEGER NOT NULL DEFAULT 0,
    epoch_s            REAL    NOT NULL,
    sample_s           REAL    NOT NULL DEFAULT 0,
    extract_s          REAL    NOT NULL DEFAULT 0,
    train_s            REAL    NOT NULL DEFAULT 0,
    stall_s            REAL    NOT NULL DEFAULT 0,
    batches            INTEGER NOT NULL DEFAULT 0,
    bytes_needed       INTEGER NOT NULL DEFAULT 0,
    bytes_read         INTEGER NOT NULL DEFAULT 0,
    read_amplification REAL    NOT NULL DEFAULT 0,
    train_loss         REAL    NOT NULL DEFAULT 0,
    train_acc          REAL    NOT NULL DEFAULT 0,
    val_acc            REAL    NOT NULL DEFAULT 0,
    test_acc           REAL    NOT NULL DEFAULT 0,
    eval_s             REAL    NOT NULL DEFAULT 0,
    wall_s             REAL    NOT NULL DEFAULT 0,
    stages_json        TEXT    NOT NULL DEFAULT '{}',  -- variant stage seconds
    tiers_json         TEXT    NOT NULL DEFAULT '{}',  -- tier -> {lookups, hits}
    received_at        INTEGER NOT NULL,
    PRIMARY KEY (run_id, epoch)
) WITHOUT ROWID;

-- samples: one row per second of a run (SampleRecord).
CREATE TABLE samples (
    run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    t              REAL    NOT NULL,   -- seconds since the run started
    cpu_pct        REAL    NOT NULL DEFAULT 0,
    iowait_pct     REAL    NOT NULL DEFAULT 0,
    rss_bytes      INTEGER NOT NULL DEFAULT 0,
    cgroup_bytes   INTEGER NOT NULL DEFAULT 0,
    disk_read_mbps REAL    NOT NULL DEFAULT 0,
    gpu_util_pct   REAL,               -- NULL without a GPU
    gpu_mem_bytes  INTEGER,            -- NULL without a GPU
    PRIMARY KEY (run_id, t)
) WITHOUT ROWID;

-- run_events: the event log behind live updates. id is the event id a
-- dashboard resumes from (AUTOINCREMENT: never reused, even after deletes).
-- experiment_id has no foreign key so that an "experiment deleted" event
-- outlives its experiment.
CREATE TABLE run_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    experiment_id INTEGER NOT NULL DEFAULT 0,
    run_id        INTEGER REFERENCES runs(id) ON DELETE CASCADE,
    at            INTEGER NOT NULL,
    kind          TEXT    NOT NULL,   -- experiment, status, epoch, sample, progress, log
    level         TEXT    NOT NULL DEFAULT 'info',
    msg           TEXT    NOT NULL DEFAULT '',
    data_json     TEXT
);
CREATE INDEX run_events_run ON run_events(run_id, id);
CREATE INDEX run_events_experiment ON run_events(experiment_id, id);
