"""The results store's tables (docs/results.md): the schema a new store is created with,
the columns added to it since, and the statuses a run and a phase can have."""

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    test TEXT NOT NULL,
    created TEXT NOT NULL,
    finished TEXT,
    status TEXT NOT NULL CHECK (status IN ('running','complete','interrupted','failed')),
    methodology_version TEXT NOT NULL,
    testbed TEXT,
    tool_version TEXT NOT NULL,
    engine_version TEXT,
    args TEXT NOT NULL,
    error TEXT,
    pid INTEGER,
    host TEXT,
    pid_start TEXT
);
CREATE TABLE IF NOT EXISTS run_drives (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    position INTEGER NOT NULL,
    spec TEXT NOT NULL,
    identity TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running','complete','interrupted','failed')),
    UNIQUE (run_id, position)
);
CREATE TABLE IF NOT EXISTS phases (
    id INTEGER PRIMARY KEY,
    run_drive_id INTEGER NOT NULL REFERENCES run_drives(id),
    seq INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    spec TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('complete','partial')),
    totals TEXT NOT NULL,
    latency TEXT NOT NULL,
    recorded TEXT NOT NULL,
    UNIQUE (run_drive_id, seq)
);
CREATE TABLE IF NOT EXISTS series (
    phase_id INTEGER NOT NULL REFERENCES phases(id),
    axis TEXT NOT NULL CHECK (axis IN ('time','segment')),
    name TEXT NOT NULL,
    n INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (phase_id, axis, name)
);
CREATE TABLE IF NOT EXISTS histograms (
    phase_id INTEGER PRIMARY KEY REFERENCES phases(id),
    edges_us BLOB NOT NULL,
    counts BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS metrics (
    run_drive_id INTEGER NOT NULL REFERENCES run_drives(id),
    name TEXT NOT NULL,
    value REAL,
    json TEXT,
    PRIMARY KEY (run_drive_id, name)
);
CREATE INDEX IF NOT EXISTS phases_by_drive ON phases (run_drive_id, seq);
"""

STATUSES = ("running", "complete", "interrupted", "failed")
PHASE_STATUSES = ("complete", "partial")
# added after schema version 1 was released: added to older stores when they are written
RUN_COLUMNS_ADDED = (("pid", "INTEGER"), ("host", "TEXT"), ("pid_start", "TEXT"), ("token", "TEXT"))
