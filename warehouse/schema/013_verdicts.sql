-- 013: the site's verdicts as a model table (model/verdicts.py; docs/schema.md, `verdicts`).
-- One row per workload x (budget | memory tier) x option; gpu_id NULL where nothing fits.
-- Columns and types are those of model.verdicts.COLUMNS, so the frame round-trips exactly.

CREATE TABLE verdicts (
    run_date DATE NOT NULL,
    workload VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,            -- budget | memory
    "limit" DOUBLE NOT NULL,          -- budget: USD of total cost (renting: for the hours); memory: GB, at least
    option VARCHAR NOT NULL,          -- buy_new | buy_used | rent_on_demand | rent_spot
    gpu_id VARCHAR,
    system_gpus INTEGER,
    perf_per_dollar DOUBLE,
    perf_per_dollar_low DOUBLE,
    perf_per_dollar_high DOUBLE,
    p_best DOUBLE,
    method VARCHAR,
    relative_performance DOUBLE,
    market VARCHAR,
    price_usd DOUBLE,
    total_cost_usd DOUBLE,
    price_method VARCHAR,
    price_day DATE,
    provider VARCHAR,
    price_type VARCHAR,
    instance_type VARCHAR,
    usd_per_gpu_hour DOUBLE,
    gpu_count INTEGER,
    offer_day DATE,
    runner_up_gpu_id VARCHAR,
    runner_up_system_gpus INTEGER,
    n_candidates INTEGER,
    fastest_gpu_id VARCHAR,
    fastest_system_gpus INTEGER,
    cheapest_gpu_id VARCHAR,
    cheapest_cost_usd DOUBLE,
    age_days BIGINT,
    unit VARCHAR NOT NULL,
    why VARCHAR NOT NULL
);
