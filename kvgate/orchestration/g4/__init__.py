from __future__ import annotations

from kvgate.orchestration.g4.plan import plan
from kvgate.orchestration.g4.stop import stop_soak
from kvgate.orchestration.g4.trends import Soak, Window, hit_ratio, slopes, trend_windows

__all__ = ["Soak", "Window", "hit_ratio", "plan", "slopes", "stop_soak", "trend_windows"]
