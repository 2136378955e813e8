"""Content-addressed archive of raw HTTP responses, one folder per UTC day.

Every fetched response is stored here before anything parses it, so a parser fix can re-parse
history and a backfill never re-scrapes (re-scraping today would put today's prices in
yesterday's partition). Layout::

    root/2025-01-31/<sha256>.bin    a response body, stored once per day per distinct content
    root/2025-01-31/index.jsonl     one JSON line per response, in the order they were stored

Nothing secret is written: credentials in query strings, URL user info and headers are
redacted by name, and every credential the process knows (`sources.credentials`) is
redacted by value, in every encoding `sources.redaction` covers, from bodies, headers and
URLs, before anything reaches the disk. The index keeps the size of the body as received
(`received`), so a body shortened by redaction is not taken for a truncated one.
"""

import datetime as dt
import hashlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote_plus

from sources.credentials import known_secrets
from sources.redaction import REDACTED, redact_bytes, redact_str

INDEX_NAME = "index.jsonl"

# Response headers that carry credentials or session state; dropped before storing.
_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"}
)
_SECRET_HEADER_WORDS = ("token", "secret", "password", "api-key", "apikey")
# Query parameter names that carry credentials ("access_token", "client_secret",
# "X-Amz-Signature", "X-Amz-Credential", "password").
_SECRET_PARAM_WORDS = (
    "token",
    "secret",
    "signature",
    "password",
    "passwd",
    "credential",
    "auth",  # auth, oauth_*, Authorization
    "session",
    "api-key",
    "apikey",
)
# Whole names that carry credentials: OAuth authorization codes, short signature names.
_SECRET_PARAM_NAMES = frozenset({"code", "sig", "sid", "key"})
_SHA256 = re.compile(r"[0-9a-f]{64}")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# A `name=value` pair after `?`, `&`, `;` or `#` (fragments carry OAuth implicit-flow tokens).
# The value stops at whitespace and quotes so URLs embedded in error messages redact cleanly.
_PARAM = re.compile(r"(?P<lead>[?&;#])(?P<name>[^=&;#?\s'\"<>]+)=(?P<value>[^&;#\s'\"<>]*)")
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:@/\s]*):(?P<password>[^@/\s]*)@")


class ArchiveError(Exception):
    """The archive is inconsistent: a blob is missing, altered, or an index line is bad."""


def is_secret_param(name: str) -> bool:
    """Whether a query parameter called `name` carries a credential.

    Matches `token`, `access_token`, `secret`, `client_secret`, `signature`, `password`,
    `auth`, `Authorization`, `code`, `session`, and names ending in `key` or `keyid` (`key`,
    `api_key`, `X-Goog-Api-Key`, `AWSAccessKeyId`), but not `keywords` or eBay's `_nkw`.
    """
    lowered = name.lower()
    if any(word in lowered for word in _SECRET_PARAM_WORDS):
        return True
    return lowered.endswith(("key", "keyid")) or lowered in _SECRET_PARAM_NAMES


def redact_secrets(text: str) -> str:
    """`text` with every known credential (in any encoding it may be echoed) replaced."""
    return redact_str(text, known_secrets())


def redact_body(content: bytes) -> bytes:
    """A response body with every known credential (in any encoding) replaced by `REDACTED`."""
    return redact_bytes(content, known_secrets())


def redact_text(text: str) -> str:
    """Replace credentials in `text` (a URL, a log line, an error message).

    Every known credential is replaced by value; query and fragment parameters named like
    secrets get the value `REDACTED`; a password in URL user info (`https://user:pass@host`)
    too. Everything else is left byte for byte, so a redacted URL still identifies the
    page that was fetched.
    """

    def param(match: re.Match[str]) -> str:
        if is_secret_param(unquote_plus(match["name"])):
            return f"{match['lead']}{match['name']}={REDACTED}"
        return match[0]

    text = _USERINFO.sub(lambda m: f"{m['head']}:{REDACTED}@", redact_secrets(text))
    return _PARAM.sub(param, text)


def redact_url(url: str) -> str:
    """`url` with credentials in its query, fragment and user info replaced by `REDACTED`."""
    return redact_text(url)


def is_secret_header(name: str) -> bool:
    """Whether a header called `name` carries credentials or session state."""
    lowered = name.lower()
    return lowered in _SECRET_HEADERS or any(word in lowered for word in _SECRET_HEADER_WORDS)


def redact_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """The headers worth keeping: secret ones dropped, the others redacted.

    Values are redacted by value, and URLs in them (`Location`) by parameter name too.
    """
    if not headers:
        return {}
    return {
        str(name): redact_text(str(value))
        for name, value in headers.items()
        if not is_secret_header(str(name))
    }


def _content_type(headers: Mapping[str, str]) -> str | None:
    for name, value in headers.items():
        if name.lower() == "content-type":
            return value
    return None


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _fsync_dir(directory: Path) -> None:
    # The rename is only durable once the directory entry is; not every platform can open a
    # directory, and losing durability there is acceptable (the index line comes later).
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_atomic(path: Path, content: bytes) -> None:
    """Write `content` to `path` so that readers see either nothing or all of it."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _append_line(path: Path, line: bytes) -> None:
    """Append one complete line with a single O_APPEND write, then fsync.

    One write of the whole line keeps concurrent writers (threads or processes) from
    interleaving inside a line; a short write would leave a torn line, so it is an error.
    """
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = os.write(fd, line)
        if written != len(line):
            raise ArchiveError(f"short write to {path}: {written} of {len(line)} bytes")
        os.fsync(fd)
    finally:
        os.close(fd)


def _iso_z(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class ArchivedResponse:
    """One archived response: where its bytes are and what was fetched.

    Attributes:
        url: The requested URL, credentials redacted.
        status: The HTTP status code.
        fetched_at: When the response arrived (UTC, timezone-aware).
        source: Which fetcher stored it (e.g. "amazon", "ebay", "azure").
        sha256: Hex SHA-256 of the body; also the blob's file name.
        path: The blob file.
        content_type: The response's Content-Type header, if any.
        headers: The stored (non-secret) response headers.
        received_size: Bytes of the body as received, before redaction (None in index
            lines written before it was recorded: then the stored size is all we know).
    """

    url: str
    status: int
    fetched_at: dt.datetime
    source: str
    sha256: str
    path: Path
    content_type: str | None
    headers: Mapping[str, str] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, repr=False
    )
    received_size: int | None = field(default=None, compare=False)

    def read(self) -> bytes:
        """The stored body, checked against its SHA-256.

        Raises:
            ArchiveError: The blob is missing or its bytes no longer match the hash.
        """
        try:
            content = self.path.read_bytes()
        except FileNotFoundError as exc:
            raise ArchiveError(
                f"archive blob {self.sha256} for {self.url} is missing ({self.path})"
            ) from exc
        actual = hashlib.sha256(content).hexdigest()
        if actual != self.sha256:
            raise ArchiveError(
                f"archive blob {self.sha256} for {self.url} is corrupt: its content hashes to "
                f"{actual} ({self.path})"
            )
        return content


class Archive:
    """A content-addressed raw response archive under `root`, one folder per UTC day.

    Safe to share between threads (writes are serialised by a lock) and between processes
    (blobs are renamed into place, index lines are single O_APPEND writes).
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Archive({str(self.root)!r})"

    def store(
        self,
        url: str,
        status: int,
        content: bytes,
        fetched_at: dt.datetime,
        source: str,
        headers: Mapping[str, str] | None = None,
        *,
        received_size: int | None = None,
        redacted: bool = False,
    ) -> ArchivedResponse:
        """Archive one response: the body once per day, then one index line.

        The blob is in place before its index line is written, so a crash in between leaves
        an unreferenced blob, never an index line without its bytes.

        Args:
            url: The requested URL; credentials in it are redacted before writing.
            status: The HTTP status code.
            content: The response body, exactly as received but for known credentials,
                which are replaced by `REDACTED`.
            fetched_at: When the response arrived; must be timezone-aware. Its UTC date
                picks the day folder.
            source: Which fetcher stored it.
            headers: Response headers; secret ones are dropped, the rest redacted.
            received_size: Bytes of the body as received, when `content` was redacted
                before (default: `len(content)` as given).
            redacted: `content` was already redacted by value with the process's known
                secrets (the HTTP client does it before anything parses a body); it is not
                searched again.

        Returns:
            The archived response.

        Raises:
            ValueError: `fetched_at` is naive (its day would be a guess).
        """
        if fetched_at.tzinfo is None or fetched_at.utcoffset() is None:
            raise ValueError(f"fetched_at must be timezone-aware (UTC), got {fetched_at!r}")
        fetched_at = fetched_at.astimezone(dt.UTC)
        day_dir = self.root / fetched_at.date().isoformat()
        received = len(content) if received_size is None else int(received_size)
        # A server that echoes a credential must not get it onto the disk.
        if not redacted:
            content = redact_body(content)
        sha = hashlib.sha256(content).hexdigest()
        blob = day_dir / f"{sha}.bin"
        kept_headers = redact_headers(headers)
        content_type = _content_type(kept_headers)
        safe_url = redact_url(url)
        entry = {
            "url": safe_url,
            "status": int(status),
            "fetched_at": _iso_z(fetched_at),
            "source": source,
            "sha256": sha,
            "size": len(content),
            "received": received,
            "content_type": content_type,
            "headers": kept_headers,
        }
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            day_dir.mkdir(parents=True, exist_ok=True)
            # Re-check an existing blob instead of trusting its name: a damaged copy would
            # otherwise be referenced by every later index line with the same content.
            if not (blob.is_file() and _sha256_file(blob) == sha):
                _write_atomic(blob, content)
            _append_line(day_dir / INDEX_NAME, line)
        return ArchivedResponse(
            url=safe_url,
            status=int(status),
            fetched_at=fetched_at,
            source=source,
            sha256=sha,
            path=blob,
            content_type=content_type,
            headers=MappingProxyType(kept_headers),
            received_size=received,
        )

    def days(self) -> list[dt.date]:
        """The days that have an index, oldest first."""
        if not self.root.is_dir():
            return []
        return sorted(
            dt.date.fromisoformat(child.name)
            for child in self.root.iterdir()
            if _DAY.fullmatch(child.name) and (child / INDEX_NAME).is_file()
        )

    def responses(self, day: dt.date, source: str | None = None) -> list[ArchivedResponse]:
        """The responses archived on `day` (optionally one source's), in index order.

        Every returned entry's blob is checked against its SHA-256 so a corrupt archive fails
        loudly here instead of parsing as an empty or truncated page.

        Raises:
            ArchiveError: An index line is malformed, or a blob is missing or does not match.
        """
        day_dir = self.root / day.isoformat()
        index = day_dir / INDEX_NAME
        if not index.is_file():
            return []
        found = []
        raw = index.read_bytes()
        if raw and not raw.endswith(b"\n"):
            raise ArchiveError(
                f"archive day {day}: {index} ends in a torn line (a write was interrupted)"
            )
        for number, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            entry = self._entry(day, number, line)
            if source is not None and entry["source"] != source:
                continue
            response = ArchivedResponse(
                url=entry["url"],
                status=entry["status"],
                fetched_at=entry["fetched_at"],
                source=entry["source"],
                sha256=entry["sha256"],
                path=day_dir / f"{entry['sha256']}.bin",
                content_type=entry["content_type"],
                headers=MappingProxyType(entry["headers"]),
                received_size=entry["received"],
            )
            self._verify(day, number, response)
            found.append(response)
        return found

    @staticmethod
    def _entry(day: dt.date, number: int, line: bytes) -> dict[str, Any]:
        where = f"archive day {day}: index line {number}"
        try:
            entry = json.loads(line)
            sha = entry["sha256"]
            if not isinstance(sha, str) or not _SHA256.fullmatch(sha):
                # The sha names a file; anything else could point outside the day folder.
                raise ValueError(f"sha256 {sha!r} is not 64 lowercase hex digits")
            fetched_at = dt.datetime.fromisoformat(entry["fetched_at"])
            if fetched_at.tzinfo is None:
                raise ValueError(f"fetched_at {entry['fetched_at']!r} has no timezone")
            return {
                "url": str(entry["url"]),
                "status": int(entry["status"]),
                "fetched_at": fetched_at.astimezone(dt.UTC),
                "source": str(entry["source"]),
                "sha256": sha,
                "content_type": entry.get("content_type"),
                "headers": dict(entry.get("headers") or {}),
                "received": None if entry.get("received") is None else int(entry["received"]),
            }
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ArchiveError(f"{where} is not a valid entry: {exc}") from exc

    @staticmethod
    def _verify(day: dt.date, number: int, response: ArchivedResponse) -> None:
        if not response.path.is_file():
            raise ArchiveError(
                f"archive day {day}: blob {response.sha256} (index line {number}, "
                f"{response.url}) is missing"
            )
        actual = _sha256_file(response.path)
        if actual != response.sha256:
            raise ArchiveError(
                f"archive day {day}: blob {response.sha256} (index line {number}, "
                f"{response.url}) does not match its sha256; its content hashes to {actual}"
            )
