-- 017: LLM calibration hygiene (docs/schema.md, "LLM inference").
-- `context_depth`: tokens already in the KV cache when the test began (llama-bench `-d N`,
-- `tg128@d4096`); NULL where the source does not state it (read as an empty cache).
ALTER TABLE llm_benchmarks ADD COLUMN context_depth INTEGER;
-- Which figure a throughput row and a cost row rest on: 'measured' (a published batch-1
-- decode of the same GPU x model size x bits x GPU count x engine class) or 'modelled'.
ALTER TABLE llm_throughput ADD COLUMN rate_source VARCHAR;
ALTER TABLE llm_cost ADD COLUMN rate_source VARCHAR;
-- The decode rate a cost row priced (tokens/s), so that the cost table shows its own speed.
ALTER TABLE llm_cost ADD COLUMN decode_tokens_per_s DOUBLE;
