"""What the test cloud sells: regions, zones, GPU instance types, prices, images (synthetic).

Made by hand for the tests: the shapes (vCPUs, memory, GPU model, count, GPU memory) follow the ECS
"GPU-accelerated compute-optimized instance families" page
(https://www.alibabacloud.com/help/en/ecs/user-guide/gpu-accelerated-compute-optimized-and-vgpu-accelerated-instance-families-1);
the prices are invented round figures in CNY, roughly in the proportions of the public price list
but NOT real prices (the bundled snapshot resources/catalog/alibaba.csv holds the real ones).  A test
that needs to tell live prices from snapshot prices relies on them being different.
"""

from __future__ import annotations

from dataclasses import dataclass

#: region -> zones (the letters real regions use)
REGIONS: dict[str, tuple[str, ...]] = {
    "cn-hangzhou": ("cn-hangzhou-h", "cn-hangzhou-i", "cn-hangzhou-j", "cn-hangzhou-k"),
    "cn-shanghai": ("cn-shanghai-e", "cn-shanghai-f", "cn-shanghai-l"),
    "cn-beijing": ("cn-beijing-g", "cn-beijing-h", "cn-beijing-i", "cn-beijing-l"),
    "cn-zhangjiakou": ("cn-zhangjiakou-a", "cn-zhangjiakou-c"),
    "ap-southeast-1": ("ap-southeast-1a", "ap-southeast-1b", "ap-southeast-1c"),
}
REGION_NAMES = {"cn-hangzhou": "China (Hangzhou)", "cn-shanghai": "China (Shanghai)", "cn-beijing": "China (Beijing)",
                "cn-zhangjiakou": "China (Zhangjiakou)", "ap-southeast-1": "Singapore"}
INTL_REGIONS = ("ap-southeast-1",)  # priced in USD on the international site


@dataclass(frozen=True)
class GpuType:
    type_id: str
    family: str
    vcpus: int
    memory_gib: float
    gpu_spec: str
    gpu_count: int
    gpu_memory_gib: float  # per GPU
    bandwidth_kbps: int  # InstanceBandwidthRx
    price_cny: float  # pay-as-you-go per hour, synthetic


GPU_TYPES: tuple[GpuType, ...] = (
    GpuType("ecs.gn6i-c4g1.xlarge", "ecs.gn6i", 4, 15, "NVIDIA T4", 1, 16, 4_000_000, 10.0),
    # a whole T4 as a GRID vGPU (Alibaba's vgn6i-vws table); the bundled catalog's cheapest T4 in cn-hangzhou,
    # so a launch priced from the catalog picks it and the server must know it as the cloud does
    GpuType("ecs.vgn6i-m16-vws.5xlarge", "ecs.vgn6i-vws", 20, 92, "NVIDIA T4", 1, 16, 7_500_000, 11.0),
    GpuType("ecs.gn6i-c8g1.2xlarge", "ecs.gn6i", 8, 31, "NVIDIA T4", 1, 16, 5_000_000, 12.0),
    GpuType("ecs.gn6i-c24g1.12xlarge", "ecs.gn6i", 48, 186, "NVIDIA T4", 2, 16, 16_000_000, 32.0),
    GpuType("ecs.gn6v-c8g1.2xlarge", "ecs.gn6v", 8, 32, "NVIDIA V100", 1, 16, 2_500_000, 25.0),
    GpuType("ecs.gn6v-c8g1.8xlarge", "ecs.gn6v", 32, 128, "NVIDIA V100", 4, 16, 10_000_000, 100.0),
    GpuType("ecs.gn6e-c12g1.3xlarge", "ecs.gn6e", 12, 92, "NVIDIA V100", 1, 32, 5_000_000, 30.0),
    GpuType("ecs.gn7-c12g1.3xlarge", "ecs.gn7", 12, 94, "NVIDIA A100", 1, 40, 4_000_000, 35.0),
    GpuType("ecs.gn7e-c16g1.4xlarge", "ecs.gn7e", 16, 125, "NVIDIA A100", 1, 80, 8_000_000, 45.0),
    GpuType("ecs.gn7i-c8g1.2xlarge", "ecs.gn7i", 8, 30, "NVIDIA A10", 1, 24, 16_000_000, 15.0),
)
#: non-GPU types the cloud also lists (the plugin must leave them out of GPU offers)
CPU_TYPES = (("ecs.g7.xlarge", "ecs.g7", 4, 16.0, 1.0),)
BY_ID = {t.type_id: t for t in GPU_TYPES}
SPOT_FACTOR = 0.3  # spot ≈ 30 % of pay-as-you-go, synthetic
CNY_PER_USD = 7.2  # the international site quotes USD; any fixed rate shows the mechanism
ESSD_CNY_PER_GB_HOUR = 0.001  # system disk, synthetic
PUBLIC_IP_CNY_PER_HOUR = 0.02  # fixed-bandwidth public address, synthetic

IMAGES: tuple[dict[str, str], ...] = (
    {"ImageId": "ubuntu_22_04_x64_20G_alibase_20240101.vhd", "ImageName": "ubuntu_22_04_x64_20G_alibase_20240101.vhd",
     "ImageFamily": "acs:ubuntu_22_04_x64", "OSName": "Ubuntu  22.04 64位", "OSType": "linux", "Architecture": "x86_64",
     "Platform": "Ubuntu", "ImageOwnerAlias": "system", "Size": "20", "CreationTime": "2024-01-01T00:00:00Z"},
    {"ImageId": "ubuntu_22_04_x64_20G_alibase_20250101.vhd", "ImageName": "ubuntu_22_04_x64_20G_alibase_20250101.vhd",
     "ImageFamily": "acs:ubuntu_22_04_x64", "OSName": "Ubuntu  22.04 64位", "OSType": "linux", "Architecture": "x86_64",
     "Platform": "Ubuntu", "ImageOwnerAlias": "system", "Size": "40", "CreationTime": "2025-01-01T00:00:00Z"},
    {"ImageId": "aliyun_3_x64_20G_alibase_20250101.vhd", "ImageName": "aliyun_3_x64_20G_alibase_20250101.vhd",
     "ImageFamily": "acs:alibaba_cloud_linux_3", "OSName": "Alibaba Cloud Linux 3", "OSType": "linux",
     "Architecture": "x86_64", "Platform": "Aliyun", "ImageOwnerAlias": "system", "Size": "20",
     "CreationTime": "2025-01-01T00:00:00Z"},
)


def currency(region: str) -> str:
    return "USD" if region in INTL_REGIONS else "CNY"


def price(region: str, type_id: str) -> float:
    """Pay-as-you-go price per hour in the region's currency."""
    t = BY_ID[type_id]
    value = t.price_cny * (1.0 + 0.05 * list(REGIONS).index(region))  # regions differ a little
    return round(value / CNY_PER_USD if region in INTL_REGIONS else value, 4)


def spot_price(region: str, zone: str, type_id: str) -> float:
    zones = REGIONS[region]
    return round(price(region, type_id) * (SPOT_FACTOR + 0.02 * zones.index(zone)), 4)


def offered(region: str) -> list[GpuType]:
    """GPU types sold in ``region`` (gn7/gn7e only in the bigger regions, as on the real cloud)."""
    big = region in ("cn-hangzhou", "cn-shanghai", "cn-beijing", "cn-zhangjiakou")
    return [t for t in GPU_TYPES if big or t.family in ("ecs.gn6i", "ecs.gn7i", "ecs.gn6v")]
