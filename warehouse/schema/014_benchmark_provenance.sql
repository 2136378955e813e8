-- 014: provenance of every benchmark row (docs/schema.md, "Benchmark provenance").
-- `stack` is the software that produced the figure (pytorch-cuda, tensorrt, tinygrad,
-- llama.cpp-vulkan, vllm, ...), `host` the class of machine the GPU sat in (server, desktop,
-- laptop, egpu, sbc, external-link) and `batch_regime` how the run batched (batch-1,
-- fixed-batch, offline, server, max-throughput). The vocabularies are defined once, in
-- sources/benchmarks/provenance.py. NULL = the source does not say; never guessed.
ALTER TABLE benchmark_results ADD COLUMN stack VARCHAR;
ALTER TABLE benchmark_results ADD COLUMN host VARCHAR;
ALTER TABLE benchmark_results ADD COLUMN batch_regime VARCHAR;
ALTER TABLE llm_benchmarks ADD COLUMN stack VARCHAR;
ALTER TABLE llm_benchmarks ADD COLUMN host VARCHAR;
ALTER TABLE llm_benchmarks ADD COLUMN batch_regime VARCHAR;
