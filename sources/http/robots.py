"""The robots.txt cache: each host's rules, fetched once per run and obeyed.

RFC 9309: a robots.txt that cannot be reached (5xx, 429, network) means "disallow all"; one
that does not exist (4xx) means "allow all". 401/403 are treated as disallow: a host refusing
us robots.txt is refusing. Protego implements RFC 9309 matching (`*` and `$` wildcards, the
longest rule wins), which urllib.robotparser does not: it reads `Disallow: /*/dp/` as
allowing `/x/dp/1`.
"""

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import SplitResult

from protego import Protego

from sources.http.hostgate import HostGate
from sources.http.outcomes import Exchange

log = logging.getLogger("gpuvalue.http")

# Sends `GET url` for robots.txt to `host` (politely, with retries): (url, host) -> exchange.
FetchRobots = Callable[[str, str], Exchange]


@dataclass(frozen=True)
class _Robots:
    """A host's robots.txt verdict for this run."""

    parser: Protego | None
    unreachable: str | None = None  # why the whole host is disallowed


class RobotsCache:
    """Each origin's robots.txt, fetched on its first request and kept for the run.

    Args:
        user_agent: The agent whose rules apply.
        fetch: How robots.txt is requested (through the client, so it is polite too).
        gate: The host gate, whose interval a Crawl-delay raises.
        max_delay: Longest Crawl-delay honoured: a silly value must not stall the run.
    """

    def __init__(
        self, *, user_agent: str, fetch: FetchRobots, gate: HostGate, max_delay: float
    ) -> None:
        self.user_agent = user_agent
        self.max_delay = max_delay
        self._fetch = fetch
        self._gate = gate
        self._lock = threading.Lock()  # guards the dicts below, never held across I/O
        self._robots: dict[str, _Robots] = {}
        self._origin_locks: dict[str, threading.Lock] = {}

    def refusal(self, parts: SplitResult, host: str, url: str) -> str | None:
        """Why robots.txt forbids `url` (split as `parts`, on `host`), or None."""
        robots = self._robots_for(parts, host)
        if robots.unreachable is not None:
            return robots.unreachable
        if robots.parser is not None and not robots.parser.can_fetch(url, self.user_agent):
            return "disallowed by robots.txt"
        return None

    def _robots_for(self, parts: SplitResult, host: str) -> _Robots:
        """This host's robots.txt rules, fetched once per run (per scheme and host)."""
        origin = f"{parts.scheme}://{host}"
        with self._lock:
            cached = self._robots.get(origin)
            if cached is not None:
                return cached
            origin_lock = self._origin_locks.setdefault(origin, threading.Lock())
        with origin_lock:
            with self._lock:
                cached = self._robots.get(origin)
            if cached is None:
                cached = self._fetch_robots(origin, host)
                with self._lock:
                    self._robots[origin] = cached
            return cached

    def _fetch_robots(self, origin: str, host: str) -> _Robots:
        exchange = self._fetch(f"{origin}/robots.txt", host)
        response = exchange.response
        if response is None or response.status_code >= 500 or response.status_code == 429:
            why = exchange.verdict.error or f"HTTP {response.status_code if response else None}"
            reason = f"robots.txt unreachable for {host} ({why}); host disallowed for this run"
            log.warning(reason)
            return _Robots(None, reason)
        status = response.status_code
        if status in (401, 403):
            parser = Protego.parse("User-agent: *\nDisallow: /")
            log.warning("robots.txt for %s answered HTTP %d: host disallowed", host, status)
        elif status >= 400:
            parser = Protego.parse("")
            log.info("robots.txt for %s: HTTP %d, everything allowed", host, status)
        else:
            parser = Protego.parse(exchange.content.decode("utf-8", errors="replace"))
            self._crawl_delay(parser, host)
        return _Robots(parser)

    def _crawl_delay(self, parser: Protego, host: str) -> None:
        """Honour a Crawl-delay, but a silly value must not stall the whole run."""
        delay = parser.crawl_delay(self.user_agent)
        if delay is not None:
            interval = max(self._gate.min_interval, min(float(delay), self.max_delay))
            self._gate.set_interval(host, interval)
            log.info("robots.txt for %s: Crawl-delay %ss, interval %.1fs", host, delay, interval)
