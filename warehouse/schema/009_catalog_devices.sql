-- 009: the catalog covers GPUs without tensor units (Pascal, GTX 16, RDNA 2) and parts
-- whose vendor publishes no per-GPU power (B300, GB200): those fields may be NULL (never 0).
-- Multi-die boards say how many GPUs software sees (`devices`: MI250/MI250X and K80 2,
-- A16 4) and the memory of one of them (`memory_per_device_gb`); the other figures stay
-- per board as the vendor prints them.
ALTER TABLE gpus ALTER COLUMN fp16_tensor_tflops DROP NOT NULL;
ALTER TABLE gpus ALTER COLUMN tdp_w DROP NOT NULL;
ALTER TABLE gpus ADD COLUMN devices INTEGER;
ALTER TABLE gpus ADD COLUMN memory_per_device_gb DOUBLE;
