"""State of one gate run inside pytest: inventory, store, waivers, what was recorded."""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kvgate.base.criteria import Judgement
from kvgate.base.errors import KvgateError
from kvgate.configuration.gateconfig import GateConfig, load_config
from kvgate.configuration.inventory import LoadedInventory
from kvgate.configuration.waivers import Waivers, load_waivers
from kvgate.record import JudgementRecord, RunStore, check_seal, require_previous, utc_now, write_manifest

T = TypeVar("T")


def usage_error_on_failure(load: Callable[[], T]) -> T:
    """``load()``; its KvgateError stops pytest with the message alone (exit 4), never a traceback."""
    try:
        return load()
    except KvgateError as exc:
        raise pytest.UsageError(str(exc)) from None


class GateSession:
    """Everything a gate run shares; created in pytest_configure, used lazily."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.gate: str | None = None
        self.store: RunStore | None = None
        self.recorded: set[str] = set()
        self.hosts_pending: set[str] = set()
        self.listener: Callable[[str, str], None] | None = None
        self._config: GateConfig | None = None
        self._waivers: Waivers | None = None

    def option(self, name: str) -> Any:
        return self.config.getoption(name)

    def gate_config(self) -> GateConfig:
        """The inventory and the files it selects, validated once; a bad file stops the run, clearly."""
        if self._config is None:
            self._config = usage_error_on_failure(lambda: load_config(self.option("inventory")))
        return self._config

    def loaded(self) -> LoadedInventory:
        return self.gate_config().inventory

    def waivers(self) -> Waivers:
        if self._waivers is None:
            self._waivers = usage_error_on_failure(lambda: load_waivers(self.option("waivers")))
        return self._waivers

    def open_store(self, planned: list[str]) -> RunStore:
        """Create the run directory (checking gate order), or reopen it for --resume."""
        assert self.gate is not None
        loaded, waivers = self.loaded(), self.waivers()
        resume = self.option("resume")
        self.store = usage_error_on_failure(
            lambda: self._resume() if resume else self._create(loaded, planned)
        )
        self.store.update_meta(waivers=[w.model_dump(mode="json") for w in waivers.waivers])
        return self.store

    def _create(self, loaded: LoadedInventory, planned: list[str]) -> RunStore:
        assert self.gate is not None
        forced, previous = [], None
        reason = self.option("force_gate_order")
        if reason:
            forced.append({"gate": self.gate, "reason": reason, "by": getpass.getuser(), "at": utc_now()})
        else:
            previous = require_previous(
                Path(self.option("run_dir")), site=loaded.site, gate=self.gate, inventory_sha256=loaded.sha256
            )
        inv = loaded.inventory
        hosts = {
            n: {"address": h.address, "transport": h.transport, "roles": list(h.roles)}
            for n, h in inv.hosts.items()
        }
        meta = {
            "inventory": {"path": str(loaded.path), "sha256": loaded.sha256},
            "hosts": hosts,
            "volumes": {
                n: {"kind": v.kind, "description": v.description, "max_cv": v.expect.max_cv}
                for n, v in inv.volumes.items()
            },
            "argv": sys.argv,
            "planned": planned,
            "forced": forced,
            "configuration": self.gate_config().recorded(),
        }
        if previous is not None:  # provenance, and the environment G1 recorded for this inventory
            prev = previous.meta()
            meta |= {
                "previous_run": str(previous.path),
                "manifest": prev.get("manifest", {}),
                "tool_versions": prev.get("tool_versions", {}),
            }
        return RunStore.create(Path(self.option("run_dir")), site=loaded.site, gate=self.gate, meta=meta)

    def _resume(self) -> RunStore:
        check_seal(Path(self.option("resume")), "--resume")  # never re-seal a run edited since its end
        store = RunStore.open(Path(self.option("resume")))
        record = store.run_record()
        if record.gate != self.gate:
            raise KvgateError(f"--resume {store.path}: that run is gate {record.gate}, not {self.gate}")
        if store.inventory().sha256 != self.loaded().sha256:
            raise KvgateError(f"--resume {store.path}: the inventory changed since that run; start a new run")
        store.update_meta(status="running", ended_at=None, resumes=[*record.resumes, utc_now()])
        return store

    def notify(self, host: str, event: str) -> None:
        """Progress event for a live view (the CLI's rich display), if one listens."""
        if self.listener is not None:
            self.listener(host, event)

    def record(self, host: str, check: str, j: Judgement) -> Judgement:
        """Apply waivers and append the verdict to the store; returns the final judgement."""
        final, waiver = self.waivers().apply(host, check, j)
        if self.store is not None:
            self.store.record(JudgementRecord.from_judgement(host, check, final, waiver=waiver))
        self.recorded.add(f"{host}/{check}")
        return final

    def close(self, *, interrupted: bool) -> None:
        if self.store is None:
            return
        missing = set(self.store.run_record().planned) - self.store.finished_ids()
        status = "interrupted" if interrupted else ("incomplete" if missing else "complete")
        self.store.finish(status)
        write_manifest(self.store.path)  # what the run recorded, hashed: an edit after this shows
