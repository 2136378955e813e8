-- 001: the published core tables (docs/schema.md). Later migrations add columns and tables;
-- they never rename these. No PRIMARY KEY constraints: loads are delete-then-insert per
-- source x day inside one transaction, and uniqueness is enforced by asset checks instead.

CREATE TABLE gpus (
    gpu_id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    vendor VARCHAR NOT NULL,
    architecture VARCHAR NOT NULL,
    form_factor VARCHAR NOT NULL,
    memory_gb DOUBLE NOT NULL,
    memory_bandwidth_gbs DOUBLE NOT NULL,
    fp16_tensor_tflops DOUBLE NOT NULL,
    fp8_tensor_tflops DOUBLE,
    int8_tensor_tops DOUBLE,
    tdp_w DOUBLE NOT NULL,
    l2_cache_mb DOUBLE,
    release_date DATE,
    launch_price_usd DOUBLE,
    source VARCHAR NOT NULL,
    source_url VARCHAR,
    as_of DATE NOT NULL
);

CREATE TABLE price_observations (
    observed_at TIMESTAMP NOT NULL,
    source VARCHAR NOT NULL,
    market VARCHAR NOT NULL,
    gpu_id VARCHAR,
    title VARCHAR,
    price DOUBLE,
    currency VARCHAR,
    price_usd DOUBLE,
    url VARCHAR,
    listing_id VARCHAR,
    citation VARCHAR
);

CREATE TABLE gpu_prices_daily (
    day DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    market VARCHAR NOT NULL,
    price_usd DOUBLE NOT NULL,
    n_observations INTEGER NOT NULL,
    n_dropped INTEGER NOT NULL,
    price_min_usd DOUBLE,
    price_max_usd DOUBLE,
    sources VARCHAR
);

CREATE TABLE cloud_offers (
    observed_at TIMESTAMP NOT NULL,
    provider VARCHAR NOT NULL,
    instance_type VARCHAR,
    region VARCHAR,
    price_type VARCHAR NOT NULL,
    gpu_id VARCHAR NOT NULL,
    gpu_count INTEGER NOT NULL,
    usd_per_hour DOUBLE NOT NULL,
    usd_per_gpu_hour DOUBLE NOT NULL,
    citation VARCHAR
);

CREATE TABLE benchmark_results (
    source VARCHAR NOT NULL,
    gpu_id VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    workload_class VARCHAR NOT NULL,
    precision VARCHAR NOT NULL,
    num_gpus INTEGER NOT NULL,
    batch_size_per_gpu INTEGER NOT NULL,
    throughput DOUBLE NOT NULL,
    unit VARCHAR NOT NULL,
    as_of DATE NOT NULL,
    task VARCHAR NOT NULL,
    software_era VARCHAR NOT NULL,
    citation VARCHAR
);

CREATE TABLE benchmark_debiased (
    run_date DATE NOT NULL,
    source VARCHAR NOT NULL,
    software_era VARCHAR NOT NULL,
    citation VARCHAR,
    gpu_id VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    workload_class VARCHAR NOT NULL,
    task VARCHAR NOT NULL,
    precision VARCHAR NOT NULL,
    workload VARCHAR NOT NULL,
    num_gpus INTEGER NOT NULL,
    batch_size_per_gpu INTEGER NOT NULL,
    throughput DOUBLE NOT NULL,
    batch_size_ref DOUBLE NOT NULL,
    batch_factor DOUBLE NOT NULL,
    multi_gpu_efficiency DOUBLE NOT NULL,
    throughput_per_gpu DOUBLE NOT NULL
);

CREATE TABLE relative_performance (
    run_date DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    workload VARCHAR NOT NULL,
    value DOUBLE NOT NULL,
    method VARCHAR NOT NULL,
    n_results INTEGER NOT NULL,
    reference_gpu VARCHAR NOT NULL
);

CREATE TABLE perf_per_dollar (
    run_date DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    workload VARCHAR NOT NULL,
    system_gpus INTEGER NOT NULL,
    market VARCHAR NOT NULL,
    price_usd DOUBLE NOT NULL,
    total_cost_usd DOUBLE NOT NULL,
    electricity_usd_per_year DOUBLE NOT NULL,
    perf_per_dollar DOUBLE NOT NULL,
    relative_performance DOUBLE NOT NULL,
    method VARCHAR NOT NULL,
    price_day DATE NOT NULL
);

CREATE TABLE cloud_vs_buy (
    run_date DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    provider VARCHAR NOT NULL,
    price_type VARCHAR NOT NULL,
    utilization DOUBLE NOT NULL,
    break_even_days DOUBLE,
    usd_per_gpu_hour DOUBLE NOT NULL,
    buy_cost_usd DOUBLE NOT NULL,
    instance_type VARCHAR
);

CREATE TABLE model_runs (
    run_date DATE NOT NULL,
    created_at TIMESTAMP NOT NULL,
    reference_gpu VARCHAR NOT NULL,
    parameters VARCHAR NOT NULL
);
