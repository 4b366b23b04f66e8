"""Gate profiles (``workloads/<gate>/<scale>.yaml``): the configuration of G3 and G4, out of their slices.

    g3.py       G3Profile: trial sizes, cold-proof and write-through bounds, which reference judges
                which arm comparison (VerdictBinding, StorageBinding), capacity, cold-read and
                baseline-vs-candidate volume loads (VolumeComparison: R2/R3 as the seed measured them)
    g4.py       G4Profile: the soak's duration, load, canary and limits
    loader.py   the one loader: ``workloads/<gate>/<scale>.yaml`` into a profile, read once per process,
                its ``name`` checked against the file's

>>> from kvgate.configuration.gate_profiles.g4 import G4Profile
>>> from kvgate.configuration.gate_profiles.loader import load_gate_profile
>>> load_gate_profile("g4", "full", G4Profile).duration_s // 3600
72
"""

from __future__ import annotations

from kvgate.configuration.gate_profiles.g3 import (
    ARMS,
    CAPACITY_ARMS,
    READ_ARMS,
    VOLUME_ARMS,
    WHOLE_VOLUME_ARMS,
    Capacity,
    ClientBounds,
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
from kvgate.configuration.gate_profiles.loader import profile_path

__all__ = [
    "ARMS",
    "CAPACITY_ARMS",
    "READ_ARMS",
    "VOLUME_ARMS",
    "WHOLE_VOLUME_ARMS",
    "Capacity",
    "ClientBounds",
    "ColdBounds",
    "G3Profile",
    "G4Profile",
    "StorageBinding",
    "StorageProfile",
    "Unmeasurable",
    "VerdictBinding",
    "WriteThrough",
    "load_g3_profile",
    "load_g4_profile",
    "profile_path",
]
