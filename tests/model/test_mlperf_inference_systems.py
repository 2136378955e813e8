"""MLPerf Inference systems (issue 22): every single-node system counts, divided by its GPU
count alone. Hand-made rows; each test asserts a behaviour of model/debias.py."""

import datetime as dt
import math

import polars as pl
import pytest

from model.debias import debias, select_comparable
from model.parameters import ModelParameters
from model.performance_fit import measured_workload

DAY = dt.date(2026, 9, 20)


def system(gpu, n, per_gpu, i=0, **extra):
    """One MLPerf Inference v4.1 Offline system of `n` GPUs at `per_gpu` tokens/s each."""
    row = {
        "source": "mlperf",
        "software_era": "mlperf-inference-v4.1",
        "citation": f"sub/{gpu}-{n}x-{i}@x",
        "task": "inference",
        "precision": "fp16",
        "workload_class": "transformer",
        "model": "llama2_70b_99",
        "gpu_id": gpu,
        "num_gpus": n,
        "batch_size_per_gpu": None,
        "throughput": per_gpu * n,
        "unit": "tokens/s",
        "flags": "no_batch_size",
        "as_of": dt.date(2024, 8, 28),
    }
    return {**row, **extra}


def frame(rows):
    return pl.DataFrame(rows, schema_overrides={"batch_size_per_gpu": pl.Int64})


def test_an_8_gpu_offline_system_is_divided_by_8_not_by_8_e_n():
    # Dettmers' constants give training an e_8 below 1; an Offline system has none.
    out = debias(frame([system("a", 8, 3000.0)]), ModelParameters(constants="dettmers"), DAY)
    row = out.row(0, named=True)
    assert row["multi_gpu_efficiency"] == 1.0
    assert row["efficiency_source"] == "inference:replicas"
    assert row["throughput_per_gpu"] == pytest.approx(24000.0 / 8)


def test_every_single_node_system_is_kept_but_not_a_multi_node_one():
    rows = frame(
        [system("a", 1, 4500.0), system("a", 4, 2650.0), system("a", 8, 3950.0),
         system("a", 16, 2600.0)]
    )  # fmt: skip
    kept = select_comparable(rows)
    # The fewest-GPU rule would keep the 1-GPU system alone.
    assert sorted(kept["num_gpus"].to_list()) == [1, 4, 8]


def test_training_rows_still_keep_only_the_fewest_gpu_run():
    rows = frame(
        [system("a", 1, 10.0, task="training", model="bert", unit="samples/s",
                batch_size_per_gpu=32, workload_class="transformer", source="lambda",
                software_era="v1", citation="c", flags=""),
         system("a", 8, 9.0, task="training", model="bert", unit="samples/s",
                batch_size_per_gpu=32, workload_class="transformer", source="lambda",
                software_era="v1", citation="c", flags="")]
    )  # fmt: skip
    assert select_comparable(rows)["num_gpus"].to_list() == [1]


def test_a_lone_1_gpu_system_does_not_outweigh_eight_8_gpu_systems():
    # The v4.1 Llama-2-70B fp16 shape: H200 one 1-GPU system 14 % above its eight 8-GPU
    # systems; H100 three 4-GPU systems 12 % below its ten 8-GPU ones. The 8-GPU systems
    # alone say 1.31; the fewest-GPU systems alone would say 1.69.
    rows = (
        [system("h200", 1, 4490.0)]
        + [system("h200", 8, 3950.0, i) for i in range(8)]
        + [system("h100", 4, 2650.0, i) for i in range(3)]
        + [system("h100", 8, 3025.0, i) for i in range(10)]
    )
    out = debias(frame(rows), ModelParameters(constants="dettmers"), DAY)
    assert out.height == len(rows)
    fit = measured_workload(out, "inference_16bit", "h100")
    perf = dict(zip(fit["gpu_id"], fit["log_perf"], strict=True))
    ratio = math.exp(perf["h200"] - perf["h100"])
    eight_gpu = 3950.0 / 3025.0
    fewest_gpu = 4490.0 / 2650.0
    assert abs(math.log(ratio / eight_gpu)) < 0.08
    assert abs(math.log(ratio / eight_gpu)) < abs(math.log(fewest_gpu / eight_gpu)) / 4
