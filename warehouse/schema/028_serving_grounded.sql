-- 028: serving evidence grade (docs/schema.md, "LLM serving cost"; methodology §14).
-- TRUE when the GPU's architecture has at least one published serving measurement
-- (llm_serving_benchmarks); FALSE when its serving rate is extrapolated from other
-- architectures. rank puts grounded configurations first: an estimate never outranks a
-- configuration the evidence reaches.
ALTER TABLE llm_serving_cost ADD COLUMN grounded BOOLEAN;
