"""Every URDF of the public robot-description packages in the test extra that Pinocchio loads
(``example-robot-data``, ``icub-models``) loads here too: same joints, DoFs and masses, and every
body that differs from Pinocchio's lumped body is named by a ModelLoadWarning (a documented
regularisation). On a selection of robots, one per class of defect those files have, the mass
matrix, RNEA and ABA agree with Pinocchio at 1e-9 at random floating-base states (Pinocchio given
our regularised inertias where we regularised). ``JAXSIM_LIKE_ROBOT_DYNAMICS=all`` compares the
dynamics of every file (about 1.5 s each, so not in CI).
"""

from __future__ import annotations

import functools
import os
import warnings
import zlib
from pathlib import Path

import cmeel
import icub_models
import jax
import numpy as np
import pinocchio as pin
import pytest

import jaxsim_like as js
from jaxsim_like import dynamics as D
from jaxsim_like.parsers import parse_model

from .conftest import (
    PinocchioTwin,
    assert_close,
    core_dynamics,
    differing_bodies,
    inputs_of,
    named,
    our_body_inertia,
    random_samples,
    state_of,
)

# example-robot-data is a cmeel package: its files lie under site-packages/cmeel.prefix.
ERD = Path(cmeel.__file__).resolve().parents[1] / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
ICUB = Path(icub_models.get_models_path())
FILES = sorted(ERD.rglob("*.urdf")) + sorted(ICUB.rglob("*.urdf"))
# One robot per class of defect the packages' files have (and a clean arm): compared in CI.
SELECTED = (
    "talos_reduced.urdf",  # optical and sensor frames: point masses on fixed joints
    "go1.urdf",  # a 1e-6 kg dummy root with a rank-1 inertia, fixed to the trunk
    "allegro_right_hand.urdf",  # CAD inertias breaking the triangle inequality on moving joints
    "icub.urdf",  # a head whose inertia entries are +-1e-35
    "romeo_laas_small.urdf",  # negative principal moments; moving grippers of zero mass
    "alex_psyonic_hands.urdf",  # mimics naming joints the file does not have
    "baxter.urdf",  # valid mimics (independent joints) and a massless gripper frame
)
SAMPLES = 2


def label(path: Path) -> str:
    root = ERD if ERD in path.parents else ICUB
    return str(path.relative_to(root))


@functools.lru_cache(maxsize=None)
def pinocchio_model(path: Path) -> pin.Model | None:
    try:
        return pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    except (RuntimeError, ValueError):
        return None


def load(path: Path, *, meshes: bool) -> tuple[js.Model, list[js.ModelLoadWarning]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if meshes:
            model = js.load_model(path, floating_base=True)
        else:
            model = D.build_model(parse_model(path), floating_base=True)
    return model, [w.message for w in caught if issubclass(w.category, js.ModelLoadWarning)]


def test_the_packages_ship_their_files():
    assert len([f for f in FILES if ERD in f.parents]) >= 60 and len([f for f in FILES if ICUB in f.parents]) >= 10
    assert {name for name in SELECTED} <= {f.name for f in FILES}


@pytest.mark.parametrize("path", FILES, ids=label)
def test_every_file_pinocchio_loads_loads_here_alike(path: Path):
    pm = pinocchio_model(path)
    if pm is None:
        pytest.skip("Pinocchio does not load this file either")
    model, caught = load(path, meshes=False)
    assert model.dofs == pm.nv - 6
    assert set(model.joint_names) == set(pm.names[2:])
    twin = PinocchioTwin(model, pm)
    changed = differing_bodies(model, twin)
    for i in changed:
        assert named(model.link_names[i], caught), f"body '{model.link_names[i]}' differs from Pinocchio's without a warning"
    file_mass = sum(inertia.mass for inertia in pm.inertias)
    masses = np.asarray(model.link_mass)
    added = sum(float(masses[i]) - pm.inertias[twin.link_joints[i]].mass for i in changed)
    assert float(model.total_mass) == pytest.approx(file_mass + added, rel=1e-12)
    assert 0.0 <= added <= 1e-3 * file_mass


dynamics = jax.jit(core_dynamics)


def dynamics_files() -> list[Path]:
    if os.environ.get("JAXSIM_LIKE_ROBOT_DYNAMICS") == "all":
        return FILES
    return [f for f in FILES if f.name in SELECTED and ERD in f.parents]


@pytest.mark.parametrize("path", dynamics_files(), ids=label)
def test_dynamics_agree_with_pinocchio(path: Path):
    pm = pinocchio_model(path)
    if pm is None:
        pytest.skip("Pinocchio does not load this file")
    model, _ = load(path, meshes=True)
    twin = PinocchioTwin(model, pin.Model(pm))
    for i in differing_bodies(model, twin):  # the regularised bodies: give Pinocchio ours
        twin.model.inertias[twin.link_joints[i]] = twin.link_placements[i].act(our_body_inertia(model, i))
    twin.data = twin.model.createData()
    for k, sample in enumerate(random_samples(model, seed=zlib.crc32(label(path).encode()), count=SAMPLES)):
        ours = jax.tree.map(np.asarray, dynamics(model, state_of(model, sample, "mixed"), inputs_of(sample, "mixed", twin.link_poses(sample))))
        reference = twin.reference(sample, "mixed")
        for quantity in ("mass_matrix", "rnea", "aba"):
            assert_close(ours[quantity], reference[quantity], f"{quantity} [robot packages]", where=f"{label(path)} sample {k}")
