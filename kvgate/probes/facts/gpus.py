"""GPU/accelerator facts: `nvidia-smi -q -x`, `amd-smi` (or `rocm-smi ... --json`), `npu-smi info`.

Each vendor tool that exists on the host is run; the absent ones are listed in
`missing_tools` and only matter when the BOM names that vendor. AMD GPUs are read
with amd-smi (kvgate.probes.facts.amd) and with rocm-smi only where amd-smi is absent.

>>> parse_npu_smi("| npu-smi 23.0.2.1   Version: 23.0.2.1 |\\n")["driver_version"]
'23.0.2.1'
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from kvgate.base.units import MiB
from kvgate.probes.facts.amd import parse_amd_static, parse_amd_topology
from kvgate.probes.facts.base import (
    Collected,
    HostContext,
    ParseError,
    has_tool,
    int_or_none,
    load_json,
    number,
    run_parsed,
    whole,
)
from kvgate.transport import Executor

ROCM_FLAGS = "--showproductname --showbus --showmeminfo vram --showtemp --showdriverversion --json"


def _pci(address: str | None) -> str | None:
    """'00000000:01:00.0' (nvidia-smi) or '0000:83:00.0' -> '0000:01:00.0', lower case."""
    if not address or not (
        m := re.fullmatch(r"(?:[0-9A-Fa-f]*?([0-9A-Fa-f]{4}):)?(\w{2}:\w{2}\.\w)", address)
    ):
        return None
    return f"{m[1] or '0000'}:{m[2]}".lower()


def _num(text: str | None) -> float | None:
    m = re.match(r"\s*(-?[0-9]{1,30}(?:\.[0-9]+)?)", text or "")
    return float(m[1]) if m else None


def _nvidia_gpu(index: int, gpu: ET.Element) -> dict[str, Any]:
    link = "pci/pci_gpu_link_info/"
    mib = _num(gpu.findtext("fb_memory_usage/total"))
    return {
        "vendor": "nvidia",
        "index": index,
        "model": gpu.findtext("product_name"),
        "uuid": gpu.findtext("uuid"),
        "pci_address": _pci(gpu.findtext("pci/pci_bus_id") or gpu.get("id")),
        "memory_total_bytes": int(mib * MiB) if mib is not None else None,
        "temperature_c": _num(gpu.findtext("temperature/gpu_temp")),
        "pcie_gen_current": _num(gpu.findtext(link + "pcie_gen/current_link_gen")),
        "pcie_gen_max": _num(gpu.findtext(link + "pcie_gen/max_link_gen")),
        "pcie_width_current": _num(gpu.findtext(link + "link_widths/current_link_width")),
        "pcie_width_max": _num(gpu.findtext(link + "link_widths/max_link_width")),
    }


def parse_nvidia_smi(text: str) -> dict[str, Any]:
    """Driver/CUDA versions and every GPU from `nvidia-smi -q -x`."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ParseError("nvidia-smi", f"nvidia-smi -q -x XML ({exc})", text) from exc
    if root.tag != "nvidia_smi_log":
        raise ParseError("nvidia-smi", "an <nvidia_smi_log> document", text)
    devices = [_nvidia_gpu(i, gpu) for i, gpu in enumerate(root.findall("gpu"))]
    return {
        "driver_version": root.findtext("driver_version"),
        "cuda_version": root.findtext("cuda_version"),
        "devices": devices,
    }


def _first(card: dict[str, Any], *keys: str) -> Any:
    return next((card[k] for k in keys if card.get(k) not in (None, "", "N/A")), None)


PCI_ID = re.compile(r"0x[0-9A-Fa-f]{1,4}")
MODEL_KEYS = ("Card series", "Card Series", "Device Name", "Card model", "Card Model", "Card SKU")


def _amd_model(card: dict[str, Any]) -> tuple[str | None, str | None]:
    """The first field that names the card; rocm-smi often prints a PCI id (0x1002, 0x0c34) instead."""
    for key in MODEL_KEYS[:4]:
        value = card.get(key)
        if (
            isinstance(value, str)
            and value.strip() not in ("", "N/A")
            and not PCI_ID.fullmatch(value.strip())
        ):
            return value.strip(), None
    ids = ", ".join(f"{k} {card[k]}" for k in MODEL_KEYS if isinstance(card.get(k), str) and card[k].strip())
    return None, f"rocm-smi printed no product name, only PCI ids or a SKU ({ids or 'nothing'})"


def _amd_gpu(name: str, card: Any) -> dict[str, Any]:
    if not isinstance(card, dict):
        raise ParseError("rocm-smi", f"an object for {name}", str(card))
    vram = _first(card, "VRAM Total Memory (B)")
    temp = _first(card, "Temperature (Sensor edge) (C)", "Temperature (Sensor junction) (C)")
    model, why = _amd_model(card)
    gpu = {
        "vendor": "amd",
        "index": int(name.removeprefix("card")),
        "model": model,
        "pci_address": _pci(pci if isinstance(pci := _first(card, "PCI Bus"), str) else None),
        "memory_total_bytes": whole(vram, "rocm-smi", "VRAM Total Memory (B)") if vram else None,
        "temperature_c": number(temp, "rocm-smi", "temperature") if temp else None,
    }
    return gpu | ({"invalid": {"model": why}} if why else {})


def parse_rocm_smi(text: str) -> dict[str, Any]:
    """Driver version and every card from `rocm-smi ... --json`."""
    doc = load_json(text, "rocm-smi", 'rocm-smi --json output {"card0": {...}, "system": {...}}')
    if not isinstance(doc, dict):
        raise ParseError("rocm-smi", 'a JSON object {"card0": {...}}', text)
    cards = sorted((k for k in doc if re.fullmatch(r"card\d{1,4}", k)), key=lambda k: int(k[4:]))
    system = doc.get("system")
    driver = system.get("Driver version") if isinstance(system, dict) else None
    return {"driver_version": _str(driver), "devices": [_amd_gpu(k, doc[k]) for k in cards]}


def _str(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _npu(first: list[str], second: list[str]) -> dict[str, Any]:
    npu, name = first[0].split(None, 1)
    chip = int_or_none((second[0].split() or ["0"])[0])  # 910/310P cards carry two chips
    if chip is None:
        raise ParseError("npu-smi", f"a chip number in the row under NPU {npu}", " | ".join(second))
    temp = first[2].split()
    usage = re.findall(r"(\d{1,9})\s*/\s*(\d{1,9})", second[2])  # memory, then HBM when present
    total_mb = int(usage[-1][1]) if usage else None
    return {
        "vendor": "ascend",
        "index": int(npu),
        "chip": chip,
        "model": name.strip(),
        "health": first[1],
        "pci_address": _pci(second[1]),
        "temperature_c": _num(temp[1]) if len(temp) > 1 else None,
        "memory_total_bytes": total_mb * MiB if total_mb else None,
    }


def parse_npu_smi(text: str) -> dict[str, Any]:
    """Driver version and every NPU chip from the `npu-smi info` table."""
    version = re.search(r"npu-smi\s+\S+\s+Version:\s*(\S+)", text)
    if version is None:
        raise ParseError("npu-smi", "an 'npu-smi <v> Version: <v>' header", text)
    rows = [
        _cells(line) for line in text.split("Process id", maxsplit=1)[0].splitlines() if line.startswith("|")
    ]
    rows = [r for r in rows if len(r) == 3]
    # a device is two rows: "<npu> <name> | <health> | ..." then "<chip> [<dev>] | <bus-id> | ..."
    starts = [i for i, r in enumerate(rows[:-1]) if re.fullmatch(r"\d{1,6}\s+\S*[A-Za-z]\S*", r[0])]
    return {"driver_version": version[1], "devices": [_npu(rows[i], rows[i + 1]) for i in starts]}


VENDORS = {  # vendor -> (tool, command, parser); AMD: amd-smi first, rocm-smi where it is absent
    "nvidia": ("nvidia-smi", "nvidia-smi -q -x", parse_nvidia_smi),
    "amd": ("amd-smi", "amd-smi static --json", parse_amd_static),
    "ascend": ("npu-smi", "npu-smi info", parse_npu_smi),
}
FALLBACK = {"amd": ("rocm-smi", f"rocm-smi {ROCM_FLAGS}", parse_rocm_smi)}
TOOLS = {
    vendor: (tool, *((FALLBACK[vendor][0],) if vendor in FALLBACK else ()))
    for vendor, (tool, *_) in VENDORS.items()
}


def _run(ex: Executor, col: Collected, vendor: str) -> dict[str, Any] | None:
    """The first of the vendor's tools that is installed; every absent one is listed as missing."""
    for tool, command, parse in (VENDORS[vendor], *((FALLBACK[vendor],) if vendor in FALLBACK else ())):
        if has_tool(ex, tool):
            parsed: dict[str, Any] | None = run_parsed(ex, col, tool, parse, command, timeout_s=120)
            if parsed is not None:
                parsed["source"] = tool
            return parsed
        col.missing_tools.append(tool)
    return None


def _xgmi(ex: Executor, col: Collected) -> None:
    """GPU-to-GPU links from amd-smi topology (only amd-smi reports them)."""
    topology = run_parsed(
        ex, col, "amd-smi topology", parse_amd_topology, "amd-smi topology --json", timeout_s=120
    )
    col.facts["amd_links"] = (topology or {}).get("links")


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Run every vendor tool present; facts are keyed by vendor plus one merged device list."""
    del ctx  # nothing host-specific to pass
    col = Collected(facts={"devices": [], "driver_version": {}, "source": {}})
    for vendor in VENDORS:
        parsed = _run(ex, col, vendor)
        if parsed is not None:
            col.facts["devices"].extend(parsed["devices"])
            col.facts["driver_version"][vendor] = parsed["driver_version"]
            col.facts["source"][vendor] = parsed["source"]
    if col.facts["source"].get("amd") == "amd-smi" and any(
        d["vendor"] == "amd" for d in col.facts["devices"]
    ):
        _xgmi(ex, col)
    return col
