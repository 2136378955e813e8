-- Machines sold whole (DGX Spark, Mac Studio, Ryzen AI Max PCs; form factor `system`) share one
-- memory pool between CPU and GPU, and the OS or driver caps what the GPU may hold (macOS:
-- 75 % by default; Ryzen AI Max: 96 of 128 GB). `llm_memory_gb` is the memory the LLM fit
-- uses: that cap (sources/data/specs/unified_memory.csv), else `memory_gb`.
ALTER TABLE gpus ADD COLUMN llm_memory_gb DOUBLE;
