"""The budget of soft joint limit rows (issue 31/33): a step holds at most ``SOFT_LIMIT_ROWS``
limits as rows, the first engaged ones in the model's order; a limit engaged beyond it keeps the
spring-damper limit and is counted. Within the budget a model of more limits than rows moves as
MuJoCo's ``mj_step``; gymnasium's Ant, from ``qpos0`` and from gymnasium's reset noise, never
has more limits engaged than the budget.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.configuration import dof_positions
from jaxsim_like.simulation import joint_limits
from jaxsim_like.simulation.joint_effects import joint_effects

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

# Two arms on limited hinges: the first is thrown into both sides of its range, the second hangs
# at rest in the middle of its range (never engaged).
XML = """<mujoco><option timestep="0.001"/><worldbody>
  <body name="arm" pos="0 0 2">
    <joint name="thrown" type="hinge" axis="0 1 0" range="-20 30"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.04" mass="1" contype="0" conaffinity="0"/>
  </body>
  <body name="other" pos="1 0 2">
    <joint name="hanging" type="hinge" axis="0 1 0" range="-60 45" margin="0.02"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.04" mass="1" contype="0" conaffinity="0"/>
  </body></worldbody></mujoco>"""
DT, STEPS, SPEED = 0.001, 1000, 6.0


@pytest.fixture(scope="module")
def model() -> js.Model:
    return js.load_model(XML)


@pytest.fixture()
def one_row(monkeypatch):
    """A budget of one row (the models here have two limits)."""
    monkeypatch.setattr(joint_limits, "SOFT_LIMIT_ROWS", 1)


def test_the_row_holds_the_first_engaged_limit_and_the_other_keeps_the_spring_damper(model, one_row):
    lower, upper = np.asarray(model.position_limit_lower), np.asarray(model.position_limit_upper)
    ones = jnp.ones(2)
    positions = jnp.asarray([lower[0] - 0.05, upper[1] + 0.05])  # both engaged
    assert joint_limits.limit_budget(model) == 1
    np.testing.assert_array_equal(joint_limits.held_limits(model, positions), [1.0, 0.0])
    assert int(joint_limits.dropped_limits(model, positions)) == 1
    effects = joint_effects(model, positions, jnp.zeros(2), jnp.zeros(2), limit_stiffness=ones, limit_damping=ones, friction_velocity=ones)
    np.testing.assert_allclose(effects.torques, [0.0, -0.05], rtol=1e-12)  # the dropped limit's spring pushes back
    rows = joint_limits.limit_rows(model, js.State.build(model, joint_positions=positions), jnp.asarray(DT))
    np.testing.assert_array_equal(rows.jacobian, [[1.0, 0.0]])  # the lower side of the first
    assert bool(rows.engaged[0])
    inside = jnp.asarray([0.0, upper[1] + 0.05])  # one engaged: held, nothing dropped
    np.testing.assert_array_equal(joint_limits.held_limits(model, inside), [0.0, 1.0])
    assert int(joint_limits.dropped_limits(model, inside)) == 0
    none = joint_limits.limit_rows(model, js.State.build(model), jnp.asarray(DT))
    assert not bool(none.engaged[0]) and np.all(np.asarray(none.jacobian) == 0.0)  # an empty slot


def test_more_limits_than_rows_move_as_mujoco_while_no_more_are_engaged(model, one_row, figures):
    params = js.SimulationParams.build(model, dt=DT, integrator="implicit_euler")
    start = js.State.build(model, joint_velocities=jnp.asarray([SPEED, 0.0]))
    states = jax.jit(lambda s: js.rollout(model, s, jnp.zeros((STEPS, 2)), params=params)[1][0])(start)
    dropped = jax.vmap(lambda q: joint_limits.dropped_limits(model, q))(states.joint_positions)
    m = mujoco.MjModel.from_xml_string(XML)
    d = mujoco.MjData(m)
    d.qvel[:] = [SPEED, 0.0]
    reference = np.zeros((STEPS, 2))
    for k in range(STEPS):
        mujoco.mj_step(m, d)
        reference[k] = d.qpos
    assert reference[:, 0].min() < np.radians(-20.0) and reference[:, 0].max() > np.radians(30.0)  # both sides
    assert int(dropped.max()) == 0
    distance = np.abs(np.asarray(states.joint_positions) - reference).max()
    figures("soft joint limits, two limits on a budget of one row: max |q - q_MuJoCo| over 1 s", float(distance))
    assert distance < 1e-10


def test_gymnasium_ant_never_engages_more_limits_than_the_budget():
    """1 s at the file's 10 ms from ``qpos0`` (its four ankles outside their ranges) and from
    three draws of gymnasium's reset noise (0.1 uniform on the positions, 0.1 normal on the
    velocities)."""
    gymnasium = pytest.importorskip("gymnasium")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ant = js.load_model(Path(gymnasium.__file__).parent / "envs/mujoco/assets/ant.xml")
    assert ant.soft_limits.count > joint_limits.SOFT_LIMIT_ROWS
    params = js.SimulationParams.build(ant, dt=0.01)
    rng = np.random.default_rng(0)
    q0 = np.zeros((4, ant.dofs))
    q0[1:] = rng.uniform(-0.1, 0.1, (3, ant.dofs))
    v0 = np.zeros((4, ant.dofs))
    v0[1:] = 0.1 * rng.standard_normal((3, ant.dofs))

    def counts(q, v):
        states = js.rollout(ant, js.State.build(ant, joint_positions=q, joint_velocities=v), jnp.zeros((100, ant.dofs)), params=params)[1][0]
        positions = jax.vmap(lambda s: dof_positions(ant, s))(states.joint_positions)
        engaged = jax.vmap(lambda p: jnp.sum(joint_limits.limit_distances(ant, p)[0] < 0.0))(positions)
        return engaged.max(), jax.vmap(lambda p: joint_limits.dropped_limits(ant, p))(positions).max()

    engaged, dropped = jax.jit(jax.vmap(counts))(jnp.asarray(q0), jnp.asarray(v0))
    assert int(engaged.max()) == joint_limits.SOFT_LIMIT_ROWS  # the four ankles at the start
    np.testing.assert_array_equal(dropped, 0)
