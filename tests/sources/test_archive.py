import datetime as dt
import json
import threading

import pytest

from sources.archive import (
    REDACTED,
    Archive,
    ArchiveError,
    redact_headers,
    redact_text,
    redact_url,
)

T0 = dt.datetime(2025, 1, 31, 23, 59, 58, 123456, tzinfo=dt.UTC)
DAY = T0.date()


def index_lines(archive: Archive, day: dt.date) -> list[dict]:
    text = (archive.root / day.isoformat() / "index.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_round_trip_in_index_order_with_metadata(tmp_path):
    archive = Archive(tmp_path)
    first = archive.store(
        "https://www.amazon.com/s?k=rtx+4090",
        200,
        b"<html>page one</html>",
        T0,
        "amazon",
        headers={"Content-Type": "text/html; charset=utf-8"},
    )
    second = archive.store("https://www.ebay.com/sch/i.html?_nkw=4090", 503, b"busy", T0, "ebay")

    assert archive.days() == [DAY]
    got = archive.responses(DAY)
    assert got == [first, second]
    assert [r.read() for r in got] == [b"<html>page one</html>", b"busy"]
    assert got[0].content_type == "text/html; charset=utf-8"
    assert got[1].content_type is None
    assert got[0].fetched_at == T0 and got[0].fetched_at.tzinfo is not None
    assert got[0].url == "https://www.amazon.com/s?k=rtx+4090"  # "k" is not a secret
    assert got[1].status == 503
    assert got[0].path == tmp_path / "2025-01-31" / f"{got[0].sha256}.bin"

    line = index_lines(archive, DAY)[0]
    assert line["fetched_at"] == "2025-01-31T23:59:58.123456Z"
    assert line["size"] == len(b"<html>page one</html>")
    assert set(line) >= {"url", "status", "fetched_at", "source", "sha256", "size", "content_type"}


def test_source_filter_and_empty_day(tmp_path):
    archive = Archive(tmp_path)
    archive.store("https://a.example/1", 200, b"a", T0, "amazon")
    archive.store("https://e.example/1", 200, b"e", T0, "ebay")
    archive.store("https://a.example/2", 200, b"a2", T0, "amazon")

    assert [r.url for r in archive.responses(DAY, source="amazon")] == [
        "https://a.example/1",
        "https://a.example/2",
    ]
    assert archive.responses(DAY, source="azure") == []
    assert archive.responses(dt.date(2020, 1, 1)) == []
    assert Archive(tmp_path / "nothing-yet").days() == []


def test_identical_bytes_stored_once_per_day(tmp_path):
    archive = Archive(tmp_path)
    next_day = T0 + dt.timedelta(seconds=5)  # crosses midnight UTC
    a = archive.store("https://x.example/a", 200, b"same", T0, "s")
    b = archive.store("https://x.example/b", 200, b"same", T0, "s")
    c = archive.store("https://x.example/c", 200, b"same", next_day, "s")

    assert a.path == b.path != c.path
    assert archive.days() == [DAY, next_day.date()]
    assert sorted(p.name for p in (tmp_path / "2025-01-31").iterdir()) == [
        f"{a.sha256}.bin",
        "index.jsonl",
    ]
    assert len(archive.responses(DAY)) == 2
    assert archive.responses(next_day.date())[0].read() == b"same"


def test_day_is_the_utc_date(tmp_path):
    archive = Archive(tmp_path)
    # 2025-02-01 01:00 in UTC+02:00 is still 2025-01-31 in UTC.
    local = dt.datetime(2025, 2, 1, 1, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    stored = archive.store("https://x.example/", 200, b"x", local, "s")
    assert archive.days() == [dt.date(2025, 1, 31)]
    assert stored.fetched_at == local and stored.fetched_at.utcoffset() == dt.timedelta(0)


def test_naive_datetime_rejected(tmp_path):
    with pytest.raises(ValueError, match="timezone-aware"):
        Archive(tmp_path).store("https://x.example/", 200, b"x", dt.datetime(2025, 1, 1), "s")


def test_corrupt_blob_raises_naming_day_and_sha(tmp_path):
    archive = Archive(tmp_path)
    stored = archive.store("https://x.example/", 200, b"original bytes", T0, "s")
    stored.path.write_bytes(b"tampered bytes")

    with pytest.raises(ArchiveError) as info:
        archive.responses(DAY)
    assert "2025-01-31" in str(info.value) and stored.sha256 in str(info.value)
    with pytest.raises(ArchiveError, match=stored.sha256):
        stored.read()


def test_missing_blob_raises_naming_day_and_sha(tmp_path):
    archive = Archive(tmp_path)
    stored = archive.store("https://x.example/", 200, b"bytes", T0, "s")
    stored.path.unlink()

    with pytest.raises(ArchiveError, match=rf"2025-01-31.*{stored.sha256}.*missing"):
        archive.responses(DAY)
    with pytest.raises(ArchiveError, match="missing"):
        stored.read()


def test_damaged_existing_blob_is_rewritten_on_next_store(tmp_path):
    archive = Archive(tmp_path)
    stored = archive.store("https://x.example/", 200, b"bytes", T0, "s")
    stored.path.write_bytes(b"damaged")
    archive.store("https://x.example/again", 200, b"bytes", T0, "s")
    assert [r.read() for r in archive.responses(DAY)] == [b"bytes", b"bytes"]


@pytest.mark.parametrize(
    "bad_line",
    [
        "not json\n",
        '{"url": "u"}\n',
        '{"url": "u", "status": 200, "fetched_at": "2025-01-31T00:00:00Z", "source": "s",'
        ' "sha256": "../../etc/passwd"}\n',
        '{"url": "u", "status": 200, "fetched_at": "2025-01-31T00:00:00", "source": "s",'
        f' "sha256": "{"0" * 64}"}}\n',
        '{"url": "u"',  # torn: a write interrupted before its newline
    ],
)
def test_malformed_index_line_raises(tmp_path, bad_line):
    archive = Archive(tmp_path)
    archive.store("https://x.example/", 200, b"ok", T0, "s")
    with (tmp_path / "2025-01-31" / "index.jsonl").open("a") as handle:
        handle.write(bad_line)
    with pytest.raises(ArchiveError, match="2025-01-31"):
        archive.responses(DAY)


def test_no_temp_files_left_and_concurrent_stores_do_not_interleave(tmp_path):
    archive = Archive(tmp_path)

    def worker(n: int) -> None:
        for i in range(25):
            archive.store(f"https://x.example/{n}/{i}", 200, f"{n}-{i % 5}".encode(), T0, "s")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    responses = archive.responses(DAY)
    assert len(responses) == 200
    assert len({r.url for r in responses}) == 200
    day_dir = tmp_path / "2025-01-31"
    assert not [p for p in day_dir.iterdir() if p.name.startswith(".tmp-")]
    assert len(list(day_dir.glob("*.bin"))) == 8 * 5


def test_secrets_never_reach_the_disk(tmp_path):
    archive = Archive(tmp_path)
    stored = archive.store(
        "https://user:hunter2@api.example/v1/items?q=rtx&token=abc123&API_KEY=k1"
        "&client_secret=s3cr3t&X-Amz-Signature=sig9&keywords=4090#access_token=frag7",
        200,
        b"{}",
        T0,
        "api",
        headers={
            "Content-Type": "application/json",
            "Authorization": "Bearer bearer-secret",
            "Set-Cookie": "session=cookie-secret",
            "Cookie": "a=cookie2",
            "X-Api-Key": "apikey-secret",
            "X-Amz-Security-Token": "sts-secret",
            "X-Client-Secret": "client-secret-header",
            "Location": "https://api.example/next?access_token=loc-secret",
            "X-Request-Id": "req-1",
        },
    )
    assert stored.url == (
        f"https://user:{REDACTED}@api.example/v1/items?q=rtx&token={REDACTED}"
        f"&API_KEY={REDACTED}&client_secret={REDACTED}&X-Amz-Signature={REDACTED}"
        f"&keywords=4090#access_token={REDACTED}"
    )
    assert dict(stored.headers) == {
        "Content-Type": "application/json",
        "Location": f"https://api.example/next?access_token={REDACTED}",
        "X-Request-Id": "req-1",
    }
    on_disk = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    for secret in (
        b"hunter2",
        b"abc123",
        b"k1&",
        b"s3cr3t",
        b"sig9",
        b"frag7",
        b"bearer-secret",
        b"cookie-secret",
        b"cookie2",
        b"apikey-secret",
        b"sts-secret",
        b"client-secret-header",
        b"loc-secret",
        b"Authorization",
    ):
        assert secret not in on_disk, secret
    assert archive.responses(DAY)[0].headers == stored.headers


def test_redaction_helpers():
    assert redact_url("https://x.example/p?a=1&b=2") == "https://x.example/p?a=1&b=2"
    assert redact_url("https://x.example/?access_token=t&signature=s&key=k&_nkw=rtx") == (
        f"https://x.example/?access_token={REDACTED}&signature={REDACTED}&key={REDACTED}&_nkw=rtx"
    )
    message = "Max retries exceeded with url: /v1?secret=zzz&page=2 (Caused by ReadTimeout)"
    assert redact_text(message) == (
        f"Max retries exceeded with url: /v1?secret={REDACTED}&page=2 (Caused by ReadTimeout)"
    )
    assert redact_headers({"X-Auth-Token": "t", "Accept": "text/html"}) == {"Accept": "text/html"}
    assert redact_headers(None) == {}
