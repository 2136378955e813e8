-- 029: the buyer's questions of issue 25 (docs/schema.md; methodology "I already have a PC"
-- and "Rent or buy at your utilisation"). Model tables keyed by run_date, written by
-- pipeline/defs/model/buyer.py from model/upgrade.py and model/rent_or_buy.py.

-- The best card by its own price alone (no host, no electricity), per workload x market x
-- card budget x criterion (`performance`: the fastest card that fits; `value`: the highest
-- relative performance per card dollar). gpu_id NULL: no eligible card is priced within.
CREATE TABLE upgrade_picks (
    run_date DATE NOT NULL,
    workload VARCHAR NOT NULL,
    market VARCHAR NOT NULL,          -- new | used
    budget_usd DOUBLE NOT NULL,       -- the card's price may not exceed it
    criterion VARCHAR NOT NULL,       -- performance | value
    gpu_id VARCHAR,
    price_usd DOUBLE,
    price_low DOUBLE,
    price_high DOUBLE,
    price_method VARCHAR,
    price_day DATE,
    age_days INTEGER,
    n_observations INTEGER,
    relative_performance DOUBLE,
    relative_performance_low DOUBLE,
    relative_performance_high DOUBLE,
    method VARCHAR,
    perf_per_dollar DOUBLE,           -- relative performance per card dollar
    perf_per_dollar_low DOUBLE,
    perf_per_dollar_high DOUBLE,
    p_best DOUBLE,
    tie_gpu_ids VARCHAR,
    runner_up_gpu_id VARCHAR,
    n_candidates INTEGER,
    memory_gb DOUBLE,
    tdp_w DOUBLE,
    psu_w INTEGER,                    -- the PSU the desktop needs (model.upgrade.psu_watts)
    basis VARCHAR,
    caveat VARCHAR,
    cheapest_gpu_id VARCHAR,          -- nothing fits: the cheapest eligible card
    cheapest_usd DOUBLE
);

-- Owning or renting, per workload x GPU class (by memory) x utilisation x rent price type:
-- the cheapest reference-GPU-hour of work either way over the ownership period.
CREATE TABLE rent_or_buy (
    run_date DATE NOT NULL,
    workload VARCHAR NOT NULL,
    gpu_class VARCHAR NOT NULL,       -- model.rent_or_buy.GPU_CLASSES id
    utilization DOUBLE NOT NULL,
    price_type VARCHAR NOT NULL,      -- on_demand | spot
    own_gpu_id VARCHAR,
    own_market VARCHAR,
    own_usd_per_work_hour DOUBLE,
    rent_gpu_id VARCHAR,
    rent_provider VARCHAR,
    rent_usd_per_gpu_hour DOUBLE,
    rent_usd_per_work_hour DOUBLE,
    cheaper VARCHAR                   -- own | rent; NULL where one side has no candidate
);

-- Each GPU one can both buy (new or used) and rent (a fresh offer): the utilisation above
-- which owning is cheaper over the ownership period, at its cheapest fresh offer.
CREATE TABLE rent_or_buy_gpus (
    run_date DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    gpu_class VARCHAR,
    memory_gb DOUBLE,
    market VARCHAR NOT NULL,
    price_usd DOUBLE,
    own_fixed_usd DOUBLE,             -- price + host share - resale, per GPU
    electricity_usd_per_hour DOUBLE,  -- per GPU-hour used (card + host watts)
    price_type VARCHAR NOT NULL,
    provider VARCHAR,
    usd_per_gpu_hour DOUBLE,
    offer_day DATE,
    break_even_utilization DOUBLE,    -- NULL: renting is cheaper at any use (see note)
    note VARCHAR
);
