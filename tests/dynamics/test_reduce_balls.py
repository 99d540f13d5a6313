"""``reduce`` with ball joints, on a fixed chain hinge, ball, hinge, ball (anchors off the body
origins): a ball locked at a quaternion (folded into its child's fixed transform) or kept among
the joints; the reduced model's mass matrix and bias forces are the full model's rows and
columns of the kept degrees of freedom, and its forward dynamics solves them, at 1e-12, with the
locked joints at their positions and at rest; a kept ball keeps its cone limit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import dynamics as D
from jaxsim_like.dynamics import configuration

CHAIN = """<mujoco model="ball_chain"><worldbody>
  <body name="a" pos="0 0 1">
    <joint name="h1" type="hinge" axis="0 1 0.2"/>
    <geom type="capsule" fromto="0 0 0 0.3 0.1 -0.4" size="0.05" mass="1.3"/>
    <body name="b" pos="0.3 0.1 -0.4" quat="0.9 0.1 0.3 0.2">
      <joint name="b1" type="ball" pos="0.01 0.02 0.03" range="0 60"/>
      <geom type="box" size="0.1 0.05 0.2" pos="0 0.1 -0.2" mass="0.7"/>
      <body name="c" pos="0 0 -0.4">
        <joint name="h2" type="hinge" axis="1 0 0.3" pos="0 0.02 0"/>
        <geom type="ellipsoid" size="0.1 0.2 0.15" pos="0.1 0 -0.1" mass="0.5"/>
        <body name="d" pos="0.1 0 -0.3">
          <joint name="b2" type="ball" pos="0.02 -0.01 0.05" armature="0.01"/>
          <geom type="sphere" size="0.06" pos="0.05 0.05 -0.1" mass="0.4"/>
        </body>
      </body>
    </body>
  </body></worldbody></mujoco>"""


@jax.jit
def dynamics(model: js.Model, state: js.State, tau: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Mass matrix, bias forces and the forward dynamics' joint accelerations under ``tau``."""
    return D.mass_matrix(model, state), D.bias_forces(model, state), D.forward_dynamics(model, state, joint_torques=tau)[1]


def named(model: js.Model, q: np.ndarray) -> dict:
    """The joint positions ``q (nq,)`` by name: a float per scalar joint, a quaternion per ball."""
    layout = configuration.position_layout(model)
    values = {model.joint_names[k]: q[i] for k, i in zip(layout.scalar_dofs, layout.scalar_positions)}
    return values | {b: q[i : i + 4] for b, i in zip(model.ball_joint_names, layout.ball_positions)}


def positions(model: js.Model, values: dict) -> np.ndarray:
    """The joint positions ``(nq,)`` of ``values`` by name (see :func:`named`)."""
    layout = configuration.position_layout(model)
    q = np.array(configuration.neutral_positions(model, float))
    for k, i in zip(layout.scalar_dofs, layout.scalar_positions):
        q[i] = values[model.joint_names[k]]
    for b, i in zip(model.ball_joint_names, layout.ball_positions):
        q[i : i + 4] = values[b]
    return q


def unit(values) -> np.ndarray:
    return np.asarray(values, dtype=float) / np.linalg.norm(values)


@pytest.fixture(scope="module")
def full() -> js.Model:
    return js.load_model(CHAIN)


@pytest.mark.parametrize(
    "kept, locked",
    [
        (["h1", "h2", "b2"], {"b1": unit([0.8, 0.3, -0.4, 0.2])}),
        (["b1", "h2"], {"h1": 0.4, "b2": unit([0.7, -0.2, 0.5, 0.3])}),
    ],
    ids=["ball_locked", "ball_kept"],
)
def test_reduced_dynamics_are_the_full_models_at_the_locked_positions(full, kept, locked):
    reduced = js.reduce(full, kept, locked)
    dofs = [dof for name in kept for dof in ((f"{name}:x", f"{name}:y", f"{name}:z") if name in full.ball_joint_names else (name,))]
    assert reduced.joint_names == tuple(dofs) and reduced.ball_joint_names == tuple(n for n in kept if n in full.ball_joint_names)
    rows = np.array([full.joint_index(name) for name in dofs])
    rng = np.random.default_rng(3)
    for _ in range(2):
        q_small = configuration.integrate_positions(
            reduced, configuration.neutral_positions(reduced, float), jnp.asarray(rng.normal(size=reduced.dofs)), 1.0
        )
        velocities = rng.normal(size=reduced.dofs)
        q_full = positions(full, locked | named(reduced, np.asarray(q_small)))
        v_full = np.zeros(full.dofs)
        v_full[rows] = velocities
        tau = rng.normal(size=reduced.dofs)
        M, h, accelerations = dynamics(reduced, js.State.build(reduced, joint_positions=q_small, joint_velocities=velocities), tau)
        M_full, h_full, _ = dynamics(full, js.State.build(full, joint_positions=q_full, joint_velocities=v_full), jnp.zeros(full.dofs))
        M_full, h_full = np.asarray(M_full)[np.ix_(rows, rows)], np.asarray(h_full)[rows]
        np.testing.assert_allclose(np.asarray(M), M_full, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(h), h_full, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(accelerations), np.linalg.solve(M_full, tau - h_full), rtol=1e-12, atol=1e-12)
        assert np.abs(h_full).max() > 0.1


def test_a_kept_ball_keeps_its_cone_and_bad_locks_are_refused(full):
    assert js.reduce(full, ["b1", "h2"]).ball_cones.balls == (0,)
    assert js.reduce(full, ["b2", "h1"]).ball_cones.count == 0
    assert js.reduce(full, ["h2", "b2", "b1"]).ball_cones.balls == (1,)
    # The joint positions (nq,) as the locked positions: the same model as by name.
    q = np.array(configuration.neutral_positions(full, float))
    q[0], q[1:5] = 0.4, unit([0.8, 0.3, -0.4, 0.2])
    by_layout, by_name = js.reduce(full, ["h2", "b2"], q), js.reduce(full, ["h2", "b2"], {"h1": 0.4, "b1": q[1:5]})
    np.testing.assert_allclose(np.asarray(by_layout.joint_transform), np.asarray(by_name.joint_transform), rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match=r"ball joint 'b1': keep its three degrees of freedom \['b1:x', 'b1:y', 'b1:z'\] or none"):
        js.reduce(full, ["b1:x", "h2"])
    with pytest.raises(ValueError, match="ball joint 'b1' is locked at a quaternion"):
        js.reduce(full, ["h2"], {"b1": 0.3})
    with pytest.raises(ValueError, match="'b1:y' is a degree of freedom of a ball joint"):
        js.reduce(full, ["h2"], {"b1:y": 0.3})
    with pytest.raises(ValueError, match="locked_positions has 8 values, the model has 10 joint positions"):
        js.reduce(full, ["h2"], np.zeros(8))
