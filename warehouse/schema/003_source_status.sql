-- 003: one row per source (a cloud provider, ...): its latest load attempt and when it last
-- succeeded, so a failed provider's last good data can be shown as stale with its age.
-- Replaced per source on every attempt, so reruns leave row counts unchanged.
CREATE TABLE source_status (
    source VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    attempted_at TIMESTAMP NOT NULL,
    status VARCHAR NOT NULL,
    rows INTEGER,
    detail VARCHAR,
    last_ok_at TIMESTAMP
);
