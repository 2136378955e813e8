"""The warehouse setting (warehouse/location.py) and the DuckLake translation (warehouse/db.py).

Pure tests in the project's environment: parsing, the statements that attach MotherDuck or
a DuckLake (neither is reachable here: MotherDuck is a service, and DuckDB 2.0 has no
DuckLake extension from a package registry), and the migrations as translated for DuckLake,
run on a DuckDB database to show they build the same tables. The DuckLake itself is
exercised in tests/deploy/test_ducklake.py.
"""

import re

import duckdb
import pytest

from warehouse import db
from warehouse.location import (
    DEFAULT,
    LAKE_ALIAS,
    WarehouseSettingError,
    load_statements,
    packaged_extension,
    parse,
)

PG = "ducklake:postgres:dbname=lake host=db.internal port=5432 user=gpuvalue"


def test_a_path_or_nothing_is_a_duckdb_file():
    assert parse(None).kind == parse("").kind == "duckdb"
    assert parse(None).database == DEFAULT
    file = parse("/srv/gpuvalue/warehouse.duckdb")
    assert (file.kind, file.database, file.attach, file.concurrent_writers) == (
        "duckdb",
        "/srv/gpuvalue/warehouse.duckdb",
        (),
        False,
    )
    assert parse(":memory:").database == ":memory:"


def test_motherduck_is_attached_and_used_by_name():
    md = parse("md:gpuvalue")
    assert md.kind == "motherduck" and md.concurrent_writers
    # The token is never in the statement: the extension reads MOTHERDUCK_TOKEN.
    assert md.attach == ("ATTACH 'md:gpuvalue'", "USE gpuvalue")
    assert md.database == ":memory:" and md.alias == "gpuvalue"
    for bad in ("md:", "md:two words", "md:a;DROP"):
        with pytest.raises(WarehouseSettingError, match="one MotherDuck database"):
            parse(bad)


def test_a_ducklake_on_postgres_attaches_with_its_data_path():
    lake = parse(f"{PG} (DATA_PATH '/srv/lake/', METADATA_SCHEMA 'gpuvalue')")
    assert (lake.kind, lake.catalog, lake.data_path) == ("ducklake", "postgres", "/srv/lake/")
    assert lake.concurrent_writers
    *loads, attach, use = lake.attach
    assert attach == (
        "ATTACH 'ducklake:postgres:dbname=lake host=db.internal port=5432 user=gpuvalue' "
        f"AS {LAKE_ALIAS} (DATA_PATH '/srv/lake/', METADATA_SCHEMA 'gpuvalue')"
    )
    assert use == f"USE {LAKE_ALIAS}"
    # ducklake, then the catalog's scanner: from their packages where installed, else from
    # DuckDB's extension repository.
    assert loads == load_statements(["ducklake", "postgres_scanner"])
    assert "ducklake" in loads[0] and "postgres_scanner" in loads[-1]


def test_ducklake_extensions_load_from_their_package_when_one_is_installed():
    # This environment (DuckDB 2.0) has none; deploy/ducklake's has both (test_ducklake.py).
    if packaged_extension("ducklake") is None:
        assert load_statements(["ducklake"]) == ["INSTALL ducklake", "LOAD ducklake"]
    else:
        assert load_statements(["ducklake"])[0].startswith("LOAD '")


def test_an_object_store_data_path_takes_credentials_from_the_environment():
    lake = parse(f"{PG} (DATA_PATH 's3://gpuvalue-lake/data/')")
    statements = "\n".join(lake.attach)
    assert "httpfs" in statements and "aws" in statements
    assert "PROVIDER credential_chain" in statements
    assert "KEY_ID" not in statements and "SECRET '" not in statements


def test_only_a_database_server_catalog_takes_concurrent_writers():
    assert not parse("ducklake:metadata.ducklake (DATA_PATH 'data/')").concurrent_writers
    assert parse("ducklake:metadata.ducklake (DATA_PATH 'data/')").catalog == "duckdb"
    assert not parse("ducklake:sqlite:meta.sqlite (DATA_PATH 'data/')").concurrent_writers
    assert parse("ducklake:mysql:db=lake host=m (DATA_PATH 'data/')").concurrent_writers


def test_quotes_in_a_data_path_are_escaped():
    lake = parse(f"{PG} (DATA_PATH '/srv/o''brien/')")
    assert lake.data_path == "/srv/o'brien/"
    assert "DATA_PATH '/srv/o''brien/'" in lake.attach[-2]


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (f"{PG} password=hunter2 (DATA_PATH 'x/')", "password="),
        (f"{PG} PASSWORD=hunter2 (DATA_PATH 'x/')", "PASSWORD="),
        ("ducklake:postgres:postgresql://u:hunter2@db/lake (DATA_PATH 'x/')", "user:password@"),
        ("md:gpuvalue?motherduck_token=abc", "motherduck_token="),
    ],
)
def test_a_secret_in_the_setting_is_refused_and_not_echoed(setting, message):
    with pytest.raises(WarehouseSettingError) as err:
        parse(setting)
    assert message in str(err.value)
    assert "hunter2" not in str(err.value) and "abc" not in str(err.value)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (PG, "needs \\(DATA_PATH"),
        (f"{PG} (DATA_PATH '/x', COMPRESSION 'zstd')", "unknown DuckLake option COMPRESSION"),
        (f"{PG} (DATA_PATH /x)", "cannot read the options"),
        ("ducklake:postgres: (DATA_PATH 'x/')", "no catalog database"),
        ("postgres:dbname=lake", "expected a DuckDB file path"),
        ("s3://bucket/gpuvalue.duckdb", "expected a DuckDB file path"),
    ],
)
def test_a_malformed_setting_says_what_is_expected(setting, message):
    with pytest.raises(WarehouseSettingError, match=message):
        parse(setting)


# --- migrations on DuckLake -------------------------------------------------------------


def test_the_translation_changes_only_the_sequence():
    changed = {}
    for _, _, path in db.migrations():
        sql = path.read_text()
        translated = db.ducklake_sql(sql, path.name)
        plain = re.sub(r"--[^\n]*", "", sql)
        if translated != plain:
            changed[path.name] = translated
    assert list(changed) == ["012_publish_changes.sql"]
    assert "nextval" not in changed["012_publish_changes.sql"]
    assert (
        "CREATE TABLE publish_changes_seq (value BIGINT NOT NULL)"
        in changed["012_publish_changes.sql"]
    )


def test_translated_migrations_build_the_same_tables(tmp_path):
    """Every migration, translated, on a DuckDB database: same tables, columns and types."""

    def shape(con):
        return con.sql(
            "SELECT table_name, column_name, data_type, is_nullable "
            "FROM information_schema.columns ORDER BY ALL"
        ).fetchall()

    plain = duckdb.connect(str(tmp_path / "plain.duckdb"))
    db.migrate(plain)
    translated = duckdb.connect(str(tmp_path / "translated.duckdb"))
    for _, _, path in db.migrations():
        translated.sql(db.ducklake_sql(path.read_text(), path.name))
    extra = {"publish_changes_seq"}
    want = [r for r in shape(plain) if r[0] != "schema_version"]
    got = [r for r in shape(translated) if r[0] not in extra]
    assert got == want
    assert translated.sql("SELECT value FROM publish_changes_seq").fetchall() == [(0,)]
    assert db.INTERNAL_TABLES >= extra | {db.WRITE_GUARD, "publish_changes"}


@pytest.mark.parametrize(
    "ddl",
    [
        "CREATE TABLE t (a INTEGER PRIMARY KEY);",
        "CREATE TABLE t (a INTEGER UNIQUE);",
        "CREATE TABLE t (a INTEGER CHECK (a > 0));",
        "CREATE TABLE t (a INTEGER REFERENCES gpus (gpu_id));",
        "CREATE UNIQUE INDEX t_a ON t (a);",
        "SELECT nextval('s');",
    ],
)
def test_a_constraint_duck_lake_cannot_keep_is_refused_by_name(ddl):
    with pytest.raises(db.UnsupportedOnDuckLake, match="099_new.sql"):
        db.ducklake_sql(ddl, "099_new.sql")


def test_a_plain_index_is_left_out_and_comments_do_not_count():
    sql = (
        "-- UNIQUE per day, PRIMARY KEY in spirit\n"
        "CREATE TABLE t (a INTEGER);\nCREATE INDEX t_a ON t (a);\n"
    )
    assert db.ducklake_sql(sql).split() == "CREATE TABLE t (a INTEGER);".split()


def test_on_a_duckdb_file_a_write_runs_once_and_an_error_rolls_back(tmp_path):
    con = db.connect(tmp_path / "w.duckdb")
    assert not db.is_ducklake(con)
    calls = []

    def body():
        calls.append(1)
        con.sql("INSERT INTO input_loads VALUES ('x', now()::TIMESTAMP, 'f', 1, 'd')")
        raise duckdb.TransactionException("Transaction conflict (not a lake: not retried)")

    with pytest.raises(duckdb.TransactionException):
        db.write_transaction(con, body)
    assert calls == [1]
    assert con.sql("SELECT count(*) FROM input_loads").fetchall() == [(0,)]
    # No guard and no counter on a DuckDB file: the sequence is DuckDB's own.
    tables = {t for (t,) in con.sql("SHOW TABLES").fetchall()}
    assert db.WRITE_GUARD not in tables and "publish_changes_seq" not in tables
