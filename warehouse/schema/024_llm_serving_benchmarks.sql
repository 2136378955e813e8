-- 024: published LLM serving measurements (issue 24 item 2's evidence; sources/benchmarks/
-- serving.py; docs/schema.md "llm_serving_benchmarks"; sources/data/benchmarks/llm/
-- MANIFEST.md section "serving.csv"). One row per published measurement, replaced whole
-- by each run. Throughput is the whole system's: per GPU is output_tokens_per_s / num_gpus.

CREATE TABLE llm_serving_benchmarks (
    source VARCHAR NOT NULL,                -- mlperf | tensorrt-llm-perf-overview | yobitelcomm-bench
    gpu_id VARCHAR NOT NULL,
    num_gpus INTEGER NOT NULL,
    engine VARCHAR NOT NULL,                -- tensorrt-llm | vllm | sglang | llama.cpp | mlx
    engine_version VARCHAR,                 -- NULL: the source does not state it
    model_id VARCHAR NOT NULL,
    precision VARCHAR NOT NULL,             -- fp4 | nvfp4 | mxfp4 | int4 | fp8 | int8 | bf16 | fp16
    precision_bits INTEGER NOT NULL,        -- 4 | 8 | 16
    scenario VARCHAR NOT NULL,              -- offline | server | interactive | sweep
    concurrency INTEGER,                    -- sweep points; NULL for MLPerf (not published)
    input_tokens INTEGER,                   -- NULL: not stated
    output_tokens INTEGER,                  -- NULL: not stated (MLPerf: mean tokens per sample)
    output_tokens_per_s DOUBLE NOT NULL,    -- whole system
    output_tokens_per_s_per_user DOUBLE,    -- NULL: not stated
    ttft_ms DOUBLE,                         -- MLPerf Server/Interactive: the p99 limit met
    tpot_ms DOUBLE,                         -- MLPerf Server/Interactive: the p99 limit met
    power_w DOUBLE,                         -- system power measured (MLPerf power); NULL otherwise
    as_of DATE NOT NULL,
    citation VARCHAR NOT NULL
);
