"""Reading a streamed response body: bounded, length-checked, decompressed here.

A cut-off compressed body is recognized as cut off.

urllib3 decompresses gzip and deflate itself, but a gzip stream that ends before its
trailer (a connection dropped mid-body, a proxy that truncated it with a Content-Length of
the truncated size) decodes without an error into a shorter body, which would be archived
and parsed as a good 200. Here the encoded bytes are counted against the Content-Length
(which counts encoded bytes) and the decompressor must reach the end of every stream.

The length checked is always the length received, before anything (redaction) changes
the body.
"""

import zlib
from collections.abc import Iterator

import requests
import urllib3.exceptions

# Bigger than any page or API response we read (a GCP catalog page of 5000 SKUs is ~6 MB):
# a response past it is cut off and failed, never buffered whole.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
# What the client accepts (sent as Accept-Encoding): the encodings decoded below.
ACCEPT_ENCODING = "gzip, deflate"
_CHUNK = 1 << 16


class TooLarge(Exception):
    """The response body is over the client's `max_bytes`."""


class _IncompleteBody(requests.exceptions.ChunkedEncodingError):
    """The body ended before its Content-Length, or a compressed one before its stream's end.

    Retried, like any network error.

    Its class name is part of the error text (`_IncompleteBody: body of 3 bytes, ...`).
    """


class _UnsupportedEncoding(requests.exceptions.ContentDecodingError):
    """A Content-Encoding we did not ask for and cannot decode (not retried)."""


class _Decoder:
    """Decompresses one Content-Encoding, knows whether every stream was complete."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._gzip = encoding in ("gzip", "x-gzip")
        self._zlib = self._new()
        self._later_member = False  # a gzip member after the first one began
        self._done = False  # trailing garbage after the last member: the rest is ignored
        self._first = True  # deflate: zlib wrapper or raw stream not decided yet

    def _new(self):  # noqa: ANN202 - zlib's decompressor type is not public
        if self._gzip:
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        return zlib.decompressobj(zlib.MAX_WBITS)

    def feed(self, data: bytes, limit: int) -> bytes:
        """Decompress `data`; at most `limit` + 1 bytes out (the caller caps the total)."""
        out = []
        while data and not self._done:
            if self._zlib.eof:
                if not self._gzip:
                    break  # anything after a deflate stream is ignored, as urllib3 does
                self._zlib = self._new()  # concatenated gzip members are one body
                self._later_member = True
            try:
                chunk = self._zlib.decompress(data, limit + 1)
            except zlib.error:
                if self._later_member:
                    # Garbage (or NUL padding) after a complete first member: ignored, as
                    # urllib3 and gzip tools do; the body so far is whole.
                    self._done = True
                    break
                if self._gzip or not self._first:
                    raise
                # Some servers send raw deflate for "deflate" (no zlib header).
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                chunk = self._zlib.decompress(data, limit + 1)
            self._first = False
            out.append(chunk)
            limit -= len(chunk)
            if limit < 0:
                break
            data = self._zlib.unconsumed_tail or (self._zlib.unused_data if self._zlib.eof else b"")
        return b"".join(out)

    def complete(self) -> bool:
        """Whether the last stream reached its end (a gzip trailer, a final deflate block)."""
        return self._done or self._zlib.eof


def _raw_chunks(response: requests.Response) -> Iterator[bytes]:
    """The body's bytes as sent (still encoded), as requests' iter_content would wrap errors."""
    raw = response.raw
    try:
        yield from raw.stream(_CHUNK, decode_content=False)
    except urllib3.exceptions.ProtocolError as exc:
        raise requests.exceptions.ChunkedEncodingError(exc) from exc
    except urllib3.exceptions.ReadTimeoutError as exc:
        raise requests.exceptions.ConnectionError(exc) from exc
    except urllib3.exceptions.SSLError as exc:
        raise requests.exceptions.SSLError(exc) from exc


def content_encoding(response: requests.Response) -> str:
    """The response's Content-Encoding, lower-cased ("identity" when absent)."""
    value = (response.headers.get("Content-Encoding") or "").strip().lower()
    return value or "identity"


def read_body(response: requests.Response, max_bytes: int) -> bytes:
    """The whole body, at most `max_bytes` of it (decompressed), checked for length.

    Raises:
        TooLarge: The body is (or announces itself as) bigger than `max_bytes`.
        _IncompleteBody: Fewer bytes arrived than the Content-Length announced, or a
            gzip/deflate body ended before the end of its stream.
        _UnsupportedEncoding: A Content-Encoding other than gzip, deflate or identity.
    """
    try:
        announced = int(response.headers.get("Content-Length", ""))
    except ValueError:
        announced = None
    if announced is not None and announced > max_bytes:
        response.close()
        raise TooLarge(f"response of {announced} bytes is over the {max_bytes} cap")
    encoding = content_encoding(response)
    if encoding not in ("identity", "gzip", "x-gzip", "deflate"):
        response.close()
        raise _UnsupportedEncoding(f"Content-Encoding {encoding!r} was not asked for")
    decoder = None if encoding == "identity" else _Decoder(encoding)
    chunks, size, received = [], 0, 0
    try:
        for raw in _raw_chunks(response):
            received += len(raw)
            chunk = raw if decoder is None else decoder.feed(raw, max_bytes - size)
            size += len(chunk)
            if size > max_bytes or received > max_bytes:
                response.close()
                raise TooLarge(f"response over the {max_bytes}-byte cap; cut off")
            chunks.append(chunk)
    except zlib.error as exc:
        raise requests.exceptions.ContentDecodingError(
            f"{encoding} body does not decode: {exc}"
        ) from exc
    # urllib3 checks the length too (it counts the encoded bytes, as the header does).
    if announced is not None and received < announced:
        raise _IncompleteBody(f"body of {received} bytes, Content-Length {announced}")
    if decoder is not None and received and not decoder.complete():
        raise _IncompleteBody(f"{encoding} body of {received} bytes ends before its stream does")
    return b"".join(chunks)
