"""Where the warehouse lives: one setting for a DuckDB file, MotherDuck or a DuckLake.

`GPUVALUE_WAREHOUSE` (docs/deployment.md, "Where the warehouse lives") takes one of:

- a DuckDB file path, `warehouse/gpuvalue.duckdb` (the default): one writer process at a time;
- a MotherDuck database, `md:gpuvalue` (the token comes from `MOTHERDUCK_TOKEN`);
- a DuckLake, `ducklake:<catalog> (DATA_PATH '<path>'[, METADATA_SCHEMA '<schema>'])`, written
  as DuckDB's own `ATTACH 'ducklake:<catalog>' (...)` takes it, e.g.
  `ducklake:postgres:dbname=lake host=db.internal user=gpuvalue (DATA_PATH 's3://bucket/lake/')`.

A password or token never goes in the setting: the setting is the `warehouse` resource's
configuration, which Dagster shows in the UI and stores with every run. PostgreSQL reads
PGPASSWORD (or ~/.pgpass) and MotherDuck reads MOTHERDUCK_TOKEN from the environment.

Pure: parsing and the SQL that opens a connection; nothing here touches the network.
"""

import importlib.util
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

DEFAULT = "warehouse/gpuvalue.duckdb"
# The name a MotherDuck or DuckLake warehouse is attached under (and USEd), so every query
# the project writes against unqualified table names reads and writes it.
LAKE_ALIAS = "gpuvalue"
# Catalog databases DuckLake can keep its metadata in, and whether several processes (on
# several machines) may write through them at once. A DuckDB-file catalog is one process's
# lock, as the DuckDB warehouse is; SQLite allows several local processes but not over a
# network, so only a database server lets the pool rise.
DUCKLAKE_CATALOGS = {"postgres": True, "mysql": True, "sqlite": False, "duckdb": False}
# The DuckDB extension each catalog's database is read through.
CATALOG_EXTENSIONS = {
    "postgres": "postgres_scanner",
    "mysql": "mysql_scanner",
    "sqlite": "sqlite_scanner",
}
DUCKLAKE_OPTIONS = ("DATA_PATH", "METADATA_SCHEMA", "DATA_INLINING_ROW_LIMIT")
OBJECT_STORES = ("s3://", "gs://", "gcs://", "r2://", "az://", "abfss://", "https://")
_SECRET_KEYS = re.compile(r"(?:^|[\s?&])(password|motherduck_token|token)\s*=", re.IGNORECASE)
_URI_PASSWORD = re.compile(r"://[^/@\s:]*:[^/@\s]*@")
_OPTIONS = re.compile(r"^(?P<catalog>.*?)\s*\((?P<options>[^()]*)\)\s*$", re.DOTALL)
_OPTION = re.compile(r"\s*([A-Za-z_]+)\s+('(?:[^']|'')*'|\d+)\s*(?:,|$)")
_MD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# One attached DuckDB instance per process and setting: loading the DuckLake and catalog
# extensions and attaching the lake costs seconds, and every step opens the warehouse
# several times. Each open gets a connection of its own on that instance (`cursor()`), with
# its own transactions, so two threads never share one.
_ATTACHED: dict[tuple, duckdb.DuckDBPyConnection] = {}
_ATTACH_LOCK = threading.Lock()


class WarehouseSettingError(ValueError):
    """GPUVALUE_WAREHOUSE cannot be understood, or holds a secret."""


@dataclass(frozen=True)
class Location:
    """One parsed warehouse setting.

    `database` is what `duckdb.connect` opens (the file, or `:memory:` for a warehouse that
    is attached); `attach` are the statements run next on every new connection.
    """

    kind: str  # duckdb | motherduck | ducklake
    setting: str
    database: str
    attach: tuple[str, ...] = ()
    catalog: str | None = None  # DuckLake's catalog database: postgres, mysql, sqlite, duckdb
    data_path: str | None = None
    concurrent_writers: bool = False

    @property
    def alias(self) -> str | None:
        """The database name an attached warehouse is used under."""
        return self.attach[-1].removeprefix("USE ") if self.attach else None

    def connect(self, config: dict | None = None) -> duckdb.DuckDBPyConnection:
        """A new connection with the warehouse attached and in use.

        For a file, its own DuckDB connection. For an attached warehouse, a connection on
        this process's attached instance (made on first use; `config` applies to it).
        """
        config = config or {}
        if not self.attach:
            return duckdb.connect(self.database, config=config)
        key = (self.setting, tuple(sorted(config.items())))
        with _ATTACH_LOCK:
            base = _ATTACHED.get(key)
            if base is None:
                base = duckdb.connect(self.database, config=config)
                try:
                    for statement in self.attach:
                        _run_attach(base, statement)
                except Exception:
                    base.close()
                    raise
                _ATTACHED[key] = base
        con = base.cursor()
        con.sql(f"USE {self.alias}")
        return con


# Two processes attaching a new DuckLake at once both create its catalog tables, and the
# loser's CREATE fails in the catalog database ("Failed to initialize DuckLake": a duplicate
# table). Its retry finds the lake the winner made.
ATTACH_RETRIES = 5


def _run_attach(con: duckdb.DuckDBPyConnection, statement: str) -> None:
    for attempt in range(ATTACH_RETRIES + 1):
        try:
            con.sql(statement)
            return
        except duckdb.Error as exc:
            initializing = "Failed to initialize DuckLake" in str(exc)
            if not (statement.startswith("ATTACH") and initializing) or attempt == ATTACH_RETRIES:
                raise
            time.sleep(0.2 * (attempt + 1))


def close_attached() -> None:
    """Close this process's attached instances (tests; a process exiting closes them)."""
    with _ATTACH_LOCK:
        while _ATTACHED:
            _ATTACHED.popitem()[1].close()


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _reject_secrets(setting: str) -> None:
    match = _SECRET_KEYS.search(setting)
    what = f"{match.group(1)}=..." if match else ""
    if not what and _URI_PASSWORD.search(setting):
        what = "user:password@"
    if what:
        raise WarehouseSettingError(
            f"GPUVALUE_WAREHOUSE holds a {what}: it is shown in Dagster's UI "
            "and stored with every run. Give PostgreSQL's password in PGPASSWORD (or "
            "~/.pgpass) and MotherDuck's token in MOTHERDUCK_TOKEN instead."
        )


def parse(setting: str | None) -> Location:
    """The warehouse a setting names (empty or None: the default DuckDB file)."""
    setting = (setting or "").strip() or DEFAULT
    _reject_secrets(setting)
    if setting.startswith("md:"):
        return _motherduck(setting)
    if setting.startswith("ducklake:"):
        return _ducklake(setting)
    if setting == ":memory:":
        return Location("duckdb", setting, setting)
    if re.match(r"^[a-z][a-z0-9+.-]*:", setting):
        # e.g. postgres:..., s3://...: not a file, and not something this setting can open.
        raise WarehouseSettingError(
            f"GPUVALUE_WAREHOUSE={setting!r}: expected a DuckDB file path, md:<database> or "
            "ducklake:<catalog> (DATA_PATH '...')"
        )
    return Location("duckdb", setting, setting)


def _motherduck(setting: str) -> Location:
    name, _, query = setting.removeprefix("md:").partition("?")
    if not _MD_NAME.match(name):
        raise WarehouseSettingError(
            f"GPUVALUE_WAREHOUSE={setting!r}: name one MotherDuck database, e.g. md:gpuvalue"
        )
    return Location(
        "motherduck",
        setting,
        ":memory:",
        # The motherduck extension is loaded by the ATTACH itself (DuckDB autoloads it).
        attach=(f"ATTACH {_quote(setting)}", f"USE {name}"),
        concurrent_writers=True,
    )


def _options(setting: str, text: str) -> dict[str, str]:
    options, pos = {}, 0
    while pos < len(text.strip()):
        match = _OPTION.match(text, pos)
        if not match:
            raise WarehouseSettingError(
                f"GPUVALUE_WAREHOUSE={setting!r}: cannot read the options at {text[pos:]!r}; "
                "write them as (DATA_PATH 'path', METADATA_SCHEMA 'name')"
            )
        key, value = match.group(1).upper(), match.group(2)
        if key not in DUCKLAKE_OPTIONS:
            raise WarehouseSettingError(
                f"GPUVALUE_WAREHOUSE: unknown DuckLake option {key}; known: "
                + ", ".join(DUCKLAKE_OPTIONS)
            )
        options[key] = value[1:-1].replace("''", "'") if value.startswith("'") else value
        pos = match.end()
    return options


def _ducklake(setting: str) -> Location:
    body = setting.removeprefix("ducklake:")
    match = _OPTIONS.match(body)
    catalog_text, options = body, {}
    if match:
        catalog_text, options = match["catalog"], _options(setting, match["options"])
    kind, sep, rest = catalog_text.partition(":")
    catalog = kind if sep and kind in DUCKLAKE_CATALOGS else "duckdb"
    if not (rest if catalog != "duckdb" else catalog_text).strip():
        raise WarehouseSettingError(f"GPUVALUE_WAREHOUSE={setting!r}: no catalog database")
    if "DATA_PATH" not in options:
        raise WarehouseSettingError(
            f"GPUVALUE_WAREHOUSE={setting!r}: a DuckLake needs (DATA_PATH '...'), the folder "
            "or bucket its Parquet files are written to"
        )
    data_path = options["DATA_PATH"]
    extensions = ["ducklake"]
    if catalog in CATALOG_EXTENSIONS:
        extensions.append(CATALOG_EXTENSIONS[catalog])
    statements = load_statements(extensions)
    if data_path.startswith(OBJECT_STORES):
        # Credentials from the environment or the node's role, never from the setting.
        statements += load_statements(["httpfs", "aws"])
        statements.append(
            "CREATE OR REPLACE SECRET gpuvalue_lake_store (TYPE s3, PROVIDER credential_chain)"
        )
    opts = ", ".join(
        f"{k} {_quote(v) if k != 'DATA_INLINING_ROW_LIMIT' else int(v)}" for k, v in options.items()
    )
    statements.append(f"ATTACH {_quote('ducklake:' + catalog_text)} AS {LAKE_ALIAS} ({opts})")
    statements.append(f"USE {LAKE_ALIAS}")
    return Location(
        "ducklake",
        setting,
        ":memory:",
        attach=tuple(statements),
        catalog=catalog,
        data_path=data_path,
        concurrent_writers=DUCKLAKE_CATALOGS[catalog],
    )


def packaged_extension(name: str, version: str | None = None) -> Path | None:
    """The extension file a `duckdb-extension-<name>` package ships for this DuckDB, if any.

    DuckDB installs extensions from its own repository, which this project's CI cannot
    reach; those packages (PyPI) carry DuckDB's signed builds, one per DuckDB release.
    """
    version = version or duckdb.__version__
    spec = importlib.util.find_spec(f"duckdb_extension_{name}")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "extensions" / f"v{version}" / f"{name}.duckdb_extension"
        if path.is_file():
            return path
    return None


def load_statements(names: list[str]) -> list[str]:
    """LOAD each extension: from its package when installed, else from DuckDB's repository."""
    statements = []
    for name in names:
        path = packaged_extension(name)
        if path is not None:
            statements.append(f"LOAD {_quote(str(path))}")
        else:
            statements += [f"INSTALL {name}", f"LOAD {name}"]
    return statements
