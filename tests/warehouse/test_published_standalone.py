"""The published snapshot stands alone: copied elsewhere it answers every table, and a reader
keeps the release it opened while later publishes come and go (issue 26 item 6).

The copy test reads the session's bundled build (`built`); the others publish a small
warehouse of their own.
"""

import datetime as dt
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.warehouse.test_publish import load_day
from warehouse.db import connect
from warehouse.export import open_published
from warehouse.publish import publish
from warehouse.release import CURRENT, MANIFEST, Retention, collect_garbage


def contents(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[int, int]]:
    """Every table and view: its rows and an order-independent hash of all their values.

    Reading every value (not only a count, which Parquet metadata can answer) proves the
    views' files are all there and readable.
    """
    names = con.sql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
        "ORDER BY table_name"
    ).fetchall()
    return {
        name: con.sql(f'SELECT count(*), bit_xor(hash(t)) FROM "{name}" t').fetchall()[0]
        for (name,) in names
    }


def test_the_published_folder_copied_elsewhere_answers_every_table(built, tmp_path, monkeypatch):
    with open_published(built.published) as con:
        expected = contents(con)
        views = con.sql(
            "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'"
        ).fetchall()
    assert len(expected) >= 40 and expected["price_observations"][0] > 0
    # No view names where the build ran: every Parquet path is relative to the folder.
    for name, sql in views:
        assert str(built.root) not in sql and "read_parquet('/" not in sql, (name, sql)

    # Copy the folder as a user would (cp -r follows the link to the current release), copy
    # that copy somewhere else again, and delete the first: nothing of the build is read.
    first = tmp_path / "first"
    shutil.copytree(built.published, first)
    moved = tmp_path / "somewhere" / "else"
    shutil.copytree(first, moved)
    shutil.rmtree(first)

    with open_published(moved) as con:
        assert contents(con) == expected
    # A reader with no setting at all (the DuckDB CLI, say) opened from inside the folder.
    monkeypatch.chdir(moved)
    with duckdb.connect("gpuvalue.duckdb", read_only=True) as con:
        assert contents(con) == expected
    # From anywhere else it must say where the files are (DuckDB resolves relative paths
    # against the working directory, not the database file); the views tell how.
    monkeypatch.chdir(tmp_path)
    with duckdb.connect(str(moved / "gpuvalue.duckdb"), read_only=True) as con:
        with pytest.raises(duckdb.IOException, match="parquet/price_observations"):
            con.sql("SELECT count(*) FROM price_observations").fetchall()
        comment = con.sql(
            "SELECT comment FROM duckdb_views() WHERE view_name = 'price_observations'"
        ).fetchall()[0][0]
        assert "file_search_path" in comment and "open_published" in comment


def snapshot(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.sql(
        "SELECT count(*), sum(price_usd), min(observed_at), max(observed_at) "
        "FROM price_observations"
    ).fetchall()


def test_a_reader_keeps_its_snapshot_through_three_more_publishes(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    load_day(con, "2026-01-10")
    out = tmp_path / "published"
    publish(con, out)
    reader = open_published(out)  # opened on release 1, through the link to `current`
    before = snapshot(reader)
    assert before[0][0] == 6
    # January is rewritten twice (new days in it), February is new.
    for day in ("2026-01-11", "2026-01-12", "2026-02-01"):
        load_day(con, day)
        publish(con, out)
    # Three publishes later the reader still reads release 1, whole and unchanged: its views
    # read the Parquet of the folder it opened, not what `current` shows now.
    assert snapshot(reader) == before
    fresh = open_published(out)
    assert snapshot(fresh)[0][0] == 24
    fresh.close()
    releases = tmp_path / "releases"
    # All four are kept: none was superseded more than a week ago.
    assert len(list(releases.glob("r-*"))) == 4

    # Retention is what bounds a reader's life: once release 1 goes, its reader fails
    # loudly (never reads another release's files instead).
    load_day(con, "2026-02-02")
    publish(con, out, keep=Retention(days=0))
    assert sorted(p.name for p in releases.glob("r-*")) == ["r-000003", "r-000004", "r-000005"]
    with pytest.raises(duckdb.Error):
        snapshot(reader)
    reader.close()


def fake_release(releases: Path, number: int, created_at: dt.datetime | None) -> None:
    folder = releases / f"r-{number:06d}"
    folder.mkdir(parents=True)
    if created_at is not None:
        manifest = {"release": folder.name, "created_at": created_at.isoformat()}
        (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


def test_a_release_is_kept_until_a_week_after_the_next_one_replaced_it(tmp_path):
    releases = tmp_path / "releases"
    day0 = dt.datetime(2026, 10, 1, 3, tzinfo=dt.UTC)
    made = {1: 0, 2: 1, 3: 9, 4: 10, 5: 15, 6: 16}  # release -> day it was committed
    for number, day in made.items():
        fake_release(releases, number, day0 + dt.timedelta(days=day))
    fake_release(releases, 7, None)  # staged by a killed publish: newer than current
    (releases / CURRENT).symlink_to("r-000006")
    now = day0 + dt.timedelta(days=16, hours=1)

    collect_garbage(releases, Retention(releases=2, days=7), now=now)

    # 6 and 5: the last two. 4: replaced by 5 a day ago. 3: replaced by 4 six days ago.
    # 2: replaced by 3 seven days and an hour ago. 1: long ago. 7: never committed.
    assert sorted(p.name for p in releases.glob("r-*")) == [
        "r-000003",
        "r-000004",
        "r-000005",
        "r-000006",
    ]
