-- 011: LLM inference (model/llm.py; docs/schema.md, "LLM inference").

CREATE TABLE llm_benchmarks (
    source VARCHAR NOT NULL,
    gpu_id VARCHAR NOT NULL,
    num_gpus INTEGER NOT NULL,
    engine VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    model_params_b DOUBLE NOT NULL,
    bits INTEGER NOT NULL,
    quant VARCHAR NOT NULL,
    phase VARCHAR NOT NULL,           -- decode | prefill | serving
    batch INTEGER,
    context_tokens INTEGER,
    tokens_per_s DOUBLE NOT NULL,
    power_w DOUBLE,
    as_of DATE NOT NULL,
    citation VARCHAR NOT NULL
);

CREATE TABLE llm_throughput (
    run_date DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    model_params_b INTEGER NOT NULL,  -- size class: 8, 32, 70 (reference architectures)
    bits INTEGER NOT NULL,            -- 4, 8, 16
    num_gpus INTEGER NOT NULL,
    context_tokens INTEGER,           -- modelled: llm_context_tokens; measured: the test's (NULL: not stated)
    fits BOOLEAN NOT NULL,
    needed_gb DOUBLE,                 -- weights + KV cache + runtime overhead (modelled rows)
    available_gb DOUBLE,
    decode_tokens_per_s DOUBLE,       -- batch 1; NULL when it does not fit
    decode_low DOUBLE,
    decode_high DOUBLE,
    prefill_tokens_per_s DOUBLE,
    method VARCHAR NOT NULL,          -- 'modelled: ...', 'measured (engine)', 'does not fit'
    n_results INTEGER NOT NULL
);

CREATE TABLE llm_cost (
    run_date DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    model_params_b INTEGER NOT NULL,
    bits INTEGER NOT NULL,
    num_gpus INTEGER NOT NULL,
    basis VARCHAR NOT NULL,           -- buy_new | buy_used | buy_mean | rent_on_demand | rent_spot
    usd_per_million_tokens DOUBLE NOT NULL,
    low DOUBLE,
    high DOUBLE,
    utilization DOUBLE,               -- buying: the share of the years the system generates; renting: NULL
    detail VARCHAR NOT NULL,
    rank INTEGER NOT NULL             -- 1 = cheapest of its model size x bits x basis
);
