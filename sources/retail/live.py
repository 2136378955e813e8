"""What a live night's retail fetch did, per source and host, in words a status cell holds.

Live mode must report what happened, not what was planned: pages fetched and failed per
host, whether anything reached the archive, for a source that got nothing a short reason
(the full error texts go to the log), a host the circuit breaker cut off for errors, and
the catalog GPUs a budget below the catalog size left unsearched tonight.
"""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from sources.http import is_cut_off, short_reason

# Outcomes that mean the page (or API response) arrived and was usable.
FETCHED = frozenset({"ok", "empty"})


@dataclass(frozen=True)
class SourceFetch:
    """One retail source's live fetch: outcome counts per host and the first failure."""

    source: str
    by_host: dict[str, Counter[str]] = field(default_factory=dict)
    first_failure: str | None = None  # the full error text of the first failed request
    cut_off: str | None = None  # the first "host cut off for errors" among the failures
    unsearched: tuple[str, ...] = ()  # catalog GPUs left out of tonight's plan (budget)

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
        """A short reason for the status cell, e.g. '0 of 3 pages: network error'.

        A host cut off for errors is named after it ("; cut off after 3 failures in a row
        (HTTP 503)"); when pages arrived, GPUs the budget left out are counted ("; 84 GPUs
        not searched (budget)").
        """
        total = self.fetched + self.failed
        if self.status == "skipped":
            reason = "nothing to fetch"
        elif self.status == "ok":
            reason = f"{self.fetched} of {total} pages fetched"
        else:
            reason = f"0 of {total} pages: {short_reason(self.first_failure)}"
        cut_off = short_reason(self.cut_off) if self.cut_off else None
        if cut_off and not reason.endswith(cut_off):
            reason += f"; {cut_off}"
        if self.unsearched and self.status == "ok":  # a failure's reason is the failure
            reason += f"; {len(self.unsearched)} GPUs not searched (budget)"
        return reason

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


def tally(
    source: str,
    outcomes: Iterable[tuple[str, str, str | None]],
    unsearched: Iterable[str] = (),
) -> SourceFetch:
    """Count (host, outcome, error) triples into a `SourceFetch`.

    `unsearched` are the catalog GPUs tonight's plan left out for this source.
    """
    by_host: dict[str, Counter[str]] = {}
    first_failure = cut_off = None
    for host, outcome, error in outcomes:
        by_host.setdefault(host, Counter())[str(outcome)] += 1
        if str(outcome) in FETCHED:
            continue
        if first_failure is None:
            first_failure = error or str(outcome)
        if cut_off is None and is_cut_off(error):
            cut_off = error
    return SourceFetch(source, by_host, first_failure, cut_off, tuple(unsearched))
