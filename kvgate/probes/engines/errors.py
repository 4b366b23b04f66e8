"""Engine lifecycle failures; each is a LabError, so the check becomes ERROR, never PASS.

LabError
├── EngineCrashed      the engine process died (bad flag, OOM, …): carries the log tail
├── EngineNotReady     the ready endpoint never answered 200 within the ready timeout
├── EngineLeftover     processes of the engine's process group survived SIGKILL
└── EngineCallFailed   an HTTP call on the engine host failed (reset, metrics, request)
"""

from __future__ import annotations

from kvgate.base.errors import LabError


class EngineError(LabError):
    """Base of the engine lifecycle errors: names the host and the profile."""

    def __init__(self, host: str, profile: str, message: str, log_tail: str = "") -> None:
        self.host, self.profile, self.log_tail = host, profile, log_tail
        text = f"{host}: engine {profile!r} {message}"
        if log_tail:
            text += f"\n--- last lines of the engine log:\n{log_tail}"
        super().__init__(text)


class EngineCrashed(EngineError):
    """The engine process is gone (or a zombie) before it became ready or while serving."""


class EngineNotReady(EngineError):
    """The ready endpoint did not answer 200 within the profile's ready timeout."""


class EngineLeftover(EngineError):
    """Processes of the engine's process group were still alive after SIGKILL."""


class EngineCallFailed(EngineError):
    """An HTTP call on the engine host failed or returned a non-2xx status."""


__all__ = ["EngineCallFailed", "EngineCrashed", "EngineError", "EngineLeftover", "EngineNotReady"]
