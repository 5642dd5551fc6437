"""What ``pip install awlineage`` weighs: for the bare install and for ``awlineage[all]``, a fresh
virtual environment each, the wall-clock time of the whole ``pip install`` command, the size of
the installed packages (MB of site-packages) and their number (``pip list`` less pip and
setuptools).

Usage: python benchmarks/install_size.py [--quick] [--keep DIR]

The project is installed from this checkout (not editable, as a wheel built from it); its
dependencies come from PyPI, or from pip's cache when it holds them: a warm cache saves the
downloads (pyspark alone is some 300 MB, and its wheel is built once), so the script prints how
much pip's cache grew during each install (0 MB: everything came from the cache; pip's log says
"Downloading" for cache hits too, so it cannot tell).
``--quick`` measures the bare install only, for a smoke run in CI.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import venv
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NOT_COUNTED = {"pip", "setuptools"}
"""What every virtual environment has, installed or not."""


@dataclass(frozen=True)
class Installed:
    """One measured install."""

    name: str
    seconds: float
    megabytes: float
    packages: int
    cache_growth: float


def _site_packages(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                          "['purelib'])"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def _megabytes(folder: Path) -> float:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            path = Path(root, name)
            if not path.is_symlink():
                total += path.stat().st_size
    return total / 1e6


def _packages(python: Path) -> int:
    out = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze",
                          "--disable-pip-version-check"], capture_output=True, text=True,
                         check=True)
    names = {line.split("==")[0].lower() for line in out.stdout.splitlines() if line.strip()}
    return len(names - NOT_COUNTED)


def _pip_cache(python: Path) -> Path | None:
    out = subprocess.run([str(python), "-m", "pip", "cache", "dir"], capture_output=True,
                         text=True)
    return Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None


def measure(name: str, requirement: str, where: Path) -> Installed:
    """Install `requirement` into a fresh environment under `where` and measure it."""
    env_dir = where / name
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = _site_packages(python)
    before = _megabytes(site)  # pip and setuptools, counted out of the size too
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cache = _pip_cache(python)
    cached_before = _megabytes(cache) if cache else 0.0
    start = time.perf_counter()
    done = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check",
                           requirement], capture_output=True, text=True, env=environment)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"install_size: pip install {requirement} failed:\n{done.stderr[-2000:]}")
    growth = (_megabytes(cache) - cached_before) if cache else float("nan")
    return Installed(name, seconds, _megabytes(site) - before, _packages(python), growth)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the bare install only")
    parser.add_argument("--keep", type=Path, help="make the environments here and keep them")
    args = parser.parse_args()
    wanted = [("bare", str(REPO))]
    if not args.quick:
        wanted.append(("all", f"{REPO}[all]"))
    with tempfile.TemporaryDirectory(prefix="awl-install-") as scratch:
        where = args.keep or Path(scratch)
        where.mkdir(parents=True, exist_ok=True)
        results = [measure(name, requirement, where) for name, requirement in wanted]
    print(f"{'install':8s} {'pip install':>12s} {'site-packages':>14s} {'packages':>9s} "
          f"{'pip cache grew':>15s}")
    for r in results:
        print(f"{r.name:8s} {r.seconds:10.1f} s {r.megabytes:11.1f} MB {r.packages:9d} "
              f"{r.cache_growth:12.1f} MB")
    print(f"(Python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
