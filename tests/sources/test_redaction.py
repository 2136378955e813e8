"""Redaction by value (sources/redaction.py): every echo form, every context, no false hits."""

import base64
import json
from urllib.parse import quote

import pytest

from sources.archive import redact_headers
from sources.credentials import CREDENTIAL_ENV, known_secrets
from sources.redaction import (
    MIN_SECRET_LENGTH,
    REDACTED,
    base64_cores,
    contains_secret,
    redact_bytes,
    redact_str,
    secret_spans,
)
from tests.paths import FIXTURES_ROOT
from tests.sources.secret_echo import (
    SECRETS,
    blobs,
    carrying_span,
    echoes,
    forms,
    leaks,
    needles,
)

ALL = list(SECRETS.values())
# Where an echo lands: a JSON string, an HTML attribute and text, a URL query, a header
# value, and alone.
CONTEXTS = (
    '{"region": "%s", "price": 1.5}',
    '<div title="%s">GPU %s</div>',
    "https://api.example/v1?a=1&echo=%s&b=2",
    "Bearer %s",
    "%s",
)


def test_every_echo_form_in_every_context_is_redacted_and_nothing_else_changes():
    wanted = needles(ALL)
    cases = 0
    for secret in ALL:
        for name, text in echoes(secret).items():
            for context in CONTEXTS:
                body = context.replace("%s", text).encode()
                out = redact_bytes(body, ALL)
                cases += 1
                assert not leaks(out, wanted), (secret, name, context)
                assert REDACTED.encode() in out, (secret, name, context)
                # What is around the echo is kept byte for byte.
                head, _, tail = context.partition("%s")
                assert out.startswith(head.encode()) or name.startswith("mime")
                assert out.endswith(tail.replace("%s", "").encode()) or "%s" in tail
    assert cases == len(ALL) * len(echoes(ALL[0])) * len(CONTEXTS)
    print(
        f"\nredaction: {cases} cases ({len(echoes(ALL[0]))} forms x {len(ALL)} secrets x "
        f"{len(CONTEXTS)} contexts), 0 leaks"
    )


def test_the_exact_span_is_replaced():
    secret = SECRETS["GCP_API_KEY"]
    body = f'{{"a": "x{secret}y", "b": "{quote(secret, safe="").lower()}"}}'.encode()
    assert redact_bytes(body, ALL) == b'{"a": "xREDACTEDy", "b": "REDACTED"}'
    entity = "".join(f"&#x{ord(c):x};" for c in secret)
    assert redact_str(f"<b>{entity}</b>", ALL) == "<b>REDACTED</b>"
    assert redact_str(f"k={secret.upper()}&p=2", ALL) == "k=REDACTED&p=2"


@pytest.mark.parametrize("prefix", range(6))
@pytest.mark.parametrize("urlsafe", [False, True])
def test_base64_of_a_blob_holding_the_secret_at_any_offset(prefix, urlsafe):
    secret = SECRETS["AWS_SECRET_ACCESS_KEY"]  # holds "/" and "+": both alphabets differ
    blob = b"p" * prefix + secret.encode() + b"q" * (prefix % 4)
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    span = carrying_span(blob, prefix, len(secret), urlsafe=urlsafe).encode()
    for text in (encode(blob), encode(blob).rstrip(b"=")):
        out = redact_bytes(b"data=" + text + b";", ALL)
        assert out.startswith(b"data=") and out.endswith(b";")
        assert span in text and span not in out and REDACTED.encode() in out
        # What is left of the blob around REDACTED carries none of the secret's bits.
        head, _, tail = out[5:-1].partition(REDACTED.encode())
        assert len(head) <= text.find(span) and len(tail) <= len(text) - text.find(span) - len(span)


def test_base64_cores_cover_three_offsets_in_both_alphabets():
    value = b"??>>~~??>>~~??>>~~ok"  # its base64 holds "+" and "/" at every offset
    cores = base64_cores(value)
    assert len(cores) == 6
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + value)
        assert sum(core in encoded for core in cores) == 1
        assert sum(core in encoded.replace(b"+", b"-").replace(b"/", b"_") for core in cores) == 1


def test_nested_encodings_and_line_breaks():
    secret = SECRETS["LAMBDA_API_KEY"]
    percent = "".join(f"%{b:02X}" for b in secret.encode())
    in_json = json.dumps({"url": f"https://x/?k={percent}"})  # layer 2: JSON of percent
    in_html = in_json.replace('"', "&quot;").replace("%", "&#37;")  # layer 3: HTML of both
    for text in (in_json, in_html, f"<a href='{in_html}'>"):
        assert secret.encode() not in base64.b64decode(b"") and contains_secret(text, ALL)
        assert REDACTED in redact_str(text, ALL)
    wrapped = base64.encodebytes(b"x" * 60 + secret.encode() + b"y" * 60)
    assert contains_secret(wrapped.replace(b"\n", b"\r\n"), ALL)
    assert contains_secret(json.dumps(wrapped.decode()), ALL)  # "\n" escaped in JSON


def test_values_with_a_space_non_ascii_and_astral_characters():
    spaced, accented, astral = "my echo secret 42", "clé-secrète-2026", "key-\U0001f600-0123456"
    secrets = [spaced, accented, astral]
    for text in (
        quote(spaced).replace("%20", "+"),
        spaced.replace(" ", "&#32;"),
        quote(accented),
        quote(accented).lower(),
        json.dumps(accented)[1:-1],  # \u00e9
        accented.replace("é", "&eacute;").replace("è", "&egrave;"),
        json.dumps(astral)[1:-1],  # a surrogate pair
        astral.replace("\U0001f600", "&#x1F600;"),
    ):
        assert redact_str(f"[{text}]", secrets) == f"[{REDACTED}]", text
    # Basic auth: "dXNlcj" is "user" and the first bits of ":"; the rest carries the secret.
    basic = base64.b64encode(("user:" + accented).encode()).decode()
    assert redact_str(basic, secrets) == f"dXNlcj{REDACTED}"


def test_short_values_are_never_redacted_by_value():
    short = "x" * (MIN_SECRET_LENGTH - 1)
    body = f"price {short} and abc1234".encode()
    assert redact_bytes(body, [short, "abc1234", "", None]) == body
    assert secret_spans(body, ["abc1234"]) == []
    assert redact_bytes(b"k=abcd1234", ["abcd1234"]) == b"k=REDACTED"


def test_real_response_bodies_are_left_byte_for_byte():
    files = [p for p in (FIXTURES_ROOT / "cloud").iterdir() if p.is_file()] + sorted(
        (FIXTURES_ROOT / "retail").rglob("*.html")
    )
    assert len(files) > 20
    for path in files:
        body = path.read_bytes()
        assert redact_bytes(body, ALL) is body, path.name


def test_headers_are_redacted_by_value_in_every_form(monkeypatch):
    monkeypatch.setenv("RUNPOD_API_KEY", SECRETS["RUNPOD_API_KEY"])
    secret = SECRETS["RUNPOD_API_KEY"]
    headers = {f"X-Echo-{name}": "".join(text.splitlines()) for name, text in forms(secret).items()}
    headers["Link"] = f"<https://x/?next={base64.b64encode(secret.encode()).decode()}>"
    kept = redact_headers(headers)
    assert len(kept) == len(headers)
    assert not leaks(json.dumps(kept).encode(), needles([secret]))
    assert all(REDACTED in value for value in kept.values())


def test_configured_credentials_are_known_before_any_fetcher_reads_them():
    env = {name: f"{name.lower()}-value" for name in CREDENTIAL_ENV}
    env["GCP_API_KEY"] = "short"  # too short to redact by value
    env["UNRELATED"] = "not-a-credential-at-all"
    known = known_secrets(env)
    assert "gcp_api_key-value" not in known and "short" not in known
    assert "lambda_api_key-value" in known and "not-a-credential-at-all" not in known
    assert list(known) == sorted(known, key=len, reverse=True)


def test_blob_needles_are_what_redaction_removes():
    # The test's own arithmetic (by difference) agrees with the module's (by offset).
    for secret in ALL:
        for blob, span in blobs(secret).values():
            assert span in blob
            assert span not in redact_str(blob, ALL)
