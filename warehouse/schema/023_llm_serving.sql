-- 023: LLM models as data and batched serving (model/llm_models.py, model/llm_serving.py;
-- docs/schema.md, "LLM serving").

-- One row per model (sources/data/llm/models.csv; replaced whole on each load).
CREATE TABLE llm_models (
    model_id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    total_params_b DOUBLE NOT NULL,   -- every parameter (all experts: what memory holds)
    active_params_b DOUBLE NOT NULL,  -- what one token reads (= total for a dense model)
    layers INTEGER NOT NULL,
    hidden_size INTEGER NOT NULL,
    attention VARCHAR NOT NULL,       -- mha | gqa | sliding_gqa | mla
    attention_heads INTEGER NOT NULL,
    kv_heads INTEGER NOT NULL,
    head_dim INTEGER,                 -- NULL for mla
    kv_lora_rank INTEGER,             -- mla only
    qk_rope_head_dim INTEGER,         -- mla only
    sliding_window INTEGER,           -- sliding_gqa only: tokens a sliding layer attends over
    sliding_layers INTEGER,           -- sliding_gqa only: how many layers slide
    num_experts INTEGER,              -- routed experts per MoE layer; NULL: dense
    experts_per_token INTEGER,
    context_max INTEGER NOT NULL,
    licence VARCHAR NOT NULL,
    source VARCHAR NOT NULL,          -- repository and files the figures come from
    as_of DATE NOT NULL               -- the model's release date
);

-- One row per run_date x gpu_id x model_id x precision_bits x num_gpus x concurrency.
CREATE TABLE llm_serving (
    run_date DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    model_id VARCHAR NOT NULL,
    precision_bits INTEGER NOT NULL,  -- 4 | 8 | 16 (weights)
    num_gpus INTEGER NOT NULL,        -- tensor-parallel degree: 1 | 2 | 4 | 8
    concurrency INTEGER NOT NULL,     -- users decoding at once (1..256, until KV memory runs out)
    engine VARCHAR NOT NULL,          -- whose fitted efficiencies the row uses
    fits BOOLEAN NOT NULL,            -- weights (total params) + one user's KV fit
    kv_capacity_tokens DOUBLE,        -- KV cache tokens the memory left holds (whole system)
    output_tokens_per_s DOUBLE,       -- whole system; NULL when it does not fit / no compute figure
    output_tokens_per_s_per_user DOUBLE,
    low DOUBLE,                       -- interval of output_tokens_per_s
    high DOUBLE,
    prefill_tokens_per_s DOUBLE,      -- whole system, compute bound
    ttft_s DOUBLE,                    -- one prompt of the stated input length on an idle server
    joules_per_output_token DOUBLE,
    energy_basis VARCHAR,             -- measured | tdp
    interconnect VARCHAR,             -- how the GPUs all-reduce (NULL for one GPU)
    method VARCHAR NOT NULL,
    evidence VARCHAR NOT NULL         -- a citation, or 'modelled: ...'
);

-- The serving model's leave-one-GPU-out validation per engine: one summary row per engine
-- (gpu_id NULL) and one row per held-out GPU.
CREATE TABLE llm_serving_validation (
    run_date DATE NOT NULL,
    engine VARCHAR NOT NULL,
    gpu_id VARCHAR,                   -- NULL: the engine's summary row
    n_rows INTEGER NOT NULL,          -- measured serving rows
    n_gpus INTEGER NOT NULL,
    measured DOUBLE,                  -- per-GPU rows: median measured tokens/s
    predicted DOUBLE,                 -- per-GPU rows: median predicted without the GPU
    median_ape DOUBLE,
    p90_ape DOUBLE,
    log_sd DOUBLE,                    -- SD of log(predicted / measured), the intervals' spread
    eff_bandwidth DOUBLE,             -- the engine's fitted efficiencies (all its rows)
    eff_compute DOUBLE,
    step_overhead_ms DOUBLE,
    detail VARCHAR NOT NULL
);
