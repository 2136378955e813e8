"""The one polite HTTP client every fetcher uses.

`PoliteClient` puts timeouts on every request, identifies itself honestly, retries only what
is worth retrying (429, 502, 503, 504 and network errors) with full-jitter backoff that
honours Retry-After for the whole host, spaces requests to one host, obeys robots.txt, stops
hitting a host (circuit breaker) after a captcha, a block page or a 403, after a Retry-After
longer than a run can wait, or after a few URLs in a row failed with server errors, 429s or
network errors even after their retries, and archives every response that got a status
before returning it, so parsers only ever read archived bytes.

Nothing secret is logged: no headers, no auth, and credentials in URLs are redacted.

Each concern is a module of its own, composed by `client.PoliteClient`: `retry` (what to
retry, backoff, Retry-After), `hostgate` (spacing of request starts, one request in flight
per host), `robots` (the robots.txt cache), `breaker` (the circuit breaker), `blocks`
(captcha, block page, 403), `body` (the size cap), `outcomes` (results and verdicts) and
`reasons` (short failure texts).
"""

from sources.http.body import DEFAULT_MAX_BYTES
from sources.http.client import DEFAULT_USER_AGENT, PoliteClient
from sources.http.hostgate import host_key
from sources.http.outcomes import FetchOutcome, FetchResult
from sources.http.reasons import SHORT_REASON_LENGTH, is_cut_off, short_reason
from sources.http.retry import RETRY_STATUSES, parse_retry_after

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_USER_AGENT",
    "RETRY_STATUSES",
    "SHORT_REASON_LENGTH",
    "FetchOutcome",
    "FetchResult",
    "PoliteClient",
    "host_key",
    "is_cut_off",
    "parse_retry_after",
    "short_reason",
]
