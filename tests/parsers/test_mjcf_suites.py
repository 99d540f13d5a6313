"""Every MJCF of dm_control's suite and of gymnasium's MuJoCo environments either loads or names
every element the model cannot represent in one error (parsing only: the dynamics of some of
them are compared with MuJoCo in tests/dynamics/test_mjcf.py)."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest

from jaxsim_like.parsers import ModelLoadError, ModelLoadWarning, parse_mjcf, parse_mjcf_world

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")


def _folder(package: str, *parts: str) -> Path | None:
    spec = importlib.util.find_spec(package)  # the files only: the package is not imported
    return Path(spec.submodule_search_locations[0], *parts) if spec else None


FOLDERS = {"dm_control": _folder("dm_control", "suite"), "gymnasium": _folder("gymnasium", "envs", "mujoco", "assets")}
FILES = [(package, path) for package, folder in FOLDERS.items() if folder for path in sorted(folder.glob("*.xml"))]
# The files that load today: all of them (ball_in_cup, the last, has a spatial tendon through sites).
LOADING = {
    "dm_control": {"acrobot", "ball_in_cup", "cartpole", "cheetah", "dog", "finger", "fish", "hopper", "humanoid", "humanoid_CMU", "lqr", "manipulator",
                   "pendulum", "point_mass", "quadruped", "reacher", "stacker", "swimmer", "walker"},
    "gymnasium": {"ant", "half_cheetah", "hopper", "humanoid", "humanoidstandup", "inverted_double_pendulum", "inverted_pendulum", "point",
                  "pusher", "pusher_v5", "reacher", "swimmer", "walker2d", "walker2d_v5"},
}
_WRAP_JOINT = 1  # mjtWrap: a fixed tendon's


def tendons(m) -> tuple[list[str], list[str]]:
    """The names of the fixed and of the spatial tendons of MuJoCo's model ``m``."""
    fixed, spatial = [], []
    for t in range(m.ntendon):
        wraps = m.wrap_type[m.tendon_adr[t] : m.tendon_adr[t] + m.tendon_num[t]]
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_TENDON, t) or f"tendon{t}"
        (fixed if np.all(wraps == _WRAP_JOINT) else spatial).append(name)
    return fixed, spatial


@pytest.mark.parametrize(("package", "path"), FILES, ids=[f"{package}/{path.name}" for package, path in FILES])
def test_each_file_loads_or_lists_everything_unsupported(package: str, path: Path):
    m = mujoco.MjModel.from_xml_path(str(path))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ModelLoadWarning)
            description = parse_mjcf(path)
    except ModelLoadError as error:
        assert path.stem not in LOADING[package], str(error)
        assert "wraps around" in error.reason, error.reason  # a new file of the suites: only wraps are left
        return
    assert path.stem in LOADING[package]
    fixed, spatial = tendons(m)
    joints = {joint.name for joint in description.joints}
    frames = {frame.name for frame in description.frames}
    assert {tendon.name for tendon in description.tendons} <= set(fixed) | set(spatial)
    assert all(set(tendon.coefficients) <= joints for tendon in description.tendons)
    assert all({s.frame_a, s.frame_b} <= frames for tendon in description.tendons for s in tendon.segments)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelLoadWarning)
        models = parse_mjcf_world(path).models  # every tree: every body, tendon and tendon equality
    assert sum(1 for model in models for link in model.links if "::" not in link.name and link.name != "world") == m.nbody - 1
    assert sorted(tendon.name for model in models for tendon in model.tendons) == sorted(fixed + spatial)
    tendon_equalities = sum(1 for e in range(m.neq) if m.eq_type[e] == mujoco.mjtEq.mjEQ_TENDON)
    assert sum(len(model.tendon_equalities) for model in models) == tendon_equalities


@pytest.mark.parametrize("package", sorted(FOLDERS))
def test_the_suites_are_installed(package: str):
    if FOLDERS[package] is None:
        pytest.skip(f"{package} is not installed (test extra)")
    assert {path.stem for kind, path in FILES if kind == package} >= LOADING[package]


def test_the_suites_arenas_are_the_terrain():
    """dm_control's arenas: the quadruped's and the manipulator's walls (planes) are static boxes
    of the terrain, the quadruped's height field is told as left out; the walker's world is its
    floor alone."""
    if FOLDERS["dm_control"] is None:
        pytest.skip("dm_control is not installed (test extra)")

    def world(name: str):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            description = parse_mjcf_world(FOLDERS["dm_control"] / f"{name}.xml")
        told = [w.message.reason for w in caught if issubclass(w.category, ModelLoadWarning) and "of the world body" in w.message.reason]
        return description.terrain, told

    terrain, told = world("quadruped")
    assert terrain.box_names == ("wall_px", "wall_py", "wall_nx", "wall_ny")
    assert len(told) == 1 and told[0].startswith("1 geom(s) of the world body that bodies touch are not represented: 'terrain' (hfield)")
    terrain, told = world("manipulator")
    assert terrain.box_names == ("wall1", "wall2", "background") and told == []
    terrain, told = world("walker")
    assert terrain.box_names == () and terrain.ground_point is not None and told == []
