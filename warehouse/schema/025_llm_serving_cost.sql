-- 025: LLM serving cost at interactivity targets and published API list prices (issue 24;
-- model/llm_serving_cost.py, sources/llm_api_prices.py; docs/schema.md "LLM serving cost";
-- methodology "LLM serving cost").

-- One row per run x configuration (GPU x model x precision x GPU count) x basis x target
-- tokens/s per user: the concurrency a provider runs to give every user the target, and
-- what a million output and input tokens cost there.
CREATE TABLE llm_serving_cost (
    run_date DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    model_id VARCHAR NOT NULL,
    precision_bits INTEGER NOT NULL,
    num_gpus INTEGER NOT NULL,
    basis VARCHAR NOT NULL,                        -- buy_new | buy_used | rent_on_demand | rent_spot
    min_tokens_per_s_per_user INTEGER NOT NULL,    -- the target: 10 | 20 | 50
    concurrency INTEGER NOT NULL,                  -- the operating point (llm_serving row)
    output_tokens_per_s_per_user DOUBLE NOT NULL,  -- what each user gets there (>= target)
    usd_per_million_output_tokens DOUBLE NOT NULL,
    usd_per_million_input_tokens DOUBLE,           -- NULL where llm_serving has no prefill rate
    low DOUBLE,                                    -- 95 % interval of the output-token cost
    high DOUBLE,
    utilization DOUBLE,                            -- buying: the share of the years in use; renting: NULL
    detail VARCHAR NOT NULL,
    rank INTEGER NOT NULL                          -- 1 = cheapest of model x precision x basis x target
);

-- One row per model x provider: a published API list price. A sanity band beside
-- llm_serving_cost, never an input to it. Replaced whole from sources/data/llm/api_prices.csv.
CREATE TABLE llm_api_prices (
    model_id VARCHAR NOT NULL,
    provider VARCHAR NOT NULL,
    usd_per_million_input_tokens DOUBLE NOT NULL,
    usd_per_million_output_tokens DOUBLE NOT NULL,
    as_of DATE NOT NULL,
    citation VARCHAR NOT NULL,
    url VARCHAR NOT NULL
);
