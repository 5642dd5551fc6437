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
``--quick`` (a smoke run in CI, a second or two, no network) installs nothing: it measures the
bare install's packages as this interpreter already has them (awlineage and what its
requirements pull in, found from the installed packages' metadata), with no install time.
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
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROJECT_PACKAGES = ("awlineage", "dataserver", "targets", "webviewer")
"""The project's top-level packages (setup.cfg's ``packages.find``)."""
NOT_COUNTED = {"pip", "setuptools"}
"""What every virtual environment has, installed or not."""


@dataclass(frozen=True)
class Installed:
    """One measured install."""

    name: str
    seconds: float | None
    """Wall-clock seconds of ``pip install`` (None: nothing was installed, ``--quick``)."""
    megabytes: float
    packages: int
    cache_growth: float | None
    """MB pip's cache grew by (None: not measured: ``--quick``, or pip has no cache)."""


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
    growth = (_megabytes(cache) - cached_before) if cache else None
    return Installed(name, seconds, _megabytes(site) - before, _packages(python), growth)


def _requirement_closure(name: str) -> list[metadata.Distribution]:
    """The installed distribution `name` and those its requirements (no extras) pull in."""
    found: dict[str, metadata.Distribution] = {}
    pending = [name]
    while pending:
        wanted = pending.pop()
        key = wanted.lower().replace("_", "-")
        if key in found:
            continue
        try:
            dist = metadata.distribution(wanted)
        except metadata.PackageNotFoundError:
            sys.exit(f"install_size: {wanted} is not installed here (--quick measures the "
                     "installed packages)")
        found[key] = dist
        for line in dist.requires or []:
            requirement, _, marker = line.partition(";")
            if "extra" in marker or (marker.strip() and not _marker_holds(marker)):
                continue
            bare = requirement.split("[")[0]
            for stop in "<>=!~ (":
                bare = bare.split(stop)[0]
            pending.append(bare.strip())
    return list(found.values())


def _marker_holds(marker: str) -> bool:
    """Whether an environment marker (``sys_platform == "win32"``...) holds here."""
    from packaging.markers import Marker

    return Marker(marker.strip()).evaluate()


def measure_installed(name: str) -> Installed:
    """The bare install as this interpreter has it: no install, no network (``--quick``)."""
    dists = _requirement_closure("awlineage")
    total = 0
    for dist in dists:
        for file in dist.files or []:
            path = Path(str(dist.locate_file(file)))
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
    # an editable install's files are the checkout's, not site-packages'
    project = sum(_megabytes(REPO / package) for package in PROJECT_PACKAGES)
    return Installed(f"{name}*", None, total / 1e6 + project, len(dists), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="measure the bare install as already installed here (no pip)")
    parser.add_argument("--keep", type=Path, help="make the environments here and keep them")
    args = parser.parse_args()
    wanted = [("bare", str(REPO)), ("all", f"{REPO}[all]")]
    if args.quick:
        results = [measure_installed("bare")]
    else:
        with tempfile.TemporaryDirectory(prefix="awl-install-") as scratch:
            where = args.keep or Path(scratch)
            where.mkdir(parents=True, exist_ok=True)
            results = [measure(name, requirement, where) for name, requirement in wanted]
    print(f"{'install':8s} {'pip install':>12s} {'site-packages':>14s} {'packages':>9s} "
          f"{'pip cache grew':>15s}")
    for r in results:
        seconds = "-" if r.seconds is None else f"{r.seconds:.1f} s"
        growth = "-" if r.cache_growth is None else f"{r.cache_growth:.1f} MB"
        print(f"{r.name:8s} {seconds:>12s} {r.megabytes:11.1f} MB {r.packages:9d} "
              f"{growth:>15s}")
    if args.quick:
        print("(* --quick: installed here, not installed fresh, so no install time and no "
              "cache growth; the size counts this checkout's package folders)")
    elif any(r.cache_growth is None for r in results):
        print("(pip has no cache here: its growth is not measured)")
    print(f"(Python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
