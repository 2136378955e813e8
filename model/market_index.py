"""A chained, repeat-sales price index per market group, and carrying a stale price with it.

A GPU last seen on sale in March does not cost in September what it cost in March, and
what it costs instead is best read from the GPUs of its market that were seen since: if
the comparable cards' prices rose 20 %, so (give or take) did this one. The index measures
that move (docs/methodology.md, "Prices at the as-of date: the market index").

Market groups (`market_group_expr`): consumer (GeForce, Radeon RX, Arc and the TITANs,
sold at retail street prices), workstation (Quadro, RTX A/Ada/PRO, Radeon PRO), data
center (everything else: Tesla, A/H/B/L-series modules, GH/GB superchips, Instinct) and
system (machines sold only whole: DGX Spark, Mac Studio, Ryzen AI Max PCs). An index is
fitted per group x market (`index_key`); used workstation and data-center cards pool into
one "professional used" index, since the bundled snapshot holds used prices of three
workstation cards in one month and none of data-center cards. A GPU key with too few pairs
takes its market's pooled GPU index ("all new", "all used").

Systems never take a GPU board index: a Mac Studio's price is Apple's list price for a
whole computer, which moved +7 % (M3 Ultra 256 GB, March 2026) while GPU boards rose
~45 %. Their "system new" index is fitted like any other when the systems' own repeat
prices are enough (MIN_PAIRS pairs from MIN_MATCHED GPUs); until then (`fit_flat`) a system
price is carried flat, its variance growing with the gap at the larger of the systems' own
per-month volatility (their repeat list prices) and the board market's own monthly
volatility (the pooled new index's tau^2): two or three pairs cannot show that systems are
calmer than the market whose memory shortage moved them.

The index (`fit_index`) is a repeat-sales (Bailey-Muth-Nourse) regression on monthly
points: every pair of consecutive monthly prices of one GPU, months m1 < m2 apart by at
most MAX_PAIR_MONTHS, says `log p(m2) - log p(m1) = sum of the index steps over (m1, m2]
+ e`, with `Var(e) = sigma^2 * (m2 - m1)` (a GPU wanders around its market like a random
walk). When every GPU is seen every month this is the chained matched-model (Jevons)
index; pairs spanning a gap (a source that stopped, a snapshot months later) still count,
for the whole gap. It is fitted with Huber weights (a mislabelled listing does not set the
market) and a prior `step ~ N(0, tau^2)` on each monthly step, so a month spanned by
fewer than MIN_MATCHED GPUs is not trusted: its pairs are dropped, it is bridged with a
zero step, and its variance tau^2 (the index's own monthly volatility) enters the
uncertainty of every carry across it. sigma and tau are fitted by EM. The posterior
covariance of the steps gives the index's standard error between any two months.

Carrying (`index_change`): `log p(to) = log p(t0) + I(to) - I(t0)`; beyond the last
month with data the index extrapolates with a zero step (a random walk) and tau^2 per
month. The nowcast's variance is the GPU's residual volatility around the index times
the gap plus the index's own variance over the gap.
"""

import dataclasses
import datetime as dt

import numpy as np
import polars as pl

from model.product_lines import product_line_expr, sold_whole_expr

# Pairs further apart than this are not compared: a price three years on says more about
# the card's age than about the market.
MAX_PAIR_MONTHS = 36
# A month spanned by fewer GPUs than this is bridged, not trusted (the brief's K).
MIN_MATCHED = 3
# A group x market needs this many pairs from MIN_MATCHED GPUs for its own index.
MIN_PAIRS = 10

GROUPS = ("consumer", "workstation", "data center", "system")
SYSTEM = "system"


def market_group_expr(name: str = "name") -> pl.Expr:
    """'consumer', 'workstation', 'data center' or 'system'.

    The GPU's product line (one rule for the index, the interval pools, market consistency
    and resale: model/product_lines.py), except that a machine sold only whole is a
    'system' here: its price is not a GPU board's.
    """
    line = product_line_expr(name).replace("data_center", "data center")
    return pl.when(sold_whole_expr(name)).then(pl.lit(SYSTEM)).otherwise(line)


def index_key_expr(group: pl.Expr, market: pl.Expr) -> pl.Expr:
    """The index a group x market uses: 'consumer new', ..., 'professional used', 'system new'."""
    pooled = (
        pl.when(group.is_in(["consumer", SYSTEM])).then(group).otherwise(pl.lit("professional"))
    )
    return pl.when(market == "used").then(pooled + " used").otherwise(group + " " + market)


def is_system_key(key: str) -> bool:
    """Whether an index key belongs to the systems' segment."""
    return key.startswith(SYSTEM + " ")


def series_keys(gpus: pl.DataFrame) -> pl.DataFrame:
    """gpu_id -> market group ('data center' when the catalog frame has no names)."""
    if "name" not in gpus.columns:
        return gpus.select("gpu_id", group=pl.lit("data center"))
    return gpus.select("gpu_id", group=market_group_expr())


def month_number(day: pl.Expr) -> pl.Expr:
    """Months since 1970-01 of a date (the index's clock)."""
    return (day.dt.year() - 1970) * 12 + day.dt.month() - 1


def month_of_t(t: pl.Expr) -> pl.Expr:
    """Months since 1970-01 of a time in fractional years since 1970-01-01."""
    days = (t * 365.25).round(0).cast(pl.Int64)
    return month_number(pl.lit(dt.date(1970, 1, 1)) + pl.duration(days=days))


def index_pairs(monthly: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """Consecutive monthly points of each GPU x market: key, gpu_id, m1, m2, d (log change)."""
    schema = {"key": pl.Utf8, "gpu_id": pl.Utf8, "m1": pl.Int64, "m2": pl.Int64, "d": pl.Float64}
    if monthly.is_empty():
        return pl.DataFrame(schema=schema)
    return (
        monthly.join(series_keys(gpus), on="gpu_id", how="left")
        .with_columns(
            pl.col("group").fill_null("data center"),
            m=month_number(pl.col("month")).cast(pl.Int64),
        )
        .sort("gpu_id", "market", "m")
        .with_columns(
            key=index_key_expr(pl.col("group"), pl.col("market")),
            m1=pl.col("m").shift(1).over("gpu_id", "market"),
            d=pl.col("price_usd").log().diff().over("gpu_id", "market"),
        )
        .filter(pl.col("m1").is_not_null(), (pl.col("m") - pl.col("m1")) <= MAX_PAIR_MONTHS)
        .select("key", "gpu_id", pl.col("m1").cast(pl.Int64), m2="m", d="d")
        .cast(schema)
    )


@dataclasses.dataclass(frozen=True)
class IndexFit:
    """One fitted index: levels per month from `first` to `last`, their covariance.

    `level[j]` is I(first + j) with I(first) = 0; `cov` the covariance of the levels;
    `tau` the index's own volatility per month (the variance a bridged or extrapolated
    month adds), `sigma` a GPU's residual volatility around the index per sqrt-month;
    `n_gpus[j]` how many GPUs' pairs span month first + j; `bridged[j]` whether that month
    was carried flat (fewer than MIN_MATCHED GPUs).
    """

    key: str
    first: int
    last: int
    level: np.ndarray
    cov: np.ndarray
    tau: float
    sigma: float
    n_gpus: np.ndarray
    bridged: np.ndarray
    n_pairs: int
    # A segment too thin for an index (fit_flat): no steps, the price is carried flat and
    # `tau` is the per-month volatility the carry adds.
    flat: bool = False


def _gpus_per_step(start: np.ndarray, end: np.ndarray, gpu: np.ndarray, n: int) -> np.ndarray:
    """How many distinct GPUs have a pair spanning each step (steps start..end inclusive)."""
    codes = np.unique(gpu, return_inverse=True)[1]
    marks = np.zeros((codes.max() + 1, n + 1), dtype=np.int64)
    np.add.at(marks, (codes, start), 1)
    np.add.at(marks, (codes, end + 1), -1)
    return (np.cumsum(marks, axis=1)[:, :n] > 0).sum(axis=0)


def _median_steps(start, end, per_month, trusted) -> np.ndarray:
    """Each trusted step: the median per-month change of the pairs spanning it."""
    steps = np.zeros(trusted.size)
    for j in np.flatnonzero(trusted):
        steps[j] = float(np.median(per_month[(start <= j) & (end >= j)]))
    return steps


def _shared_variance(start, end, var, n) -> np.ndarray:
    """S[j, k] = sum of `var` over the pairs spanning both steps j and k.

    Spans are intervals, so a pair spans j <= k when start <= j and end >= k: a 2-D
    cumulative sum over (start ascending, end descending). Plain NumPy sums, no BLAS: a
    matrix product here would start a thread pool per call on a shared machine.
    """
    grid = np.zeros((n, n))
    np.add.at(grid, (start, end), var)
    reach = np.cumsum(np.cumsum(grid, axis=0)[:, ::-1], axis=1)[:, ::-1]
    upper = np.triu(reach)
    return upper + np.triu(upper, 1).T


def fit_index(pairs: pl.DataFrame, key: str) -> IndexFit | None:
    """The index of one key from its pairs (index_pairs rows), or None if too thin.

    Each monthly step is the median of `d / span` over the pairs spanning it (a pair
    across a gap spreads its change evenly over the gap's months). Up to the median's
    efficiency (pi/2 the variance of a mean) a step is the mean of its pairs' changes, so
    the steps' covariance is `pi/2 * sum_i sigma^2 / span_i / (n_j n_k)` over the pairs i
    spanning both steps j and k: one long pair's change ties the months of its gap.
    """
    gpu = pairs["gpu_id"].to_numpy()
    if pairs.height < MIN_PAIRS or pairs["gpu_id"].n_unique() < MIN_MATCHED:
        return None
    m1, m2, d = pairs["m1"].to_numpy(), pairs["m2"].to_numpy(), pairs["d"].to_numpy()
    first, last = int(m1.min()), int(m2.max())
    n = last - first
    # Step j is the change from month first + j to first + j + 1; a pair spans the steps
    # from its first month to the one before its last.
    start, end = m1 - first, m2 - first - 1
    span = (m2 - m1).astype(float)
    n_gpus = _gpus_per_step(start, end, gpu, n)
    trusted = n_gpus >= MIN_MATCHED
    if not trusted.any():
        return None
    steps = _median_steps(start, end, d / span, trusted)
    level = np.concatenate([[0.0], np.cumsum(steps)])
    # A GPU's volatility around its index, per sqrt-month; root mean square, not a robust
    # scale: the interval has to hold the odd listing that moves 40 % too.
    resid = d - (level[end + 1] - level[start])
    sigma2 = max(float(np.mean(resid**2 / span)), 1e-8)
    # The index's own monthly volatility: the root mean square of its trusted steps.
    tau2 = max(float(np.mean(steps[trusted] ** 2)), 1e-8)
    counts = np.where(trusted, n_gpus, np.inf)
    step_cov = (np.pi / 2) * _shared_variance(start, end, sigma2 / span, n)
    step_cov /= counts[:, None] * counts[None, :]
    # A bridged month carries no step and the index's monthly variance.
    step_cov += np.diag(np.where(trusted, 0.0, tau2))
    level_cov = np.zeros((n + 1, n + 1))
    level_cov[1:, 1:] = np.cumsum(np.cumsum(step_cov, axis=0), axis=1)
    return IndexFit(
        key=key,
        first=first,
        last=last,
        level=level,
        cov=level_cov,
        tau=float(np.sqrt(tau2)),
        sigma=float(np.sqrt(sigma2)),
        n_gpus=np.concatenate([[0], n_gpus]),
        bridged=np.concatenate([[False], ~trusted]),
        n_pairs=int(pairs.height),
    )


def _market_of(key: str) -> str:
    return key.rsplit(" ", 1)[-1]


def fit_flat(pairs: pl.DataFrame, key: str, floor_var: float) -> IndexFit | None:
    """A flat carry for a segment with repeat prices but too few for an index.

    `tau^2` (per month) = max(mean of d^2 / span over the segment's pairs, floor_var): the
    segment's own volatility, never below the floor (a thin sample cannot prove calm).
    """
    if pairs.is_empty():
        return None
    m1, m2, d = pairs["m1"].to_numpy(), pairs["m2"].to_numpy(), pairs["d"].to_numpy()
    own = float(np.mean(d**2 / (m2 - m1)))
    first, last = int(m1.min()), int(m2.max())
    n = last - first
    return IndexFit(
        key=key + " (flat)",
        first=first,
        last=last,
        level=np.zeros(n + 1),
        cov=np.zeros((n + 1, n + 1)),
        tau=float(np.sqrt(max(own, floor_var))),
        sigma=0.0,
        n_gpus=np.zeros(n + 1, dtype=np.int64),
        bridged=np.ones(n + 1, dtype=bool),
        n_pairs=int(pairs.height),
        flat=True,
    )


def fit_indexes(monthly: pl.DataFrame, gpus: pl.DataFrame) -> dict[str, IndexFit]:
    """Every key's index, the pooled GPU 'all new' / 'all used', and the systems' segment."""
    pairs = index_pairs(monthly, gpus)
    boards = pairs.filter(~pl.col("key").str.starts_with(SYSTEM + " "))
    fits: dict[str, IndexFit] = {}
    for (key,), frame in boards.group_by("key", maintain_order=True):
        fit = fit_index(frame, key)
        if fit is not None:
            fits[key] = fit
    for market in boards["key"].map_elements(_market_of, return_dtype=pl.Utf8).unique().sort():
        pooled = boards.filter(pl.col("key").str.ends_with(" " + market))
        fit = fit_index(pooled, "all " + market)
        if fit is not None:
            fits["all " + market] = fit
    fits.update(_system_fits(pairs.filter(pl.col("key").str.starts_with(SYSTEM + " ")), fits))
    return fits


def _system_fits(pairs: pl.DataFrame, board_fits: dict[str, IndexFit]) -> dict[str, IndexFit]:
    """The systems' index per market, or their flat carry when too thin for one."""
    out: dict[str, IndexFit] = {}
    for (key,), frame in pairs.group_by("key", maintain_order=True):
        pooled = board_fits.get("all " + _market_of(key))
        # The board market's own monthly volatility (tau^2), not a board's street-listing
        # wander around it (sigma^2): a list price has no listing noise, but it is exposed
        # to the shocks that move the whole market (the 2026 memory shortage).
        floor = pooled.tau**2 if pooled is not None else 0.0
        fit = fit_index(frame, key) or fit_flat(frame, key, floor)
        if fit is not None:
            out[key] = fit
    return out


def fit_for(pairs: pl.DataFrame, key: str) -> IndexFit | None:
    """The index `key` resolves to, fitted on `pairs` alone (the back-test's refits)."""
    system = pl.col("key").str.starts_with(SYSTEM + " ")
    market = _market_of(key)

    def pooled() -> IndexFit | None:
        boards = pairs.filter(~system, pl.col("key").str.ends_with(" " + market))
        return fit_index(boards, "all " + market)

    if not is_system_key(key):
        return fit_index(pairs.filter(pl.col("key") == key), key) or pooled()
    board = pooled()
    fits = _system_fits(pairs.filter(system), {} if board is None else {board.key: board})
    return resolve(fits, key)


def resolve(fits: dict[str, IndexFit], key: str) -> IndexFit | None:
    """The index a key uses: its own, else its market's pooled one, else none.

    A system key never takes a GPU board index: its own, else the systems' new-price
    segment, else none (the caller's random walk).
    """
    if is_system_key(key):
        return fits.get(key) or fits.get(SYSTEM + " new")
    return fits.get(key) or fits.get("all " + _market_of(key))


def index_change(fit: IndexFit, m0: np.ndarray, m1: np.ndarray):
    """I(m1) - I(m0), its variance, and the months of m1 past the last month with data.

    Outside [first, last] the index is flat (a random walk) and adds tau^2 per month; a
    flat fit (fit_flat) is flat throughout and adds tau^2 for every month of the gap.
    """
    if fit.flat:
        months = np.abs(m1 - m0).astype(float)
        return np.zeros(months.size), fit.tau**2 * months, np.maximum(m1 - fit.last, 0)
    a = np.clip(m0, fit.first, fit.last) - fit.first
    b = np.clip(m1, fit.first, fit.last) - fit.first
    outside = np.abs(m0 - np.clip(m0, fit.first, fit.last)) + np.abs(
        m1 - np.clip(m1, fit.first, fit.last)
    )
    change = fit.level[b] - fit.level[a]
    var = fit.cov[a, a] + fit.cov[b, b] - 2 * fit.cov[a, b] + fit.tau**2 * outside
    return change, np.maximum(var, 0.0), np.maximum(m1 - fit.last, 0)


CARRY_COLUMNS = {
    "index_key": pl.Utf8,
    "index_change": pl.Float64,
    "index_var": pl.Float64,
    "index_sigma": pl.Float64,
    "index_last": pl.Int64,
    "index_extrapolated": pl.Int64,
}


def carry_columns(rows: pl.DataFrame, fits: dict[str, IndexFit]) -> pl.DataFrame:
    """Per row (gpu_id, market, group, t0, _to_t): the index's move from t0 to _to_t.

    Adds CARRY_COLUMNS; a row whose market has no index gets a zero change, zero index
    variance and null sigma (the caller falls back to the segment's volatility).
    """
    keyed = rows.with_columns(
        index_key=index_key_expr(pl.col("group"), pl.col("market")),
        _m0=month_of_t(pl.col("t0")).cast(pl.Int64),
        _m1=month_of_t(pl.col("_to_t")).cast(pl.Int64),
    )
    parts = []
    for (key,), frame in keyed.with_row_index("_row").group_by("index_key", maintain_order=True):
        fit = resolve(fits, key)
        if fit is None:
            values = {
                "index_key": pl.lit(None, pl.Utf8),
                "index_change": pl.lit(0.0),
                "index_var": pl.lit(0.0),
                "index_sigma": pl.lit(None, pl.Float64),
                "index_last": pl.lit(None, pl.Int64),
                "index_extrapolated": pl.lit(None, pl.Int64),
            }
            parts.append(frame.with_columns(**values))
            continue
        change, var, beyond = index_change(fit, frame["_m0"].to_numpy(), frame["_m1"].to_numpy())
        parts.append(
            frame.with_columns(
                index_key=pl.lit(fit.key),
                index_change=pl.Series(change, dtype=pl.Float64),
                index_var=pl.Series(var, dtype=pl.Float64),
                # sigma per sqrt-month -> per sqrt-year, the clock of the carry.
                index_sigma=pl.lit(fit.sigma * np.sqrt(12.0)),
                index_last=pl.lit(fit.last, dtype=pl.Int64),
                index_extrapolated=pl.Series(beyond, dtype=pl.Int64),
            )
        )
    if not parts:
        return keyed.drop("_m0", "_m1").with_columns(
            **{c: pl.lit(None, t) for c, t in CARRY_COLUMNS.items()}
        )
    return (
        pl.concat([p.cast(CARRY_COLUMNS) for p in parts], how="vertical_relaxed")
        .sort("_row")
        .drop("_row", "_m0", "_m1")
    )
