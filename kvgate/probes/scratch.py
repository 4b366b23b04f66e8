"""The one check before kvgate writes on a volume (DESIGN rule 3: writes go only to scratch).

Every writer asks here first, before anything is created on the host: fio's targets
(:mod:`kvgate.probes.fio.safety`), the G2/G3/G4 work directories, the agent's workloads
and G1's O_DIRECT probe. A path may be written when it is absolute, has no ``..``
nor control characters, lies under a volume marked ``scratch``, still lies under
it after the host resolved every symlink (``realpath -m``), and the volume's own
directory exists and resolves to no system directory.

A :class:`ScratchDir` is the proof: only :func:`checked` makes one, and only a
ScratchDir can be created (:func:`create`) or removed (:func:`remove`). Removal is
possible only strictly below the volume's directory; the command resolves the path
again and compares it with what was checked, and ``rm --one-file-system`` never
crosses into another filesystem mounted below it.

>>> from kvgate.configuration.inventory import Volume
>>> vol = Volume(path="/mnt/scratch", kind="candidate", scratch=True)
>>> refusals(vol, "/mnt/scratch/kvgate", resolved="/mnt/scratch/kvgate", root="/mnt/scratch")
[]
>>> refusals(vol, "/mnt/scratch/link", resolved="/etc", root="/mnt/scratch")
['target /mnt/scratch/link resolves to /etc, outside /mnt/scratch (symlink)']
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from kvgate.base.errors import LabError
from kvgate.configuration.inventory import Volume
from kvgate.transport import CANCEL, CommandResult, Executor

# a volume resolving into one of these trees would have kvgate write into the system itself
SYSTEM_TREES = ("/proc", "/sys", "/dev", "/boot", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64")
MEMORY_FS = "/dev/shm"  # a tmpfs, not a device: a scratch directory may live there
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# the command re-resolves the path and runs the rest only when it is still what was checked
_SAME = '[ "$(realpath -m -- %s)" = %s ] || { echo "changed since it was checked" >&2; exit 3; }; '
CHANGED = 3


class UnsafeWrite(LabError):
    """kvgate refused to write a path on a host; str() lists every broken rule."""

    what = "refused to write"

    def __init__(self, target: str, reasons: list[str]) -> None:
        self.target, self.reasons = target, tuple(reasons)
        super().__init__(f"{self.what} {target}: " + "; ".join(reasons))


@dataclass(frozen=True)
class ScratchDir:
    """A directory on one host that :func:`checked` proved may be written."""

    host: str
    path: str  # as kvgate names it, under the volume's declared path
    resolved: str  # the host's canonical path of it
    root: str  # the host's canonical path of the volume's directory


def run_directory(volume: Volume, *, gate: str, host: str, run: str) -> str:
    """Where one gate run writes on a volume: ``<volume>/kvgate-<gate>/<host>-<run>``, so hosts sharing
    the volume and concurrent runs never collide (checked by :func:`checked` before use)."""
    return f"{volume.path.rstrip('/')}/kvgate-{gate}/{host}-{run}"


def refusals(volume: Volume, target: str, *, resolved: str, root: str) -> list[str]:
    """Why ``target`` (``resolved`` on the host, volume at ``root``) may not be written; empty: it may."""
    if lexical := lexical_refusal(target):
        return [lexical]
    reasons = []
    if not under(posixpath.normpath(target), posixpath.normpath(volume.path)):
        reasons.append(f"target {target} is outside the volume directory {volume.path}")
    elif not under(resolved, root):
        reasons.append(f"target {target} resolves to {resolved}, outside {root} (symlink)")
    if not volume.scratch:
        reasons.append(f"volume {volume.path} is not marked scratch (kvgate writes only on scratch volumes)")
    if system := system_dir(root):
        reasons.append(f"volume {volume.path} resolves to {root}, inside the system directory {system}")
    return reasons


def lexical_refusal(target: str) -> str | None:
    """Why ``target`` may not be written whatever the host says (not absolute, '..', control characters)."""
    if _CONTROL.search(target):
        return f"target {target!r} contains a control character"
    if not posixpath.isabs(target):
        return f"target {target} is not an absolute path"
    if ".." in target.split("/"):
        return f"target {target} contains '..': path traversal is refused"
    return None


def under(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it (both canonical)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def system_dir(root: str) -> str | None:
    """The system tree ``root`` lies in ("/" itself counts), or None."""
    if root == "/":
        return "/"
    if under(root, MEMORY_FS) and root != MEMORY_FS:
        return None
    return next((tree for tree in SYSTEM_TREES if under(root, tree)), None)


def resolve(ex: Executor, *paths: str) -> list[str]:
    """The host's canonical paths (symlinks resolved, a missing tail allowed), in order."""
    out = ex.run("realpath -m -z --" + " %s" * len(paths), *paths, check=True, timeout_s=30).stdout
    lines = out.split("\0")[:-1]
    if len(lines) != len(paths):
        raise LabError(f"{ex.host}: realpath gave {len(lines)} lines for {len(paths)} paths: {out!r}")
    return lines


def write_refusals(ex: Executor, volume: Volume, path: str) -> list[str]:
    """Why files may not be written at or under ``path`` on this host (the volume's own directory
    included: fio's targets, G1's probe file); empty when they may."""
    if lexical := lexical_refusal(path) or lexical_refusal(volume.path):
        return [lexical]
    resolved, root = resolve(ex, path, volume.path)
    return refusals(volume, path, resolved=resolved, root=root)


def checked(ex: Executor, volume: Volume, path: str) -> ScratchDir:
    """Prove that kvgate may create and remove ``path`` on this host; raise UnsafeWrite otherwise.

    Unlike a fio target, the path must lie strictly below the volume's directory, which
    must exist (a volume that is not mounted would have kvgate fill the root filesystem).
    """
    if lexical := lexical_refusal(path) or lexical_refusal(volume.path):
        raise UnsafeWrite(path, [lexical])
    resolved, root = resolve(ex, path, volume.path)
    reasons = refusals(volume, path, resolved=resolved, root=root)
    if not reasons and resolved == root:
        reasons.append(f"target {path} is the volume directory itself; kvgate writes only below it")
    if not reasons and not ex.run("test -d %s", root, timeout_s=30).ok:
        reasons.append(f"volume directory {volume.path} does not exist on {ex.host} (not mounted?)")
    if reasons:
        raise UnsafeWrite(path, reasons)
    return ScratchDir(ex.host, path, resolved, root)


def create(ex: Executor, d: ScratchDir, *, fresh: bool = False) -> None:
    """``mkdir -p`` the directory; ``fresh`` first removes whatever an earlier run left there."""
    wipe = "rm -rf --one-file-system -- %s && " if fresh else ""
    args = [d.resolved] if fresh else []
    _guarded(ex, d, wipe + "mkdir -p -- %s", *args, d.resolved).check()


def remove(ex: Executor, d: ScratchDir, *, parents: int = 0) -> None:
    """``rm -rf`` the directory (also after Ctrl-C), then up to ``parents`` emptied parents in the volume."""
    above = [p for p in _parents(d.resolved, parents) if p != d.root and under(p, d.root)]
    rmdir = "; rmdir --ignore-fail-on-non-empty --" + " %s" * len(above) if above else ""
    with CANCEL.cleanup():
        _guarded(ex, d, "rm -rf --one-file-system -- %s" + rmdir, d.resolved, *above)


def _parents(path: str, n: int) -> list[str]:
    out = []
    for _ in range(n):
        path = posixpath.dirname(path)
        out.append(path)
    return out


def _guarded(ex: Executor, d: ScratchDir, command: str, *args: str) -> CommandResult:
    """Run ``command`` only if the path still resolves to what was checked; raise UnsafeWrite if not."""
    res = ex.run(_SAME + command, d.path, d.resolved, *args, timeout_s=300)
    if res.exit_status == CHANGED:
        raise UnsafeWrite(d.path, [f"it no longer resolves to {d.resolved} (changed since it was checked)"])
    return res
