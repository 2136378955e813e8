"""The nowcast back-tests' stored origins: one Parquet file per origin in the build folder.

model/backtest_window.py computes a back-test origin once and reuses its predictions on
every later night whose data up to that origin are the same (the key is a digest of
them). The files live next to the chart cache (`<build_dir>/backtest-cache/`): like it, a
cache, not a record; a night that finds it empty (a new machine, a cleaned build folder)
computes every origin of the window once and stores them again.
"""

import os
import threading
import time
from pathlib import Path

import polars as pl

# Entries no night has used for this long are removed: a backfill of an older run date
# reads other origins than the nightly run, and should not wipe them, but superseded
# origins (a cut-off recomputed after a new month) should not pile up either.
KEEP_DAYS = 14


class FilePredictionStore:
    """model.backtest_window.PredictionStore on a folder of `<key>.parquet` files."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.hits = 0
        self.writes = 0

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.parquet"

    def get(self, key: str) -> pl.DataFrame | None:
        """The stored frame, its file's time refreshed (it is in use), or None."""
        path = self._path(key)
        try:
            rows = pl.read_parquet(path)
        except (OSError, pl.exceptions.PolarsError):
            return None  # absent, or unreadable (then recomputed and rewritten)
        os.utime(path)
        self.hits += 1
        return rows

    def put(self, key: str, rows: pl.DataFrame) -> None:
        """Write atomically: a killed night leaves no half-written entry."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(key)
        staged = path.with_name(f".{key}.{os.getpid()}.{threading.get_ident()}.tmp")
        rows.write_parquet(staged)
        staged.replace(path)
        self.writes += 1

    def prune(self, keep_days: float = KEEP_DAYS) -> int:
        """Remove entries (and leftovers) unused for `keep_days`; returns how many."""
        if not self.folder.is_dir():
            return 0
        limit = time.time() - keep_days * 86400
        removed = 0
        for path in self.folder.iterdir():
            if path.stat().st_mtime < limit:
                path.unlink(missing_ok=True)
                removed += 1
        return removed
