"""`python3 -m lab.engine_site`: llama.cpp's OpenAI server for the lab's client guest, from PyPI.

The engine profiles run llama-cpp-python (requirements.lock's version). The controller's build
is native (AVX-512 here), and a TCG guest has AVX2 at most, so the guest gets its own build
without AVX-512, and the server's dependencies as PyPI wheels for its Python (3.11, as this
machine's), installed into one directory (``pip install --target``): the "site" a container
mounts read-only beside the guest's /usr and finds on PYTHONPATH. Built once per version and
flags (about 6 minutes on 2 busy cores), cached outside the work tree beside the lab image.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from lab import labctl
from lab.guests import Guest
from lab.image import cache_root

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements.lock"
# what `python -m llama_cpp.server` imports; the versions are the lock's
PACKAGES = ("llama-cpp-python", "numpy", "diskcache", "jinja2", "typing-extensions", "fastapi", "uvicorn",
            "sse-starlette", "starlette-context", "pydantic", "pydantic-settings", "pyyaml")  # fmt: skip
# no -march=native: the guest's TCG CPU (-cpu max) has AVX2, FMA and F16C, not AVX-512
CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
GUEST_DIR = "/opt/kvgate-engine"  # where the site lands in the guest


def pins() -> list[str]:
    """The lock's pins of PACKAGES (pip's names compared normalised)."""
    wanted = {p.replace("-", "_").lower() for p in PACKAGES}
    lines = [ln.split("#")[0].strip() for ln in LOCK.read_text().splitlines()]
    return [ln for ln in lines if "==" in ln and ln.split("==")[0].replace("-", "_").lower() in wanted]


def site_hash() -> str:
    h = hashlib.sha256(("\n".join(pins()) + CMAKE_ARGS + sys.version.split()[0][:4]).encode())
    return h.hexdigest()[:16]


def site_dir() -> Path:
    return cache_root() / f"engine-site-{site_hash()}"


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """One build at a time: `make test` starts one in the background, a lab test waits for it."""
    cache_root().mkdir(parents=True, exist_ok=True)
    with open(cache_root() / "engine-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def build() -> tuple[Path, float]:
    """The site for this lock and these flags, built if missing; returns it and the build's seconds."""
    with _locked():
        site = site_dir()
        if (site / "built").is_file():
            return site, 0.0
        start = time.monotonic()
        shutil.rmtree(site, ignore_errors=True)
        site.mkdir(parents=True)
        pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
        wheels = site / "wheels"
        llama = [p for p in pins() if p.lower().startswith("llama")]
        with open(site / "build.log", "w") as log:
            # --no-cache-dir: pip's wheel cache would hand back the controller's native build
            native_off = [
                *pip,
                "wheel",
                "--no-cache-dir",
                "--no-deps",
                "--no-binary",
                ":all:",
                "-w",
                str(wheels),
            ]
            _run([*native_off, *llama], log)
            _run([*pip, "download", "--only-binary", ":all:", "-c", str(LOCK), "-d", str(wheels),
                  *(p for p in pins() if p not in llama)], log)  # fmt: skip
            built = sorted(str(w) for w in wheels.glob("*.whl"))
            _run([*pip, "install", "--no-index", "--no-deps", "--target", str(site / "site"), *built], log)
        shutil.rmtree(site / "wheels")
        (site / "built").write_text(f"{site_hash()}\n")
        return site, time.monotonic() - start


def install(guest: Guest, files: dict[str, Path]) -> None:
    """The site at GUEST_DIR in ``guest`` (once per site), and each of ``files`` at its guest path (once:
    a path names its content)."""
    site, _ = build()
    stamp = f"{GUEST_DIR}/.site-{site_hash()}"
    unpack = f"rm -rf {GUEST_DIR} && mkdir -p {GUEST_DIR} && tar -x -C {GUEST_DIR} && touch {stamp}"
    if labctl.ssh(guest, f"test -e {stamp}").returncode != 0:
        with subprocess.Popen(["tar", "-C", str(site / "site"), "-c", "."], stdout=subprocess.PIPE) as tar:
            _send(guest, unpack, tar.stdout)
    for there, here in files.items():  # named by content (the tiny model's digest): sent once
        if labctl.ssh(guest, f"test -e {there}").returncode != 0:
            with open(here, "rb") as src:
                _send(
                    guest,
                    f"mkdir -p $(dirname {there}) && cat > {there}.part && mv {there}.part {there}",
                    src,
                )


def _send(guest: Guest, command: str, data: IO[bytes] | None) -> None:
    done = subprocess.run(
        labctl.ssh_argv(guest, command), stdin=data, capture_output=True, timeout=900, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{guest.name}: {command}: {done.stderr.decode(errors='replace').strip()}")


def _run(argv: list[str], log: IO[str]) -> None:
    log.write(f"$ {' '.join(argv)}\n")
    log.flush()
    env = os.environ | {"CMAKE_ARGS": CMAKE_ARGS, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 1)}
    if subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, env=env, check=False).returncode != 0:
        raise RuntimeError(f"pip {argv[4]} failed; see {log.name}")


def main(argv: list[str]) -> int:
    if argv != ["build"]:
        print("usage: python3 -m lab.engine_site build", file=sys.stderr)
        return 2
    site, took = build()
    print(f"{site}: " + (f"built in {took:.0f} s" if took else "reused"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
