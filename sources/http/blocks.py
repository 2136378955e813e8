"""What counts as a block: a captcha or block page (as the caller's classifier sees it), or a 403.

A block is never retried (retrying only digs the hole deeper: the host has decided) and it
opens the host's circuit (see `CircuitBreaker`).
"""

from collections.abc import Callable

from sources.http.outcomes import FetchOutcome, Verdict

Classifier = Callable[[str, int, bytes], str | None]


def check_page(
    classify: Classifier | None, url: str, status: int, content: bytes, *, robots: bool
) -> Verdict | None:
    """The verdict on a response that blocks us, or None when it does not.

    Args:
        classify: `(url, status, content) -> "captcha" | "blocked" | None`, or None.
        url: The final URL, after redirects.
        status: The response's status.
        content: The response's body.
        robots: The robots.txt fetch itself: its statuses have their own meaning (see
            `RobotsCache`), so it is neither classified nor blocked by a 403.
    """
    verdict = None
    if not robots and classify is not None:
        verdict = classify(url, status, content)
    if verdict in (FetchOutcome.CAPTCHA, FetchOutcome.BLOCKED):
        outcome = FetchOutcome(verdict)
        return Verdict(outcome, f"{outcome} page (HTTP {status})")
    if status == 403 and not robots:
        return Verdict(FetchOutcome.BLOCKED, "HTTP 403 Forbidden")
    return None
