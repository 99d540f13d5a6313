"""MuJoCo's inertia-box fluid model (issue 31): the generalised forces of the fluid's link
wrenches equal MuJoCo's ``qfrc_fluid`` at random states (1e-9 relative to their size) on
gymnasium's swimmer (density and viscosity) and dm_control's fish (a free body; a wind added);
a reduced model keeps its bodies in the fluid; MuJoCo's ellipsoid model equals its forces too."""

from __future__ import annotations

import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics import kinematics, representations, spatial
from jaxsim_like.dynamics.fluid import fluid_wrenches

from .conftest import random_mixed_state
from .test_mjcf import MuJoCo, path_of

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")
WIND = np.array([0.3, -0.2, 0.1])
ELLIPSOIDS = Path(__file__).resolve().parents[1] / "assets" / "fluid_ellipsoids.xml"


@jax.jit
def generalised_forces(model: js.Model, state: js.State) -> jax.Array:
    """``J^T f (nv,)`` of the fluid's wrenches, the base part in the state's representation."""
    kin = kinematics.kinematics(model, state)
    G_F = kinematics.subtree_sum(model, fluid_wrenches(model.fluid, model.number_of_links, kin.G_H_L, kin.G_v))
    torques = kinematics.to_joint_order(model, spatial.dot(kin.G_S, G_F))
    if not model.floating_base:
        return torques
    base = representations.force_from_inertial(G_F[0], kin.G_H_L[0], state.velocity_representation, kin.origin)
    return jnp.concatenate([base, torques])


@pytest.mark.parametrize(("name", "bodies"), [("gymnasium/swimmer.xml", 3), ("dm_control/fish.xml", 5)])
def test_fluid_forces_equal_mujocos(name: str, bodies: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", js.ModelLoadWarning)
        model = js.load_model(path_of(name))
    assert model.fluid.count == bodies
    reference = MuJoCo(model, path_of(name))
    if model.floating_base:
        reference.m.opt.wind[:] = WIND
        model = model.replace(fluid=model.fluid.replace(wind=jnp.asarray(WIND)))
    rng = np.random.default_rng(1)
    for _ in range(3):
        state, sample = random_mixed_state(model, rng)
        P = reference.set(*sample)
        expected = P.T @ reference.d.qfrc_fluid
        ours = np.asarray(generalised_forces(model, state))
        np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-9 * np.abs(expected).max())
        assert np.abs(expected).max() > 1.0


def test_a_reduced_model_keeps_its_bodies_in_the_fluid():
    """gymnasium's swimmer with ``motor2_rot`` locked (``back`` lumped into ``mid``): the same
    forces on the other joints while the locked joint stands still."""
    model = js.load_model(path_of("gymnasium/swimmer.xml"))
    kept = ["slider1", "slider2", "free_body_rot", "motor1_rot"]
    reduced = js.dynamics.reduce(model, kept, {"motor2_rot": 0.4})
    assert reduced.fluid.count == 3 and reduced.fluid.links[-1] == reduced.fluid.links[-2]
    q, qd = np.array([0.1, -0.2, 0.3, 0.5, 0.4]), np.array([0.4, 0.3, -1.0, 2.0, 0.0])
    full = generalised_forces(model, js.State.build(model, joint_positions=q, joint_velocities=qd))
    lumped = generalised_forces(reduced, js.State.build(reduced, joint_positions=q[:4], joint_velocities=qd[:4]))
    np.testing.assert_allclose(lumped, full[:4], rtol=1e-12, atol=1e-12)


def test_the_ellipsoid_model_equals_mujocos():
    """tests/assets/fluid_ellipsoids.xml: geoms of every primitive kind in the ellipsoid model
    (a body's geom without ``fluidshape`` feels nothing), a body in the inertia-box model, a wind:
    equal to ``qfrc_fluid`` at random states (1e-12 relative to its size)."""
    model = js.load_model(ELLIPSOIDS)
    assert model.fluid.geom_names == ("shell", "keel", "oar", "blade") and model.fluid.names == ("rudder",)
    reference = MuJoCo(model, ELLIPSOIDS)
    rng = np.random.default_rng(2)
    for _ in range(3):
        state, sample = random_mixed_state(model, rng)
        P = reference.set(*sample)
        expected = P.T @ reference.d.qfrc_fluid
        np.testing.assert_allclose(np.asarray(generalised_forces(model, state)), expected, rtol=0, atol=1e-12 * np.abs(expected).max())
        assert np.abs(expected).max() > 1.0


def test_a_reduced_model_keeps_its_ellipsoids():
    """The blade's ``twist`` locked (the blade lumped into the oar): the same forces on the other
    joints while the locked joint stands still."""
    model = js.load_model(ELLIPSOIDS)
    reduced = js.dynamics.reduce(model, ["swing", "steer"], {"twist": 0.4})
    assert reduced.fluid.geom_count == 4 and reduced.fluid.geom_links[2] == reduced.fluid.geom_links[3]
    base = {"base_position": [0.1, 0.2, 0.3], "base_quaternion": [0.9, 0.1, -0.3, 0.2], "base_velocity": [0.5, -0.4, 0.3, 1.0, -2.0, 0.5]}
    full = generalised_forces(model, js.State.build(model, joint_positions=[0.3, 0.4, -0.2], joint_velocities=[2.0, 0.0, -1.0], **base))
    lumped = generalised_forces(reduced, js.State.build(reduced, joint_positions=[0.3, -0.2], joint_velocities=[2.0, -1.0], **base))
    np.testing.assert_allclose(lumped, np.asarray(full)[[0, 1, 2, 3, 4, 5, 6, 8]], rtol=1e-12, atol=1e-12)
