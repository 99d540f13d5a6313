"""Every MJCF of dm_control's suite and of gymnasium's MuJoCo environments either loads or names
every element the model cannot represent in one error (parsing only: the dynamics of some of
them are compared with MuJoCo in tests/dynamics/test_mjcf.py)."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import pytest

from jaxsim_like.parsers import ModelLoadError, ModelLoadWarning, parse_mjcf

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")


def _folder(package: str, *parts: str) -> Path | None:
    spec = importlib.util.find_spec(package)  # the files only: the package is not imported
    return Path(spec.submodule_search_locations[0], *parts) if spec else None


FOLDERS = {"dm_control": _folder("dm_control", "suite"), "gymnasium": _folder("gymnasium", "envs", "mujoco", "assets")}
FILES = [(package, path) for package, folder in FOLDERS.items() if folder for path in sorted(folder.glob("*.xml"))]
# The files that load today; the others have tendons (and three tendon equalities: the mechanisms issue).
LOADING = {
    "dm_control": {"acrobot", "cartpole", "cheetah", "finger", "hopper", "humanoid", "humanoid_CMU", "lqr", "pendulum", "reacher", "swimmer", "walker"},
    "gymnasium": {"ant", "half_cheetah", "hopper", "inverted_double_pendulum", "inverted_pendulum", "point", "pusher", "pusher_v5",
                  "reacher", "swimmer", "walker2d", "walker2d_v5"},
}


@pytest.mark.parametrize(("package", "path"), FILES, ids=[f"{package}/{path.name}" for package, path in FILES])
def test_each_file_loads_or_lists_everything_unsupported(package: str, path: Path):
    m = mujoco.MjModel.from_xml_path(str(path))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ModelLoadWarning)
            description = parse_mjcf(path)
    except ModelLoadError as error:
        assert path.stem not in LOADING[package], str(error)
        assert (m.ntendon > 0) == ("tendons are not supported" in error.reason)
        assert (m.neq > 0) == ("tendon equality" in error.reason and "is not supported yet" in error.reason)
        return
    assert path.stem in LOADING[package]
    assert sum(1 for link in description.links if "::" not in link.name and link.name != "world") == m.nbody - 1


@pytest.mark.parametrize("package", sorted(FOLDERS))
def test_the_suites_are_installed(package: str):
    if FOLDERS[package] is None:
        pytest.skip(f"{package} is not installed (test extra)")
    assert {path.stem for kind, path in FILES if kind == package} >= LOADING[package]
