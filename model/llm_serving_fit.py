"""Fitting the serving model per engine, its leave-one-GPU-out error and interval band.

The serving model (model/llm_serving.py) has, per GPU, a bandwidth share eff_bw that is
NOT fitted here: it is anchored on the batch-1 decode evidence (model/llm_serving_anchor.py),
so one user's decode agrees with what llama.cpp/vLLM users measure. Per engine two numbers
are fitted on published serving measurements (table `llm_serving_benchmarks`): the share
of the tensor roofline (eff_c, prefill and compute-bound decode alike) and a fixed cost
per layer and decode step (kernel launches, scheduling; microseconds), by a grid search
minimising

    sum over rows of soft_l1(log(predicted / measured))  +  a weak prior

soft_l1(r) = 2 d^2 (sqrt(1 + (r/d)^2) - 1) with d = 0.25 is r^2 for small errors and
grows only linearly past 25 %, so one odd submission does not drag an engine's fit. The
prior (a fifth of a row's weight per parameter at half a log unit from eff_c 0.5,
20 us per layer) only decides what the rows leave undetermined.

A row is predicted as its scenario ran (every row on the best layout of its GPUs into
tensor-parallel groups of t = 1, 2, 4, 8 dividing the GPU count, times the number of
groups: a 72- or 512-GPU row is replicas of 8-GPU groups):
- **offline** (no concurrency published: the system batches as it likes): each group at
  the largest batch its KV memory holds for the row's lengths (at most `MAX_OFFLINE_BATCH`);
- **server / interactive** (MLPerf: the highest load whose p99 TPOT stays within the
  scenario's limit, `tpot_ms`): each group at the batch of highest throughput whose time
  per output token per user (batch / group rate) meets the limit, searched over
  `SERVER_BATCHES` (batch 1 when even that misses it);
- **sweep** with a concurrency: each group at that concurrency (or as many as fit).
Rows without request lengths (gpt-oss-120b's MLPerf rows; MANIFEST "Request lengths")
are left out and counted; a sweep row without them takes the grid's 1,024 / 1,024.
"""

import numpy as np
import polars as pl

from model.llm_serving import (
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    output_rate,
    step_components,
    systems,
    with_capacity,
)

MAX_OFFLINE_BATCH = 1024
SERVER_BATCHES = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
PRIOR = {"eff_compute": 0.5, "layer_overhead_us": 20.0, "fp4_gain": 2.0}
_PRIOR_WEIGHT = 0.2 / 0.5**2
_SOFT_L1 = 0.25
GRID = {
    "eff_compute": np.linspace(0.10, 0.95, 18),
    "layer_overhead_us": np.array([0.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 60.0, 80.0]),
    # What native 4-bit (FP4 on Blackwell / CDNA4) computes at, over the FP8 rate: the
    # datasheets say 2; attention, activations and the KV cache stay 8/16-bit, so serving
    # reaches less. Fitted, not assumed.
    "fp4_gain": np.array([1.0, 1.25, 1.5, 1.75, 2.0]),
}
# The interval band: empirical 5 % / 95 % quantiles of the held-out log residuals, never
# narrower than +-10 % (the validation covers fewer regimes than the grid extrapolates
# to) nor wider than x/÷ 3 (beyond it the band says nothing a reader can use; coverage
# says how often the truth falls outside).
MIN_HALF = 0.10
MAX_HALF = float(np.log(3.0))
QUANTILES = (0.05, 0.95)
CONTRACT = {
    "source": pl.Utf8, "gpu_id": pl.Utf8, "num_gpus": pl.Int64, "engine": pl.Utf8,
    "engine_version": pl.Utf8, "model_id": pl.Utf8, "precision": pl.Utf8,
    "precision_bits": pl.Int64, "scenario": pl.Utf8, "concurrency": pl.Int64,
    "input_tokens": pl.Int64, "output_tokens": pl.Int64, "output_tokens_per_s": pl.Float64,
    "output_tokens_per_s_per_user": pl.Float64, "ttft_ms": pl.Float64, "tpot_ms": pl.Float64,
    "power_w": pl.Float64, "as_of": pl.Date, "citation": pl.Utf8,
}  # fmt: skip


def usable(evidence: pl.DataFrame) -> pl.DataFrame:
    """The rows the fit can predict: lengths known (or a sweep, which takes the grid's)."""
    sweep = pl.col("scenario") == "sweep"
    return evidence.filter(
        (pl.col("input_tokens").is_not_null() & pl.col("output_tokens").is_not_null()) | sweep
    ).with_columns(
        input_tokens=pl.col("input_tokens").fill_null(INPUT_TOKENS),
        output_tokens=pl.col("output_tokens").fill_null(OUTPUT_TOKENS),
    )


def _layouts(ev: pl.DataFrame) -> pl.DataFrame:
    """Each row x tensor-parallel group size t dividing its GPU count, x its batches."""
    layouts = pl.DataFrame({"tp": [1, 2, 4, 8]}, schema={"tp": pl.Int32})
    server = pl.DataFrame({"try_batch": list(SERVER_BATCHES)}, schema={"try_batch": pl.Float64})
    rows = ev.join(layouts, how="cross").filter(
        (pl.col("tp") <= pl.col("num_gpus")) & (pl.col("num_gpus") % pl.col("tp") == 0)
    )
    limited = pl.col("tpot_ms").is_not_null() & pl.col("scenario").is_in(["server", "interactive"])
    return pl.concat([
        rows.filter(limited).join(server, how="cross"),
        rows.filter(~limited).with_columns(try_batch=pl.lit(None, pl.Float64)),
    ], how="vertical_relaxed")  # fmt: skip


def cases(
    evidence: pl.DataFrame, gpus: pl.DataFrame, models: pl.DataFrame, anchor: pl.DataFrame
) -> pl.DataFrame:
    """One row per evidence row x tensor-parallel layout x batch tried, with step components.

    `anchor` is llm_serving_anchor.bandwidth_anchor (gpu_id, eff_bandwidth). Columns: row
    (the evidence row's index), gpu_id, engine, measured, replicas, batch, tpot_s (inf
    where no limit), eff_bw, layers and step_components' values. Rows of a GPU without a
    compute figure, or of a model that fits no layout, have no cases.
    """
    ev = (
        usable(evidence)
        .with_row_index("row")
        .with_columns(
            pl.col("input_tokens").cast(pl.Float64), pl.col("output_tokens").cast(pl.Float64)
        )
    )
    base = (
        systems(gpus, models)
        .rename({"num_gpus": "tp"})
        .filter(pl.col("compute_tflops").is_not_null())
        .join(anchor.select("gpu_id", eff_bw="eff_bandwidth"), on="gpu_id")
    )
    joined = (
        _layouts(ev.rename({"precision_bits": "bits"}))
        .join(
            base.drop("vendor", "architecture"),
            left_on=["gpu_id", "model_id", "bits", "tp"],
            right_on=["gpu_id", "model_id", "precision_bits", "tp"],
        )
        .with_columns(num_gpus_row=pl.col("num_gpus"), num_gpus=pl.col("tp"))
    )
    joined = with_capacity(joined, pl.col("input_tokens"), pl.col("output_tokens")).filter(
        pl.col("users_max") >= 1
    )
    limit = pl.coalesce(
        pl.col("try_batch"),
        pl.col("concurrency").cast(pl.Float64),
        pl.lit(float(MAX_OFFLINE_BATCH)),
    )
    joined = joined.with_columns(batch=pl.min_horizontal(pl.col("users_max"), limit)).unique(
        ["row", "tp", "batch"]
    )
    comp = step_components(pl.col("batch"), pl.col("input_tokens"), pl.col("output_tokens"))
    return joined.select(
        "row", "gpu_id", "engine", measured="output_tokens_per_s",
        replicas=(pl.col("num_gpus_row") / pl.col("tp")).cast(pl.Float64),
        batch="batch",
        # Only a Server/Interactive TPOT is a limit; a sweep's TPOT is a measurement.
        tpot_s=pl.when(pl.col("try_batch").is_not_null()).then(pl.col("tpot_ms") / 1000)
        .otherwise(float("inf")),
        eff_bw="eff_bw", layers=pl.col("layers").cast(pl.Float64),
        fp4=(pl.col("bits") == 4) & pl.col("native_precision"), **comp,
    ).sort("row")  # fmt: skip


def _rates(c: pl.DataFrame, theta: np.ndarray) -> np.ndarray:
    """Tokens/s of every case (columns) for each parameter set (rows of theta).

    A server case whose time per output token per user (batch / group rate) misses its
    row's TPOT limit counts 0, except batch 1 (the fallback when nothing meets it).
    """
    arrays = {k: c[k].to_numpy()[None, :] for k in (
        "bytes_step", "flops_step", "comm_s", "prefill_flops", "bandwidth", "compute")}  # fmt: skip
    fp4 = c["fp4"].to_numpy()[None, :]
    arrays["compute"] = arrays["compute"] * np.where(fp4, theta[:, 2:3] / 2, 1.0)
    batch = c["batch"].to_numpy()[None, :]
    overhead = theta[:, 1:2] * 1e-6 * c["layers"].to_numpy()[None, :]
    group = output_rate(arrays, batch, c["eff_bw"].to_numpy()[None, :], theta[:, 0:1], overhead)
    meets = (batch / group <= c["tpot_s"].to_numpy()[None, :]) | (batch <= 1)
    return np.where(meets, c["replicas"].to_numpy()[None, :] * group, 0.0)


def _predict(c: pl.DataFrame, theta: np.ndarray) -> np.ndarray:
    """Predicted tokens/s per evidence row (columns) for each parameter set (rows of theta).

    The best layout and batch per row: the maximum over its cases (`c` sorted by row).
    """
    rows = c["row"].to_numpy()
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    out = [
        np.maximum.reduceat(_rates(c, theta[i : i + 32]), starts, axis=1)
        for i in range(0, len(theta), 32)
    ]
    return np.vstack(out)


def _measured(c: pl.DataFrame) -> np.ndarray:
    return c.group_by("row").agg(pl.col("measured").first()).sort("row")["measured"].to_numpy()


def _theta_grid() -> np.ndarray:
    mesh = np.meshgrid(*GRID.values(), indexing="ij")
    return np.column_stack([m.ravel() for m in mesh])


def _prior(theta: np.ndarray) -> np.ndarray:
    """Squared log distance from PRIOR (the overhead's shifted by 5 us: 0 is allowed)."""
    eff, us, gain = PRIOR["eff_compute"], PRIOR["layer_overhead_us"], PRIOR["fp4_gain"]
    return (
        np.log(theta[:, 0] / eff) ** 2
        + np.log((theta[:, 1] + 5) / (us + 5)) ** 2
        + np.log(theta[:, 2] / gain) ** 2
    )


def _row_losses(c: pl.DataFrame, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(predicted, loss) per parameter set x evidence row.

    The loss is soft-L1 on log(predicted / measured): quadratic to `_SOFT_L1`, linear beyond.
    """
    predicted = _predict(c, theta)
    residual = np.log(predicted / _measured(c)[None, :])
    d = _SOFT_L1
    return predicted, 2 * d**2 * (np.sqrt(1 + (residual / d) ** 2) - 1)


def _best(theta: np.ndarray, loss: np.ndarray, prior_weight: float) -> int:
    return int(np.argmin(loss + prior_weight * _prior(theta)))


def fit(c: pl.DataFrame, prior_weight: float = _PRIOR_WEIGHT) -> dict | None:
    """The best (eff_compute, layer_overhead_us, fp4_gain) for these cases, with rmse."""
    if c.is_empty():
        return None
    theta = _theta_grid()
    predicted, losses = _row_losses(c, theta)
    best = _best(theta, losses.sum(axis=1), prior_weight)
    residual = np.log(predicted[best] / _measured(c))
    return {
        **dict(zip(PRIOR, (float(x) for x in theta[best]), strict=True)),
        "rmse": float(np.sqrt((residual**2).mean())),
    }


def predict_with(c: pl.DataFrame, params: dict) -> np.ndarray:
    """Predicted tokens/s per evidence row of `c` (sorted by row) under fitted `params`."""
    theta = np.array([[params[k] for k in PRIOR]])
    return _predict(c, theta)[0]


def leave_one_gpu_out(c: pl.DataFrame) -> pl.DataFrame:
    """Each GPU's rows predicted by the fit without that GPU: gpu_id, measured, predicted.

    The grid's predictions and per-row losses are computed once; each held-out fit is the
    grid point minimising the loss summed over the OTHER GPUs' rows (the same optimum as
    refitting on them, without predicting every grid point once per GPU).
    """
    out = []
    if not c.is_empty():
        theta = _theta_grid()
        predicted, losses = _row_losses(c, theta)
        measured = _measured(c)
        row_gpu = c.group_by("row").agg(pl.col("gpu_id").first()).sort("row")["gpu_id"]
        total = losses.sum(axis=1)
        for gpu in sorted(set(row_gpu)):
            mine = (row_gpu == gpu).to_numpy()
            if mine.all():
                continue
            best = _best(theta, total - losses[:, mine].sum(axis=1), _PRIOR_WEIGHT)
            out.append(pl.DataFrame({
                "gpu_id": gpu, "measured": measured[mine], "predicted": predicted[best, mine],
            }))  # fmt: skip
    schema = {"gpu_id": pl.Utf8, "measured": pl.Float64, "predicted": pl.Float64}
    return pl.concat(out) if out else pl.DataFrame(schema=schema)


MIN_ENGINE_GPUS = 3  # an engine measured on fewer GPUs takes the pooled fit (labelled)


def band(residuals: np.ndarray) -> tuple[float, float]:
    """(low, high) log offsets of the interval from log(measured / predicted) residuals.

    The empirical QUANTILES, each side at least MIN_HALF and at most MAX_HALF away.
    """
    if len(residuals) < 2:
        return -MAX_HALF, MAX_HALF
    lo, hi = np.quantile(residuals, QUANTILES)
    return float(np.clip(lo, -MAX_HALF, -MIN_HALF)), float(np.clip(hi, MIN_HALF, MAX_HALF))


def coverage(logo: pl.DataFrame) -> float | None:
    """Share of held-out rows inside the band built from the OTHER GPUs' residuals."""
    if logo["gpu_id"].n_unique() < 2:
        return None
    r = (logo["measured"] / logo["predicted"]).log()
    inside = []
    for gpu in sorted(set(logo["gpu_id"])):
        mine = logo["gpu_id"] == gpu
        lo, hi = band(r.filter(~mine).to_numpy())
        own = r.filter(mine).to_numpy()
        inside.extend(((own >= lo) & (own <= hi)).tolist())
    return float(np.mean(inside))


def _summary(engine: str, c: pl.DataFrame, logo: pl.DataFrame, params: dict, left_out: int):
    ape = (logo["predicted"] / logo["measured"] - 1).abs() if logo.height else pl.Series([])
    r = (logo["measured"] / logo["predicted"]).log().to_numpy() if logo.height else np.array([])
    lo, hi = band(r)
    n_gpus = c["gpu_id"].n_unique()
    use = "own fit" if n_gpus >= MIN_ENGINE_GPUS else "too few GPUs: the grid uses the pooled fit"
    return {
        "engine": engine, "gpu_id": None, "n_rows": c["row"].n_unique(), "n_gpus": n_gpus,
        "measured": None, "predicted": None,
        "median_ape": float(ape.median()) if len(ape) else None,
        "p90_ape": float(ape.quantile(0.9)) if len(ape) else None,
        "log_sd": float(np.std(r, ddof=1)) if len(r) >= 2 else params["rmse"],
        "eff_bandwidth": round(float(c.group_by("gpu_id").agg(pl.col("eff_bw").first())
                                     ["eff_bw"].median()), 4),
        "eff_compute": round(params["eff_compute"], 4), "step_overhead_ms": None,
        "layer_overhead_us": params["layer_overhead_us"], "fp4_gain": params["fp4_gain"],
        "log_q05": lo, "log_q95": hi,
        "coverage": coverage(logo) if logo.height else None,
        "detail": (f"{use}; leave-one-GPU-out over {logo['gpu_id'].n_unique()} GPUs"
                   if logo.height else f"{use}; one GPU: in-sample residual spread only")
        + (f"; {left_out} rows without request lengths left out" if left_out else ""),
    }  # fmt: skip


def engine_fits(
    evidence: pl.DataFrame, gpus: pl.DataFrame, models: pl.DataFrame, anchor: pl.DataFrame
) -> pl.DataFrame:
    """The llm_serving_validation rows: per engine (and 'pooled') its fit and LOGO error.

    One summary row per engine (gpu_id NULL; the fitted eff_c and per-layer overhead, the
    band its intervals use, the band's held-out coverage) and one row per held-out GPU.
    """
    all_cases = cases(evidence, gpus, models, anchor)
    left = evidence.height - usable(evidence).height
    rows = []
    groups = [
        (e, all_cases.filter(pl.col("engine") == e)) for e in sorted(set(all_cases["engine"]))
    ]
    for engine, c in [*groups, ("pooled", all_cases)]:
        params = fit(c)
        if params is None:
            continue
        logo = leave_one_gpu_out(c)
        excluded = (
            evidence.filter((pl.col("engine") == engine) | (engine == "pooled")).height
            - usable(evidence.filter((pl.col("engine") == engine) | (engine == "pooled"))).height
        )
        rows.append(_summary(engine, c, logo, params, excluded if engine != "pooled" else left))
        per_gpu = logo.group_by("gpu_id").agg(
            n_rows=pl.len(), measured=pl.col("measured").median(),
            predicted=pl.col("predicted").median(),
            median_ape=(pl.col("predicted") / pl.col("measured") - 1).abs().median(),
        )  # fmt: skip
        rows.extend(
            {**r, "engine": engine, "n_gpus": 1,
             "detail": "held out: predicted by the fit on the other GPUs"}
            for r in per_gpu.iter_rows(named=True)
        )  # fmt: skip
    return _validation_frame(rows)


def _validation_frame(rows: list[dict]) -> pl.DataFrame:
    schema = {
        "engine": pl.Utf8, "gpu_id": pl.Utf8, "n_rows": pl.Int32, "n_gpus": pl.Int32,
        "measured": pl.Float64, "predicted": pl.Float64, "median_ape": pl.Float64,
        "p90_ape": pl.Float64, "log_sd": pl.Float64, "eff_bandwidth": pl.Float64,
        "eff_compute": pl.Float64, "step_overhead_ms": pl.Float64,
        "layer_overhead_us": pl.Float64, "fp4_gain": pl.Float64,
        "log_q05": pl.Float64, "log_q95": pl.Float64,
        "coverage": pl.Float64, "detail": pl.Utf8,
    }  # fmt: skip
    full = [{k: r.get(k) for k in schema} for r in rows]
    return pl.DataFrame(full, schema=schema).sort("engine", "gpu_id", nulls_last=False)


def summaries(validation: pl.DataFrame) -> pl.DataFrame:
    """The engine summary rows of engine_fits (what llm_serving's `fits` argument takes)."""
    return validation.filter(pl.col("gpu_id").is_null())


def residuals(
    evidence: pl.DataFrame,
    gpus: pl.DataFrame,
    models: pl.DataFrame,
    anchor: pl.DataFrame,
    validation: pl.DataFrame,
) -> pl.DataFrame:
    """Each usable evidence row with its in-sample prediction under its engine's fit.

    For the diagnosis table (docs/methodology.md §13): source, scenario, model_id,
    precision, gpu_id, engine, measured, predicted, log_ratio = log(predicted / measured).
    """
    ev = usable(evidence).with_row_index("row")
    c = cases(evidence, gpus, models, anchor)
    out = []
    for engine in sorted(set(c["engine"])):
        part = c.filter(pl.col("engine") == engine)
        fitted = summaries(validation).filter(pl.col("engine") == engine).row(0, named=True)
        out.append(pl.DataFrame({
            "row": part["row"].unique(maintain_order=True),
            "predicted": predict_with(part, fitted),
        }, schema={"row": pl.UInt32, "predicted": pl.Float64}))  # fmt: skip
    return ev.join(pl.concat(out), on="row").select(
        "source", "scenario", "model_id", "precision", "gpu_id", "engine", "num_gpus",
        measured="output_tokens_per_s", predicted="predicted",
        log_ratio=(pl.col("predicted") / pl.col("output_tokens_per_s")).log(),
    )  # fmt: skip
