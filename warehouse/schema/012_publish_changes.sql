-- 012: which month partitions of the append-only tables a load touched since the last
-- publish. `replace_rows` adds a row for every month it deletes from or inserts into, in the
-- load's own transaction; a publish rewrites only those Parquet partitions and, once its
-- release is committed, deletes the rows it consumed (warehouse/publish.py). Internal: never
-- published.
CREATE SEQUENCE publish_changes_seq;
CREATE TABLE publish_changes (
    seq BIGINT NOT NULL DEFAULT nextval('publish_changes_seq'),
    table_name VARCHAR NOT NULL,
    month DATE                       -- first day of the month; NULL: rows without a date
);
