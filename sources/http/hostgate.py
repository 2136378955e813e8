"""The per-host gate: spacing of request starts, Retry-After pauses, one request in flight.

Politeness is tracked per host (`host_key`), whichever thread or source asks: every request
to a host waits for its turn here.
"""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urlsplit


def host_key(url: str) -> str:
    """The host a URL's politeness is tracked under: `hostname` or `hostname:port`."""
    return host_of(urlsplit(url))


def host_of(parts: SplitResult) -> str:
    """`host_key` of an already split URL."""
    host = (parts.hostname or "").lower()
    return host if parts.port is None else f"{host}:{parts.port}"


@dataclass
class _HostState:
    """Politeness bookkeeping for one host."""

    lock: threading.Lock  # serialises request starts so threads cannot both go at once
    interval: float
    # Held from a request's turn until its body is read: one request in flight per host,
    # whatever the clock says (a slow response must not let the next one overlap it).
    busy: threading.Lock = field(default_factory=threading.Lock)
    last_start: float | None = None
    not_before: float | None = None  # a Retry-After: no request starts before this clock


class HostGate:
    """When each host may see its next request start.

    Args:
        min_interval: Minimum seconds between request starts to one host (a host's own
            interval may be raised by `set_interval`, e.g. for a robots.txt Crawl-delay).
        sleep: Waits; injected so tests do not sleep.
        clock: Monotonic seconds; injected with `sleep` in tests.
    """

    def __init__(
        self, *, min_interval: float, sleep: Callable[[float], None], clock: Callable[[], float]
    ) -> None:
        self.min_interval = min_interval
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()  # guards the dict and `not_before`, never held across I/O
        self._hosts: dict[str, _HostState] = {}

    @contextmanager
    def turn(self, host: str) -> Iterator[None]:
        """Wait for `host`'s turn and keep its one request slot until the block ends.

        The block is one request, from sending it to reading its body.
        """
        state = self._state(host)
        with state.busy:
            self._wait_turn(state)
            yield

    def defer(self, host: str, seconds: float) -> None:
        """Honour a Retry-After: no request to `host` starts for `seconds` from now."""
        state = self._state(host)
        until = self._clock() + seconds
        with self._lock:
            state.not_before = max(until, state.not_before or until)

    def set_interval(self, host: str, seconds: float) -> None:
        """Space request starts to `host` by `seconds` from now on."""
        self._state(host).interval = seconds

    def _state(self, host: str) -> _HostState:
        with self._lock:
            state = self._hosts.get(host)
            if state is None:
                state = _HostState(threading.Lock(), self.min_interval)
                self._hosts[host] = state
            return state

    def _wait_turn(self, state: _HostState) -> None:
        """Block until this host may see another request start, then claim the slot."""
        with state.lock:
            now = self._clock()
            start = now
            if state.last_start is not None:
                start = max(start, state.last_start + state.interval)
            with self._lock:
                not_before = state.not_before
            if not_before is not None:
                start = max(start, not_before)
            if start > now:
                self._sleep(start - now)
            # The planned start, not "now" after sleeping: a fake clock does not advance,
            # and a real one that overslept only makes the next gap longer.
            state.last_start = max(start, self._clock())
