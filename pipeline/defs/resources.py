"""Resources: the warehouse connection and the project's settings."""

import datetime as dt
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import Field

from model.parameters import ModelParameters, from_env, with_overrides
from sources.bundled import DATA_DIR
from warehouse.db import migrate
from warehouse.location import DEFAULT, Location, parse
from warehouse.reads import newest_observation_day
from warehouse.release import default_published_dir, releases_dir_for

# Every step that opens the warehouse takes a slot of this pool. A DuckDB file has one
# writer process at a time, so the pool has one slot; a warehouse that takes concurrent
# writers (DuckLake on a database server, MotherDuck) raises it (`warehouse_pool_limit`).
WAREHOUSE_POOL = "gpuvalue_warehouse"
# Slots for a warehouse with concurrent writers: the runs the instance keeps in flight
# (deploy/dagster.yaml, max_concurrent_runs), so a night's provider runs load side by side.
# GPUVALUE_WAREHOUSE_WRITERS overrides it.
CONCURRENT_WRITERS = 4


class GpuvalueSettings(dg.ConfigurableResource):
    """Where inputs come from and outputs go, and the model's parameters.

    Paths are relative to the working directory (the repository root under `make`).
    """

    data_dir: str = str(DATA_DIR)
    build_dir: str = ".build"
    site_dir: str = "site"
    # GPUVALUE_PUBLISHED_DIR sets the default, as for `make query` and `make docs`.
    published_dir: str = Field(default_factory=lambda: str(default_published_dir()))
    # Where releases (site + published warehouse, swapped together) are kept; empty means
    # `releases/` beside the published folder (warehouse/release.py).
    releases_dir: str = ""
    # Fix the run date (YYYY-MM-DD); empty means the newest observation day in the warehouse.
    as_of: str = ""
    # Live mode fetches today's retail pages through the polite client into `archive_dir`;
    # otherwise the bundled archive in the snapshot is replayed. Never on in tests.
    live: bool = False
    archive_dir: str = ""
    # Nightly request budget per site, result pages per query and politeness, in live mode.
    # A budget left unset (None) is derived: every catalog GPU x pages_per_query. A budget
    # below the catalog size skips whole GPUs, rotating by night (sources/retail/plan.py).
    amazon_budget: int | None = None
    ebay_budget: int | None = None
    pages_per_query: int = 1
    min_interval_per_host: float = 2.0
    amazon_base_url: str = "https://www.amazon.com"
    ebay_base_url: str = "https://www.ebay.com"
    # eBay's Browse API origin (used when EBAY_CLIENT_ID/SECRET are set).
    ebay_api_base_url: str = "https://api.ebay.com"
    # Cloud price endpoints per provider, overriding the real ones (tests, mirrors).
    cloud_base_urls: dict[str, str] = {}
    # Model parameter overrides from run config, {field: text}, e.g.
    # {"electricity_usd_per_kwh": "0.30", "system_sizes": "1,2"}; applied after the
    # GPUVALUE_* environment and stored with the run in model_runs.parameters.
    parameter_overrides: dict[str, str] = {}

    def data_path(self, *parts: str) -> Path:
        """A path inside the bundled snapshot folder."""
        return Path(self.data_dir).joinpath(*parts)

    def archive_path(self) -> Path:
        """The raw response archive retail prices are parsed from."""
        if self.archive_dir:
            return Path(self.archive_dir)
        return Path("warehouse/archive") if self.live else self.data_path("archive")

    def releases_path(self) -> Path:
        """The folder holding the releases `site_dir` and `published_dir` link into."""
        if self.releases_dir:
            return Path(self.releases_dir)
        return releases_dir_for(self.published_dir)

    def parameters(self) -> ModelParameters:
        """Model parameters: defaults, then GPUVALUE_* environment, then run config."""
        return with_overrides(from_env(), self.parameter_overrides)

    def run_date(self, newest_observation: dt.date | None) -> dt.date:
        """The as-of date of this run's model, charts and site version."""
        if self.as_of:
            return dt.date.fromisoformat(self.as_of)
        if newest_observation is None:
            raise ValueError("no price observations in the warehouse: cannot date the run")
        return newest_observation


def warehouse_path() -> str:
    """The pipeline's warehouse: GPUVALUE_WAREHOUSE (warehouse/location.py) or the default file.

    A DuckDB file path, `md:<database>` or `ducklake:<catalog> (DATA_PATH '...')`; it is
    checked here, so a malformed setting or one holding a password fails at load, once.
    """
    return parse(os.environ.get("GPUVALUE_WAREHOUSE") or DEFAULT).setting


def warehouse_pool_limit(setting: str | None = None, env: dict[str, str] | None = None) -> int:
    """Slots of WAREHOUSE_POOL for a warehouse setting (default: GPUVALUE_WAREHOUSE).

    One for a DuckDB file (one writer process), and for a DuckLake whose catalog is a file;
    CONCURRENT_WRITERS (or GPUVALUE_WAREHOUSE_WRITERS) for a DuckLake on PostgreSQL or MySQL
    and for MotherDuck, which settle concurrent writers at commit.
    """
    env = os.environ if env is None else env
    location = parse(setting if setting is not None else env.get("GPUVALUE_WAREHOUSE"))
    if not location.concurrent_writers:
        return 1
    text = env.get("GPUVALUE_WAREHOUSE_WRITERS", "")
    if not text:
        return CONCURRENT_WRITERS
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"GPUVALUE_WAREHOUSE_WRITERS={text!r}: expected a whole number >= 1")
    return int(text)


def apply_pool_limit(instance: dg.DagsterInstance, setting: str | None = None) -> int:
    """Set WAREHOUSE_POOL's slots in the instance for the warehouse; returns the limit.

    Set explicitly every time (not left to `default_limit`), so moving a deployment from a
    DuckLake back to a DuckDB file takes the pool back to one slot.
    """
    limit = warehouse_pool_limit(setting)
    instance.event_log_storage.set_concurrency_slots(WAREHOUSE_POOL, limit)
    return limit


@dg.definitions
def resources() -> dg.Definitions:
    """Default resources for `dg dev`, the schedule and `make run`."""
    return dg.Definitions(
        resources={
            "warehouse": DuckDBResource(database=warehouse_path()),
            # GPUVALUE_LIVE=1 makes the nightly schedule (and `make dev`) fetch live prices.
            "settings": GpuvalueSettings(live=os.environ.get("GPUVALUE_LIVE", "") == "1"),
        }
    )


class UnreadableWarehouse(RuntimeError):
    """The pipeline's warehouse file exists but is not a DuckDB database."""


DUCKDB_MAGIC = b"DUCK"


def _check_readable(path: Path) -> None:
    """Fail at once, and say so, when the file is not a DuckDB database.

    DuckDBResource retries a failed connect with backoff for about 100 s, which is right
    for a lock held by another writer and wrong for a damaged or foreign file: every step
    would wait, then fail with a retry error.
    """
    if not path.exists():
        return
    # A DuckDB file says so in its main header (the magic "DUCK" at byte 8): read 12 bytes
    # instead of opening the database a second time for every step (about 30 ms each).
    with path.open("rb") as file:
        if file.read(12)[8:12] == DUCKDB_MAGIC:
            return
    try:
        duckdb.connect(str(path)).close()
    except duckdb.IOException as exc:
        if "not a valid DuckDB database file" in str(exc):
            raise UnreadableWarehouse(
                f"{path} is not a readable DuckDB database; nothing was read or written. "
                "Move it aside and rerun (the published copy in warehouse/published/ is "
                "untouched and can be copied back as the pipeline warehouse)."
            ) from None
        # A lock held by another process: DuckDBResource's retries are for this.


@contextmanager
def open_warehouse(warehouse: DuckDBResource) -> Iterator[duckdb.DuckDBPyConnection]:
    """A migrated connection to the pipeline's warehouse.

    The resource's `database` is the warehouse setting (warehouse/location.py). For a file,
    its folder is created first: DuckDB cannot create it, and the resource would otherwise
    retry the failing connect with backoff for minutes before giving up. MotherDuck and
    DuckLake are attached to an in-memory connection and used (`Location.connect`).
    """
    location = parse(warehouse.database)
    if location.kind != "duckdb":
        with _attached(location, warehouse.connection_config) as con:
            migrate(con)
            yield con
        return
    if warehouse.database != ":memory:":
        Path(warehouse.database).parent.mkdir(parents=True, exist_ok=True)
        _check_readable(Path(warehouse.database))
    with warehouse.get_connection() as con:
        # DuckDBResource closes its connection only when the block ends without an error;
        # closed here either way, so a failed step leaves no open handle on the file (the
        # next connection in this process, e.g. a read-only one, would be refused).
        try:
            migrate(con)
            yield con
        finally:
            con.close()


@contextmanager
def _attached(location: Location, config: dict) -> Iterator[duckdb.DuckDBPyConnection]:
    con = location.connect({"custom_user_agent": "dagster", **config})
    try:
        yield con
    finally:
        con.close()


def run_date_for(con: duckdb.DuckDBPyConnection, settings: GpuvalueSettings) -> dt.date:
    """The run's as-of date: configured, or the newest observation day."""
    return settings.run_date(newest_observation_day(con))
