"""Whether each volume's counters see its reads: the counter sanity probe (kvgate.probes.evidence.probe).

Before any cold number on a volume is trusted, an O_DIRECT read of N MiB must move
the counters that stand for it (its devices, a multipath head's paths, or the NFS
client's server reads) by at least N MiB. G1 runs it on every volume, so a volume
whose counters do not move is one clear INVALID at arrival, naming the devices, not
hours of INVALID rows in G2–G4. A scratch volume the scratch check passes gets the
probe's own file (removed after); any other volume is only read (its largest file).
"""

from __future__ import annotations

import json

from kvgate.base.errors import Interrupted, LabError, TransportError
from kvgate.probes.evidence import DEFAULT_MIB
from kvgate.probes.facts.base import Collected, HostContext
from kvgate.probes.hostevidence import HostEvidence
from kvgate.probes.scratch import write_refusals
from kvgate.transport import Executor


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """The probe on every volume of the host: {volumes: {name: probe result}}."""
    col = Collected(facts={"volumes": {}})
    if not ctx.volumes:
        return col
    he = HostEvidence(ex, sudo=ctx.sudo)
    for name, vol in ctx.volumes.items():
        writable = vol.scratch and not write_refusals(ex, vol, vol.path)
        try:
            result = he.probe(vol.path, mib=DEFAULT_MIB, scratch=writable)
        except (TransportError, Interrupted):
            raise  # not a fact about the volume: the check stays unevaluated, and --resume retries it
        except LabError as exc:
            col.errors[name] = str(exc)
            continue
        col.facts["volumes"][name] = result
        col.artifacts[f"counters-{name}.json"] = json.dumps(result, indent=1)
    return col
