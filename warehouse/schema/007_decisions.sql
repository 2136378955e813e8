-- 007: total cost for 1/2/4/8-GPU systems with bootstrap intervals, perf per rented dollar,
-- sensitivity of ranks to cost parameters, and recommendations (docs/schema.md).
-- Existing perf_per_dollar / cloud_vs_buy columns are kept; new ones are added.

ALTER TABLE perf_per_dollar ADD COLUMN host_cost_usd DOUBLE;
ALTER TABLE perf_per_dollar ADD COLUMN multi_gpu_efficiency DOUBLE;
-- 1 = best perf per dollar of its workload x system size x market (point estimate).
ALTER TABLE perf_per_dollar ADD COLUMN rank INTEGER;
-- 2.5 / 97.5 percentiles of the bootstrap replicates, and the share of replicates in
-- which the GPU is among the 3 best of its workload x system size x market.
ALTER TABLE perf_per_dollar ADD COLUMN perf_per_dollar_low DOUBLE;
ALTER TABLE perf_per_dollar ADD COLUMN perf_per_dollar_high DOUBLE;
ALTER TABLE perf_per_dollar ADD COLUMN p_top3 DOUBLE;

ALTER TABLE cloud_vs_buy ADD COLUMN buy_market VARCHAR;
ALTER TABLE cloud_vs_buy ADD COLUMN buy_price_usd DOUBLE;
ALTER TABLE cloud_vs_buy ADD COLUMN cloud_usd_per_day DOUBLE;
ALTER TABLE cloud_vs_buy ADD COLUMN own_usd_per_day DOUBLE;

CREATE TABLE cloud_perf_per_dollar (
    run_date DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    workload VARCHAR NOT NULL,
    provider VARCHAR NOT NULL,
    price_type VARCHAR NOT NULL,
    instance_type VARCHAR,
    region VARCHAR,
    usd_per_gpu_hour DOUBLE NOT NULL,
    relative_performance DOUBLE NOT NULL,
    method VARCHAR NOT NULL,
    perf_per_dollar DOUBLE NOT NULL,
    perf_per_dollar_low DOUBLE,
    perf_per_dollar_high DOUBLE,
    rank INTEGER NOT NULL,
    offer_day DATE NOT NULL,
    n_offers INTEGER NOT NULL
);

CREATE TABLE sensitivity (
    run_date DATE NOT NULL,
    parameter VARCHAR NOT NULL,
    value DOUBLE NOT NULL,
    default_value DOUBLE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    workload VARCHAR NOT NULL,
    system_gpus INTEGER NOT NULL,
    market VARCHAR NOT NULL,
    perf_per_dollar DOUBLE NOT NULL,
    rank INTEGER NOT NULL,
    perf_per_dollar_at_default DOUBLE NOT NULL,
    rank_at_default INTEGER NOT NULL,
    rank_change INTEGER NOT NULL
);

CREATE TABLE recommendations (
    run_date DATE NOT NULL,
    workload VARCHAR NOT NULL,
    memory_tier_gb DOUBLE NOT NULL,
    option VARCHAR NOT NULL,
    gpu_id VARCHAR NOT NULL,
    memory_gb DOUBLE NOT NULL,
    perf_per_dollar DOUBLE NOT NULL,
    perf_per_dollar_low DOUBLE,
    perf_per_dollar_high DOUBLE,
    p_best DOUBLE NOT NULL,
    runner_up_gpu_id VARCHAR,
    runner_up_perf_per_dollar DOUBLE,
    runner_up_p_best DOUBLE,
    n_candidates INTEGER NOT NULL,
    unit VARCHAR NOT NULL,
    method VARCHAR,
    market VARCHAR,
    price_usd DOUBLE,
    provider VARCHAR,
    price_type VARCHAR,
    instance_type VARCHAR,
    usd_per_gpu_hour DOUBLE
);
