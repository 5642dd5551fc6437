"""Fixtures of the imaging-stage tests: one small synthetic night, written once per session, and
the framework-free chain run on it once; tests compare what the stages made with the truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from awlineage.storage import forget_data_server, use_data_server
from targets.direct import DirectRun, run_direct
from targets.sky import SkyParameters, WrittenNight, write_night


@pytest.fixture(scope="session")
def night(tmp_path_factory: pytest.TempPathFactory) -> WrittenNight:
    """The default small night (2 chips of 256x256, filters g and r, 3 dithers) on disk."""
    return write_night(SkyParameters(), tmp_path_factory.mktemp("night"))


@pytest.fixture(scope="session")
def direct_run(night: WrittenNight) -> DirectRun:
    """The whole chain, run directly on the night."""
    return run_direct(night.paths)


@pytest.fixture(scope="session")
def raw_by_name(night: WrittenNight) -> dict[str, Path]:
    """Raw file paths by file name."""
    return {path.name: path for path in night.paths}


@pytest.fixture
def data_server(tmp_path: Path):
    """A data server in a folder of the test's own (the embedded default), forgotten after."""
    yield use_data_server(str(tmp_path / "data"))
    forget_data_server()


@pytest.fixture
def data_dir(tmp_path: Path):
    """The data server as a local directory the test can list (the embedded default)."""
    directory = tmp_path / "data"
    use_data_server(str(directory))
    yield directory
    forget_data_server()
