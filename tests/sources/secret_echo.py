"""Credentials and the ways a server can echo them, for the redaction tests.

Written independently of `sources.redaction`: the encodings are made with the standard
library (urllib.parse, json, html, base64), and what must never be found again after
redaction is worked out by difference (the base64 characters that change when the
secret's bytes change), not with the module's own arithmetic.
"""

import base64
import html
import json
from urllib.parse import quote, quote_plus, urlencode

# Shaped like the real ones (lengths, alphabets), with the characters that encodings
# treat specially: / + = & . _ - and a space in none (no real key has one; see
# test_redaction for a value with a space).
SECRETS = {
    "AWS_ACCESS_KEY_ID": "AKIAECHOTEST0000EXMP",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzEXAMPLEKEY",
    "AWS_SESSION_TOKEN": "FwoGZXIvYXdzEJr//////////wEaDM+echo=token&x",
    "GCP_API_KEY": "AIzaSyEchoTest-0123456789_abcdefghijk",
    "LAMBDA_API_KEY": "secret_echo_5f0c2a8e9d.b71f4c3a",
    "RUNPOD_API_KEY": "rpa_ECHOTEST0123456789ABCDEFGHIJ",
    "VAST_API_KEY": "c0ffee1234567890abcdef1234567890abcdef12",
    "EBAY_CLIENT_ID": "GpuValue-echo-PRD-0a1b2c3d4-e5f6a7b8",
    "EBAY_CLIENT_SECRET": "PRD-0a1b2c3d4e5f-6a7b-8c9d-0e1f",
}

_NAMED = {"/": "&sol;", "+": "&plus;", "=": "&equals;", "&": "&amp;", ".": "&period;"}
_NAMED.update({"_": "&lowbar;", ":": "&colon;", "-": "&#45;"})


def _b64(data: bytes, *, urlsafe: bool = False, pad: bool = True) -> str:
    text = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(data).decode()
    return text if pad else text.rstrip("=")


def forms(secret: str) -> dict[str, str]:
    """Every standalone encoding of `secret` a response could carry."""
    raw = secret.encode()
    mid = len(secret) // 2
    out = {
        "raw": secret,
        "upper": secret.upper(),
        "lower": secret.lower(),
        "percent": quote(secret, safe=""),
        "percent_lower": "".join(
            part[:1] + part[1:3].lower() + part[3:] if part.startswith("%") else part
            for part in _percent_parts(quote(secret, safe=""))
        ),
        "percent_every_char": "".join(f"%{b:02X}" for b in raw),
        "percent_every_char_lower": "".join(f"%{b:02x}" for b in raw),
        "form": urlencode({"k": secret})[2:],
        "plus": quote_plus(secret),
        "half_percent": secret[:mid] + "".join(f"%{b:02x}" for b in raw[mid:]),
        "json_u": "".join(f"\\u{ord(c):04x}" for c in secret),
        "json_u_upper": "".join(f"\\u{ord(c):04X}" for c in secret),
        "json_slash": json.dumps(secret)[1:-1].replace("/", "\\/"),
        "html": html.escape(secret),
        "html_named": "".join(_NAMED.get(c, c) for c in secret),
        "html_decimal": "".join(f"&#{ord(c)};" for c in secret),
        "html_decimal_zeros": "".join(f"&#00{ord(c)};" for c in secret),
        "html_hex": "".join(f"&#x{ord(c):x};" for c in secret),
        "html_hex_upper": "".join(f"&#X{ord(c):X};" for c in secret),
        "json_of_percent": "".join(f"\\u0025{b:02X}" for b in raw),
        "html_of_percent": "".join(f"&#37;{b:02x}" for b in raw),
    }
    for urlsafe in (False, True):
        for pad in (True, False):
            name = f"base64{'_urlsafe' if urlsafe else ''}{'' if pad else '_unpadded'}"
            out[name] = _b64(raw, urlsafe=urlsafe, pad=pad)
    out["base64_in_url"] = quote(_b64(raw), safe="")
    out["base64_json_escaped"] = _b64(raw).replace("/", "\\/")
    return out


def _percent_parts(text: str) -> list[str]:
    parts, index = [], 0
    while index < len(text):
        if text[index] == "%":
            parts.append(text[index : index + 3])
            index += 3
        else:
            parts.append(text[index])
            index += 1
    return parts


def carrying_span(blob: bytes, start: int, size: int, *, urlsafe: bool = False) -> str:
    """The base64 characters of `blob` that change when its bytes [start, start+size) do."""
    other = blob[:start] + bytes(b ^ 0x55 for b in blob[start : start + size])
    other += blob[start + size :]
    encoded, changed = _b64(blob, urlsafe=urlsafe), _b64(other, urlsafe=urlsafe)
    moved = [i for i, (a, b) in enumerate(zip(encoded, changed, strict=True)) if a != b]
    return encoded[moved[0] : moved[-1] + 1]


def blobs(secret: str) -> dict[str, tuple[str, str]]:
    """Base64 blobs that hold `secret` among other bytes: name -> (blob, must-not-remain).

    The second string is the run of base64 characters that carry the secret's bits (found
    by changing the secret's bytes and seeing which characters change).
    """
    raw = secret.encode()
    blob_bytes = {
        "basic_auth": b"gpuvalue-us:" + raw,
        "basic_auth_offset_1": b"gpuvalue-usr:" + raw,
        "basic_auth_offset_2": b"gpuvalue-user:" + raw,
        "json_request": json.dumps({"headers": {"Authorization": f"Bearer {secret}"}}).encode(),
        "json_request_offset_1": json.dumps({"h": {"X-Api-Key": secret}, "n": 1}).encode(),
        "json_request_offset_2": json.dumps({"hh": {"X-Api-Key": secret}}).encode(),
        "query_string": ("q=rtx&" + urlencode({"key": secret}) + "&page=2").encode(),
    }
    out = {}
    for name, blob in blob_bytes.items():
        where = blob.find(raw)
        if where == -1:  # URL-encoded inside the blob
            encoded = urlencode({"key": secret})[4:].encode()
            where, size = blob.find(encoded), len(encoded)
        else:
            size = len(raw)
        for urlsafe in (False, True):
            span = carrying_span(blob, where, size, urlsafe=urlsafe)
            out[f"{name}{'_urlsafe' if urlsafe else ''}"] = (_b64(blob, urlsafe=urlsafe), span)
    # MIME: wrapped every 76 characters, the way an email or a PEM-like dump carries it.
    # The needle is each wrapped line that carries some of the secret's bits.
    long_blob = b"x" * 50 + raw + b"y" * 50
    mime = base64.encodebytes(long_blob).decode()
    other = base64.encodebytes(b"x" * 50 + bytes(b ^ 0x55 for b in raw) + b"y" * 50).decode()
    lines = [a for a, b in zip(mime.splitlines(), other.splitlines(), strict=True) if a != b]
    out["mime_wrapped"] = (mime, max(lines, key=len))
    return out


def needles(secrets) -> list[bytes]:
    """What must not be found anywhere written, for each of `secrets`.

    One line each (a wrapped blob is represented by its lines that carry the secret).
    """
    found: set[bytes] = set()
    for secret in secrets:
        found |= {form.encode() for form in forms(secret).values()}
        for blob, span in blobs(secret).values():
            found |= {blob.encode(), span.encode()}
    return sorted(needle for needle in found if b"\n" not in needle)


def echoes(secret: str) -> dict[str, str]:
    """Every way of echoing `secret`, standalone forms and blobs: name -> text."""
    out = dict(forms(secret))
    out.update({name: blob for name, (blob, _) in blobs(secret).items()})
    return out


def leaks(data: bytes, wanted: list[bytes]) -> list[bytes]:
    """The needles of `wanted` present in `data`."""
    return [needle for needle in wanted if needle in data]
