"""AMD Instinct facts from `amd-smi` (ROCm 6.0+; ROCm SMI is deprecated and no longer shipped).

`amd-smi static --json` printed a bare list of GPUs up to ROCm 6.3 and `{"gpu_data": [...]}`
from ROCm 6.4; key names moved too (`driver.version` / `driver.driver_version`, `vbios` /
`ifwi`, `vram.size` / `vram_size_mb`), and on some distributions Python warnings precede
the JSON; later releases renamed the partition object's `compute_partition` to
`accelerator_partition` (amd-smi's CLI in ROCm/rocm-systems). amd-smi's "MB" is MiB (196592 MB
on a 192 GiB MI300X). With the in-kernel amdgpu driver amd-smi names the kernel release as the
driver version, and some releases print the whole /proc/version banner with its spaces dropped
("Linuxversion6.14.0-24-generic(buildd@…"): the release is kept. `amd-smi topology --json`
lists, per GPU, its link type to every other GPU (XGMI or PCIE) in one of two layouts.

>>> parse_amd_static('[{"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X"}, '
...                  '"partition": {"compute_partition": "SPX", "memory_partition": "NPS1"}}]'
...                  )["devices"][0]["compute_partition"]
'SPX'
"""

from __future__ import annotations

import re
from typing import Any

from kvgate.base.units import GiB, MiB
from kvgate.probes.facts.base import ParseError, load_json, number

TOOL = "amd-smi"
UNITS = {"B": 1, "KB": 1 << 10, "MB": MiB, "GB": GiB}
PCI_ID = re.compile(r"0x[0-9A-Fa-f]{1,4}")
KERNEL_BANNER = re.compile(r"Linuxversion([^(\s]{1,64})\(")


def _json(text: str, what: str) -> Any:
    """The JSON document, after any warning lines amd-smi's Python printed before it."""
    start = re.search(r"^[\[{]", text, re.MULTILINE)
    return load_json(text[start.start() :] if start else text, TOOL, what)


def _gpus(doc: Any, what: str) -> list[dict[str, Any]]:
    gpus = doc.get("gpu_data") if isinstance(doc, dict) else doc
    if not isinstance(gpus, list) or not all(isinstance(g, dict) for g in gpus):
        raise ParseError(
            TOOL, f'{what}: a list of GPU objects, or {{"gpu_data": [...]}} (ROCm 6.4+)', str(doc)
        )
    return gpus


def _get(d: Any, *path: str) -> Any:
    for key in path:
        d = d.get(key) if isinstance(d, dict) else None
    return None if d in ("N/A", "", None) else d


def _first(gpu: dict[str, Any], *paths: tuple[str, ...]) -> Any:
    return next((v for p in paths if (v := _get(gpu, *p)) is not None), None)


def _bytes(gpu: dict[str, Any]) -> int | None:
    size = _first(gpu, ("vram", "size"), ("vram", "vram_size"))
    if isinstance(size, dict):
        unit = str(size.get("unit", "MB")).upper()
        return int(number(size.get("value"), TOOL, "vram size") * UNITS.get(unit, MiB))
    if size is not None:  # "196592 MB" or a bare number of MB
        return int(number(size, TOOL, "vram size") * MiB)
    mb = _first(gpu, ("vram", "vram_size_mb"))
    return int(number(mb, TOOL, "vram_size_mb") * MiB) if mb is not None else None


def _model(gpu: dict[str, Any]) -> tuple[str | None, str | None]:
    name = _first(gpu, ("asic", "market_name"), ("board", "product_name"))
    if isinstance(name, str) and name.strip() and not PCI_ID.fullmatch(name.strip()):
        return name.strip(), None
    return None, f"amd-smi printed no market name ({name or 'N/A'})"


def _str(value: Any) -> str | None:
    return str(value).strip() or None if value is not None else None


def _driver(value: Any) -> str | None:
    """The driver version, or the kernel release where amd-smi printed the kernel's banner."""
    text = _str(value)
    banner = KERNEL_BANNER.match(text or "")
    return banner[1] if banner else text


def _device(gpu: dict[str, Any]) -> dict[str, Any]:
    model, why = _model(gpu)
    index = gpu.get("gpu")
    device = {
        "vendor": "amd",
        "index": int(number(index, TOOL, "gpu index")) if index is not None else None,
        "model": model,
        "pci_address": _str(_first(gpu, ("bus", "bdf"), ("bdf",))),
        "memory_total_bytes": _bytes(gpu),
        "firmware": _str(_first(gpu, ("vbios", "version"), ("vbios", "vbios_version"), ("ifwi", "version"))),
        "compute_partition": _str(
            _first(gpu, ("partition", "compute_partition"), ("partition", "accelerator_partition"))
        ),
        "memory_partition": _str(_first(gpu, ("partition", "memory_partition"))),
        "partition_id": _first(gpu, ("partition", "partition_id")),
        "numa_node": _first(gpu, ("numa", "node")),
    }
    return device | ({"invalid": {"model": why}} if why else {})


def parse_amd_static(text: str) -> dict[str, Any]:
    """Every GPU (model, PCI address, VRAM, VBIOS/IFWI, partition modes) and the driver version."""
    gpus = _gpus(_json(text, "amd-smi static --json output"), "amd-smi static --json")
    drivers = [
        _first(g, ("driver", "version"), ("driver", "driver_version"), ("driver_version",)) for g in gpus
    ]
    return {
        "driver_version": _driver(next((d for d in drivers if d), None)),
        "devices": [_device(g) for g in gpus],
    }


def _pairs_old(gpu: dict[str, Any]) -> list[dict[str, Any]]:
    """ROCm <= 6.1: {"gpu": 0, "link_type": {"gpu_1": "XGMI"}, "link_accessibility": {"gpu_1": "ENABLED"}}."""
    types, access = gpu.get("link_type") or {}, gpu.get("link_accessibility") or {}
    if not isinstance(types, dict):
        raise ParseError(TOOL, "topology link_type as an object {gpu_N: type}", str(types))
    return [
        {
            "peer": int(k.removeprefix("gpu_")),
            "type": v,
            "status": access.get(k) if isinstance(access, dict) else None,
        }
        for k, v in types.items()
        if re.fullmatch(r"gpu_\d{1,4}", k)
    ]


def _pairs_new(gpu: dict[str, Any]) -> list[dict[str, Any]]:
    """ROCm 6.2+: {"gpu": 0, "links": [{"gpu": 1, "link_type": "XGMI", "link_status": "ENABLED"}]}."""
    links = gpu.get("links")
    if not isinstance(links, list) or not all(isinstance(x, dict) for x in links):
        raise ParseError(TOOL, "topology links[] as objects", str(links))
    return [
        {
            "peer": int(number(x.get("gpu"), TOOL, "link peer")),
            "type": x.get("link_type"),
            "status": x.get("link_status"),
        }
        for x in links
    ]


def parse_amd_topology(text: str) -> dict[str, Any]:
    """GPU-to-GPU links (type XGMI/PCIE, status) from `amd-smi topology --json`, self links left out."""
    doc = _json(text, "amd-smi topology --json output")
    if isinstance(doc, dict) and "gpu_data" not in doc and len(doc) == 1:
        doc = next(iter(doc.values()))  # a single named list
    links = []
    for gpu in _gpus(doc, "amd-smi topology --json"):
        me = int(number(gpu.get("gpu"), TOOL, "gpu index"))
        pairs = _pairs_new(gpu) if "links" in gpu else _pairs_old(gpu)
        links += [{"gpu": me} | p for p in pairs if p["peer"] != me]
    return {"links": links}
