"""PyBullet's robots and objects (``pybullet_data``, the package's own files, its 1000 generated
``random_urdfs`` left out) load as PyBullet reads them: every file Pinocchio reads loads here,
with the same joints, DoFs and masses, and the massless objects (planes, trays, tables) as static
models (or welded to the world by the file). On one robot per leniency those files need, the mass matrix, RNEA and ABA agree with
Pinocchio at 1e-9 at random states (the base free or welded as the file says). ``JAXSIM_LIKE_ROBOT_DYNAMICS=all`` compares the
dynamics of every file (not in CI).
"""

from __future__ import annotations

import functools
import os
import warnings
import zlib
from pathlib import Path

import jax
import numpy as np
import pinocchio as pin
import pytest

import jaxsim_like as js
from jaxsim_like import dynamics as D
from jaxsim_like.parsers import parse_model

from .conftest import PinocchioTwin, assert_close, core_dynamics, differing_bodies, inputs_of, named, our_body_inertia, random_samples, state_of

pybullet_data = pytest.importorskip("pybullet_data", reason="PyBullet's files come with the pybullet package (test extra)")
ROOT = Path(pybullet_data.getDataPath())
FILES = sorted(path for path in ROOT.rglob("*.urdf") if "random_urdfs" not in path.parts)
# One robot per leniency: compared with Pinocchio in CI.
SELECTED = (
    "quadruped/minitaur.urdf",  # XML declaration version 0.0
    "quadruped/spirit40newer.urdf",  # several <axis> in a joint
    "racecar/racecar_differential.urdf",  # 4-number mesh scales, a <material> beside a mesh in <geometry>
)
SAMPLES = 2


def label(path: Path) -> str:
    return str(path.relative_to(ROOT))


@functools.lru_cache(maxsize=None)
def pinocchio_model(path: Path) -> pin.Model | None:
    try:
        return pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    except (RuntimeError, ValueError):
        return None


def load(path: Path) -> tuple[js.ModelDescription, list[js.ModelLoadWarning]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        description = parse_model(path)
    return description, [w.message for w in caught if issubclass(w.category, js.ModelLoadWarning)]


def test_pybullet_data_ships_its_files():
    assert len(FILES) >= 90 and {name for name in SELECTED} <= {label(path) for path in FILES}


@pytest.mark.parametrize("path", FILES, ids=label)
def test_every_file_pinocchio_reads_loads_here_alike(path: Path):
    pm = pinocchio_model(path)
    if pm is None:
        pytest.skip("Pinocchio does not read this file either")
    description, caught = load(path)
    file_mass = sum(inertia.mass for inertia in pm.inertias)
    if file_mass == 0.0:  # an object of zero mass: welded in the file, or static as PyBullet loads it
        assert pm.nv == 6 and description.fixed_to_world
        assert description.static == named(description.name, caught)
        return
    with warnings.catch_warnings(record=True) as building:
        warnings.simplefilter("always")
        model = D.build_model(description, floating_base=True)
    caught += [w.message for w in building if issubclass(w.category, js.ModelLoadWarning)]
    assert model.dofs == pm.nv - 6
    assert set(model.joint_names) == set(pm.names[2:])
    twin = PinocchioTwin(model, pm)
    changed = differing_bodies(model, twin)
    for i in changed:
        assert named(model.link_names[i], caught), f"body '{model.link_names[i]}' differs from Pinocchio's without a warning"
    masses = np.asarray(model.link_mass)
    added = sum(float(masses[i]) - pm.inertias[twin.link_joints[i]].mass for i in changed)
    assert float(model.total_mass) == pytest.approx(file_mass + added, rel=1e-12)


dynamics = jax.jit(core_dynamics)


def dynamics_files() -> list[Path]:
    if os.environ.get("JAXSIM_LIKE_ROBOT_DYNAMICS") == "all":
        return FILES
    return [ROOT / name for name in SELECTED]


@pytest.mark.parametrize("path", dynamics_files(), ids=label)
def test_dynamics_agree_with_pinocchio(path: Path):
    pm = pinocchio_model(path)
    if pm is None:
        pytest.skip("Pinocchio does not read this file")
    description, _ = load(path)
    if description.static:
        pytest.skip("a static model has no dynamics")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", js.ModelLoadWarning)
        model = D.build_model(description)  # welded where the file welds it: a forced free base may be massless
    twin = PinocchioTwin(model, pin.Model(pm) if model.floating_base else pin.buildModelFromUrdf(str(path)))
    for i in differing_bodies(model, twin):  # the regularised bodies: give Pinocchio ours
        twin.model.inertias[twin.link_joints[i]] = twin.link_placements[i].act(our_body_inertia(model, i))
    twin.data = twin.model.createData()
    for k, sample in enumerate(random_samples(model, seed=zlib.crc32(label(path).encode()), count=SAMPLES)):
        ours = jax.tree.map(np.asarray, dynamics(model, state_of(model, sample, "mixed"), inputs_of(sample, "mixed", twin.link_poses(sample))))
        reference = twin.reference(sample, "mixed")
        if not model.floating_base:  # core_dynamics puts the welded base's (zero) terms first
            ours = {key: value if key == "mass_matrix" else value[6:] for key, value in ours.items()}
        # A free base of zero mass whose joints repeat its motion (cartpole.urdf's slide bar) has a singular M.
        regular = reference["mass_matrix"].size == 0 or np.linalg.cond(reference["mass_matrix"]) < 1e10
        for quantity in ("mass_matrix", "rnea", "aba") if regular else ("mass_matrix", "rnea"):
            assert_close(ours[quantity], reference[quantity], f"{quantity} [pybullet_data]", where=f"{label(path)} sample {k}")
