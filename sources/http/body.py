"""Reading a streamed response body: bounded in size and checked against its Content-Length."""

import requests

# Bigger than any page or API response we read (a GCP catalog page of 5000 SKUs is ~6 MB):
# a response past it is cut off and failed, never buffered whole.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


class TooLarge(Exception):
    """The response body is over the client's `max_bytes`."""


class _IncompleteBody(requests.exceptions.ChunkedEncodingError):
    """The body ended before the Content-Length the server announced (retried).

    Its class name is part of the error text (`_IncompleteBody: body of 3 bytes, ...`).
    """


def read_body(response: requests.Response, max_bytes: int) -> bytes:
    """The whole body, at most `max_bytes` of it (decompressed), checked for length.

    Raises:
        TooLarge: The body is (or announces itself as) bigger than `max_bytes`.
        _IncompleteBody: Fewer bytes arrived than the Content-Length announced.
    """
    try:
        announced = int(response.headers.get("Content-Length", ""))
    except ValueError:
        announced = None
    if announced is not None and announced > max_bytes:
        response.close()
        raise TooLarge(f"response of {announced} bytes is over the {max_bytes} cap")
    chunks, size = [], 0
    for chunk in response.iter_content(chunk_size=1 << 16):
        size += len(chunk)
        if size > max_bytes:
            response.close()
            raise TooLarge(f"response over the {max_bytes}-byte cap; cut off")
        chunks.append(chunk)
    content = b"".join(chunks)
    # urllib3 checks this too; an encoded body's length is of the encoded bytes, so the
    # check is only exact without Content-Encoding.
    encoded = response.headers.get("Content-Encoding", "identity") not in ("", "identity")
    if announced is not None and not encoded and len(content) < announced:
        raise _IncompleteBody(f"body of {len(content)} bytes, Content-Length {announced}")
    return content
