"""What the test "cloud" offers: VM sizes per region (resource SKU shape), quotas, images, prices.

Sizes and their capabilities follow the public size tables (vCPUs, memory GB, GPUs,
RDMA) and the quota family names Azure reports in compute usages.  Which zones hold
which size is made up but of the real shape.  Retail price items are read from the
hand-written Retail Prices pages in ``tests/plugins/azure/synthetic/`` (see the README there).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SYNTHETIC = Path(__file__).resolve().parents[2] / "plugins" / "azure" / "synthetic"


@dataclass(frozen=True)
class Size:
    name: str  # "Standard_ND96asr_v4"
    family: str  # quota family, e.g. "standardNDASv4_A100Family"
    vcpus: int
    memory_gb: float
    gpus: int
    rdma: bool = False
    encryption_at_host: bool = True
    premium_io: bool = True

    @property
    def short(self) -> str:
        return self.name.removeprefix("Standard_")


SIZES = {s.name: s for s in (
    Size("Standard_NC4as_T4_v3", "standardNCASv3_T4Family", 4, 28, 1),
    Size("Standard_NC8as_T4_v3", "standardNCASv3_T4Family", 8, 56, 1),
    Size("Standard_NC64as_T4_v3", "standardNCASv3_T4Family", 64, 440, 4),
    Size("Standard_NC24ads_A100_v4", "standardNCADSA100v4Family", 24, 220, 1),
    Size("Standard_NC96ads_A100_v4", "standardNCADSA100v4Family", 96, 880, 4),
    Size("Standard_ND96asr_v4", "standardNDASv4_A100Family", 96, 900, 8, rdma=True),
    Size("Standard_ND96amsr_A100_v4", "standardNDAMSv4_A100Family", 96, 1900, 8, rdma=True),
    Size("Standard_ND96isr_H100_v5", "standardNDSH100v5Family", 96, 1900, 8, rdma=True),
    Size("Standard_NC6s_v3", "standardNCSv3Family", 6, 112, 1, encryption_at_host=False),
    Size("Standard_NC24rs_v3", "standardNCSv3Family", 24, 448, 4, rdma=True, encryption_at_host=False),
    # a CPU size: listed by resource SKUs like every size, never offered as a GPU machine
    Size("Standard_D4s_v5", "standardDSv5Family", 4, 16, 0),
)}

#: region -> {size: zones}
REGIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "eastus": {
        "Standard_NC4as_T4_v3": ("1", "2", "3"), "Standard_NC8as_T4_v3": ("1", "2", "3"),
        "Standard_NC64as_T4_v3": ("1", "2"), "Standard_NC24ads_A100_v4": ("2", "3"),
        "Standard_NC96ads_A100_v4": ("2", "3"), "Standard_ND96asr_v4": ("2", "3"),
        "Standard_ND96amsr_A100_v4": ("1", "2"), "Standard_ND96isr_H100_v5": ("1", "2", "3"),
        "Standard_NC6s_v3": ("1", "2", "3"), "Standard_NC24rs_v3": ("1",), "Standard_D4s_v5": ("1", "2", "3"),
    },
    "westus2": {
        "Standard_NC4as_T4_v3": ("1", "2", "3"), "Standard_NC24ads_A100_v4": ("1", "2"),
        "Standard_ND96asr_v4": ("1", "2"), "Standard_ND96isr_H100_v5": ("1", "2", "3"),
        "Standard_NC6s_v3": ("1", "2"), "Standard_D4s_v5": ("1", "2", "3"),
    },
    "westeurope": {
        "Standard_NC4as_T4_v3": ("1", "2", "3"), "Standard_NC24ads_A100_v4": ("1", "2", "3"),
        "Standard_ND96asr_v4": ("1", "2", "3"), "Standard_ND96amsr_A100_v4": ("1",),
        "Standard_NC6s_v3": ("1", "2", "3"), "Standard_D4s_v5": ("1", "2", "3"),
    },
}

REGION_NAMES = {"eastus": "East US", "westus2": "West US 2", "westeurope": "West Europe"}

#: default vCPU limits per quota family (the same in every region); 0 = "request a quota increase"
QUOTAS = {
    "cores": 400, "lowPriorityCores": 400, "virtualMachines": 25000,
    "standardNCASv3_T4Family": 128, "standardNCADSA100v4Family": 192, "standardNDASv4_A100Family": 192,
    "standardNDAMSv4_A100Family": 0, "standardNDSH100v5Family": 96, "standardNCSv3Family": 48,
    "standardDSv5Family": 100,
}
QUOTA_NAMES = {"cores": "Total Regional vCPUs", "lowPriorityCores": "Total Regional Low-priority vCPUs",
               "virtualMachines": "Virtual Machines"}


def sku_json(size: Size, region: str, zones: tuple[str, ...], restrictions: list[dict[str, Any]]) -> dict[str, Any]:
    """One entry of ``GET /subscriptions/{s}/providers/Microsoft.Compute/skus`` (api 2021-07-01)."""
    caps = [
        ("MaxResourceVolumeMB", str(size.vcpus * 16384)), ("OSVhdSizeMB", "1047552"),
        ("vCPUs", str(size.vcpus)), ("MemoryPreservingMaintenanceSupported", "True"),
        ("HyperVGenerations", "V2" if size.rdma or "00" in size.name else "V1,V2"),
        ("MemoryGB", f"{size.memory_gb:g}"), ("MaxDataDiskCount", "32"), ("CpuArchitectureType", "x64"),
        ("LowPriorityCapable", "True"), ("PremiumIO", str(size.premium_io)),
        ("VMDeploymentTypes", "IaaS"), ("vCPUsAvailable", str(size.vcpus)),
        ("GPUs", str(size.gpus)) if size.gpus else None,
        ("vCPUsPerCore", "1"), ("EphemeralOSDiskSupported", "True"),
        ("EncryptionAtHostSupported", str(size.encryption_at_host)),
        ("AcceleratedNetworkingEnabled", "True"),
        ("RdmaEnabled", "True") if size.rdma else None,
        ("MaxNetworkInterfaces", "8"),
    ]
    return {
        "resourceType": "virtualMachines", "name": size.name, "tier": "Standard", "size": size.short,
        "family": size.family, "locations": [region],
        "locationInfo": [{"location": region, "zones": list(zones), "zoneDetails": []}],
        "capabilities": [{"name": n, "value": v} for n, v in (c for c in caps if c)],
        "restrictions": restrictions,
    }


def retail_items() -> list[dict[str, Any]]:
    """Every item of the synthetic Retail Prices pages (each file is one page in the real API's shape)."""
    items: list[dict[str, Any]] = []
    for path in sorted(SYNTHETIC.glob("retail-*.json")):
        items.extend(json.loads(path.read_text(encoding="utf-8"))["Items"])
    return items
