"""Gate profiles (``workloads/<gate>/<scale>.yaml``): the configuration of G3 and G4, out of their slices.

    g3.py       G3Profile: trial sizes, cold-proof and write-through bounds, which reference judges
                which arm comparison (VerdictBinding, StorageBinding), capacity and cold-read trials
    g4.py       G4Profile: the soak's duration, load, canary and limits
    loader.py   the one loader: ``workloads/<gate>/<scale>.yaml`` into a profile, read once per process,
                its ``name`` checked against the file's

>>> from kvgate.configuration.gate_profiles.g4 import G4Profile
>>> load_gate_profile("g4", "full", G4Profile).duration_s // 3600
72
"""

from __future__ import annotations

from kvgate.configuration.gate_profiles.g3 import (
    ARMS,
    CAPACITY_ARMS,
    READ_ARMS,
    Capacity,
    ColdBounds,
    G3Profile,
    StorageBinding,
    StorageProfile,
    Unmeasurable,
    VerdictBinding,
    WriteThrough,
    load_g3_profile,
)
from kvgate.configuration.gate_profiles.g4 import G4Profile, load_g4_profile
from kvgate.configuration.gate_profiles.loader import (
    Profile,
    load_gate_profile,
    profile_path,
    read_gate_profile,
)

__all__ = [
    "ARMS",
    "CAPACITY_ARMS",
    "READ_ARMS",
    "Capacity",
    "ColdBounds",
    "G3Profile",
    "G4Profile",
    "Profile",
    "StorageBinding",
    "StorageProfile",
    "Unmeasurable",
    "VerdictBinding",
    "WriteThrough",
    "load_g3_profile",
    "load_g4_profile",
    "load_gate_profile",
    "profile_path",
    "read_gate_profile",
]
