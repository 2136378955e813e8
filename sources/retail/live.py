"""What a live night's retail fetch did, per source and host, in words a status cell holds.

Live mode must report what happened, not what was planned: pages fetched and failed per
host, whether anything reached the archive, and for a source that got nothing a short
reason (the full error texts go to the log).
"""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from sources.http import short_reason

# Outcomes that mean the page (or API response) arrived and was usable.
FETCHED = frozenset({"ok", "empty"})


@dataclass(frozen=True)
class SourceFetch:
    """One retail source's live fetch: outcome counts per host and the first failure."""

    source: str
    by_host: dict[str, Counter[str]] = field(default_factory=dict)
    first_failure: str | None = None  # the full error text of the first failed request

    @property
    def fetched(self) -> int:
        """Pages (or API pages) that arrived usable."""
        return sum(n for c in self.by_host.values() for o, n in c.items() if o in FETCHED)

    @property
    def failed(self) -> int:
        """Requests that got nothing usable (errors, bot walls, skipped)."""
        return sum(n for c in self.by_host.values() for o, n in c.items() if o not in FETCHED)

    @property
    def status(self) -> str:
        """'ok' when anything arrived, else 'failed' (nothing planned is 'skipped')."""
        if not self.fetched and not self.failed:
            return "skipped"
        return "ok" if self.fetched else "failed"

    @property
    def reason(self) -> str:
        """A short reason for the status cell, e.g. '0 of 3 pages: network error'."""
        total = self.fetched + self.failed
        if self.status == "skipped":
            return "nothing to fetch"
        if self.status == "ok":
            return f"{self.fetched} of {total} pages fetched"
        return f"0 of {total} pages: {short_reason(self.first_failure)}"

    def summary(self) -> str:
        """One log line: per host, pages fetched and failed with their outcomes."""
        hosts = []
        for host, counts in sorted(self.by_host.items()):
            fetched = sum(n for o, n in counts.items() if o in FETCHED)
            failed = sum(n for o, n in counts.items() if o not in FETCHED)
            detail = ", ".join(f"{o} {n}" for o, n in sorted(counts.items()) if o not in FETCHED)
            hosts.append(
                f"{host}: {fetched} fetched, {failed} failed" + (f" ({detail})" if detail else "")
            )
        return f"{self.source}: " + ("; ".join(hosts) or "no requests")


def tally(source: str, outcomes: Iterable[tuple[str, str, str | None]]) -> SourceFetch:
    """Count (host, outcome, error) triples into a `SourceFetch`."""
    by_host: dict[str, Counter[str]] = {}
    first_failure = None
    for host, outcome, error in outcomes:
        by_host.setdefault(host, Counter())[str(outcome)] += 1
        if str(outcome) not in FETCHED and first_failure is None:
            first_failure = error or str(outcome)
    return SourceFetch(source, by_host, first_failure)
