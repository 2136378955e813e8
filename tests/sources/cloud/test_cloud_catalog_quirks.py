"""SkyPilot-format catalogs of clouds we do not load (yet): Nebius and Alibaba Cloud.

Their catalogs carry real preemptible prices, but the captured versions could not be dated
(see sources/data/cloud/MANIFEST.md), so they feed no bundled offers; `python -m sources
parse nebius|alicloud vms.csv` reads them, and these are the quirks it must get right.
"""

import pytest

from sources.__main__ import main
from sources.cloud.parsers import CLOUD_PARSERS

# SkyPilot-format catalogs as each cloud's catalog writes them: Nebius puts the instance's
# RAM in GpuInfo's SizeInMiB; Alibaba's GpuInfo is a bare "<name> <N>GB" and it sells vGPU
# slices ("A10*1/12").
NEBIUS_CSV = (
    b"InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,"
    b"SpotPrice\n"
    b"cpu-d3_4vcpu-16gb,,0,4,16,0.0992,eu-north1,,\n"
    b"gpu-h100-sxm_1gpu-16vcpu-200gb,H100,1,16,200,2.95,eu-north1,\"{'Gpus': [{'Name': "
    b"'H100', 'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 204800}}], "
    b"'TotalGpuMemoryInMiB': 204800}\",1.25\n"
    b"gpu-l40s-a_1gpu-8vcpu-32gb,L40S,1,8,32,1.5484,eu-north1,\"{'Gpus': [{'Name': 'L40S', "
    b"'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 32768}}], "
    b"'TotalGpuMemoryInMiB': 32768}\",\n"
)
ALICLOUD_CSV = (
    b"InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
    b"Region,AvailabilityZone,Generation,Arch\n"
    b"ecs.gn6e-c12g1.3xlarge,V100,1,12,92,V100 32GB,3.81637344,1.18944408,ap-southeast-1,"
    b"ap-southeast-1b,ecs.gn6e,X86\n"
    b"ecs.gn7i-c8g1.2xlarge,A10,1,8,30,A10 24GB,2.50219944,0.78205014,ap-southeast-1,"
    b"ap-southeast-1b,ecs.gn7i,X86\n"
    b"ecs.sgn7i-vws-m2.xlarge,A10*1/12,1,4,15.5,A10*1/12 2GB,0.35606901,0.05431858,"
    b"ap-southeast-1,ap-southeast-1a,ecs.sgn7i-vws,X86\n"
)


def by_type(provider: str, content: bytes) -> dict:
    return {(o.instance_type, o.price_type): o for o in CLOUD_PARSERS[provider](content)}


def test_nebius_gpu_info_memory_is_not_read_as_gpu_memory():
    offers = by_type("nebius", NEBIUS_CSV)
    # 204800 MiB is the VM's RAM: read as GPU memory it would make this an H100 NVL.
    h100 = offers["gpu-h100-sxm_1gpu-16vcpu-200gb", "spot"]
    assert (h100.provider, h100.gpu, h100.usd_per_hour) == ("nebius", "h100-sxm5-80gb", 1.25)
    assert offers["gpu-h100-sxm_1gpu-16vcpu-200gb", "on_demand"].usd_per_hour == 2.95
    assert offers["gpu-l40s-a_1gpu-8vcpu-32gb", "on_demand"].gpu == "l40s"
    assert ("gpu-l40s-a_1gpu-8vcpu-32gb", "spot") not in offers  # empty SpotPrice
    assert len(offers) == 3  # the CPU row has no accelerator


def test_alicloud_reads_bare_gpu_memory_and_leaves_vgpu_slices_unknown():
    offers = by_type("alicloud", ALICLOUD_CSV)
    # "V100 32GB" in GpuInfo tells the 32 GB part; the name alone would say 16 GB.
    assert offers["ecs.gn6e-c12g1.3xlarge", "on_demand"].gpu == "v100-sxm2-32gb"
    assert offers["ecs.gn7i-c8g1.2xlarge", "spot"].usd_per_hour == 0.78205014
    slice_ = offers["ecs.sgn7i-vws-m2.xlarge", "on_demand"]
    assert slice_.gpu is None and slice_.gpu_name == "A10*1/12"  # counted as unknown


@pytest.mark.parametrize("provider", ["nebius", "alicloud"])
def test_inspect_command_reads_the_catalogs(tmp_path, capsys, provider):
    path = tmp_path / "vms.csv"
    path.write_bytes(NEBIUS_CSV if provider == "nebius" else ALICLOUD_CSV)
    assert main(["parse", provider, str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(f'"provider": "{provider}"' in line for line in lines)
