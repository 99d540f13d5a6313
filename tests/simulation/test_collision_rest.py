"""Boxes resting and sliding on a box through `collide` and the linearly implicit form of
`pair_forces`: one free rigid body (no gyroscopic term) stepped by the implicit Euler step
``(M + h J^T A J) dnu = h (f_gravity + J^T step_forces)`` over its contact slots, at 5 ms, with
the slots' tangential deformation carried from step to step."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from collision_worlds import body, rotation

from jaxsim_like import State
from jaxsim_like.dynamics import spatial
from jaxsim_like.simulation import ContactParams, SimulationParams, rollout
from jaxsim_like.simulation.collision import CollisionTable, collide, pair_forces
from jaxsim_like.simulation.contacts import implicit_deformation

MASS, DT, G, MU = 5.0, 5e-3, 9.81, 0.5
TOP, SLAB = body("cube"), body("slab")
TABLE = CollisionTable.build([TOP, SLAB])
PARAMS = ContactParams.from_mass(MASS, max_penetration=0.002, friction=MU, points_in_contact=4)
INERTIA = MASS * 0.04 / 6 * jnp.eye(3)  # a 0.2 m cube


def step(state, _):
    p, R, v, w, memory = state
    H = jnp.eye(4).at[:3, :3].set(R).at[:3, 3].set(p)
    contacts = collide(TABLE, [TOP, SLAB], (H[None], jnp.eye(4)[None]))
    r = contacts.position - p
    J = jnp.concatenate([jnp.broadcast_to(jnp.eye(3), r.shape + (3,)), -spatial.skew(r)], axis=-1)  # (C, 3, 6)
    velocity = jnp.einsum("cij,j->ci", J, jnp.concatenate([v, w]))
    deformation = memory[contacts.slot]
    law = pair_forces(PARAMS, contacts, velocity, deformation, DT, jnp.full(contacts.depth.shape, MASS), 2)
    M = jax.scipy.linalg.block_diag(MASS * jnp.eye(3), R @ INERTIA @ R.T) + DT * jnp.einsum("cji,cjk,ckl->il", J, law.matrices, J)
    f = jnp.concatenate([jnp.array([0.0, 0.0, -MASS * G]), jnp.zeros(3)]) + jnp.einsum("cji,cj->i", J, law.step_forces)
    dnu = jnp.linalg.solve(M, DT * f)
    dv = jnp.einsum("cij,j->ci", J, dnu)
    end_forces = law.step_forces - law.resist(dv)
    memory = jnp.zeros_like(memory).at[contacts.slot].set(
        implicit_deformation(PARAMS, law, contacts.normal, deformation, velocity + dv, DT)
    )
    v, w = v + dnu[:3], w + dnu[3:]
    R = spatial.quaternion_to_rotation(spatial.quaternion_exp(w * DT)) @ R
    return (p + DT * v, R, v, w, memory), (p, jnp.sum(end_forces[:, 2]), jnp.sum(contacts.active))


@jax.jit
def simulate(p, R, v):
    return jax.lax.scan(step, (p, R, v, jnp.zeros(3), jnp.zeros((TABLE.candidate_slots, 3))), None, 400)


SIMULATE = jax.jit(jax.vmap(simulate))


def test_boxes_rest_with_the_static_normal_force_and_slide_with_coulomb_friction():
    starts = [  # aligned at a corner of the slab, turned 45 degrees, tilted 5 degrees, sliding at 0.5 m/s
        ((0.2, 0.1, 0.152), np.eye(3), (0.0, 0.0, 0.0)),
        ((0.0, 0.0, 0.152), rotation("z", np.pi / 4), (0.0, 0.0, 0.0)),
        ((-0.1, 0.0, 0.16), rotation("y", 0.087), (0.0, 0.0, 0.0)),
        ((-0.15, 0.0, 0.148), np.eye(3), (0.5, 0.0, 0.0)),
    ]
    p, R, v = (jnp.asarray(np.stack(x)) for x in zip(*starts))
    final, (positions, normal_force, active) = SIMULATE(p, R, v)
    np.testing.assert_allclose(normal_force[:, -50:], MASS * G, rtol=1e-6)  # the last 0.25 s: statics
    assert np.abs(np.asarray(final[2])).max() < 1e-3 and np.abs(np.asarray(final[3])).max() < 1e-3
    np.testing.assert_array_equal(np.asarray(active)[:, -1], [4, 4, 4, 4])
    np.testing.assert_allclose(np.asarray(positions)[:, -1, 2], 0.05 + 0.1 - 0.002, atol=2e-5)  # at the design depth
    travelled = float(positions[3, -1, 0] - positions[3, 0, 0])
    # The pair law is the terrain's: the box stops where the same box sliding on the ground with
    # the same law stops (both some 13 % short of v^2 / (2 mu g) at 5 ms).
    ground = terrain_slide(0.5)
    np.testing.assert_allclose(travelled, ground, rtol=0.03)
    np.testing.assert_allclose(travelled, 0.5**2 / (2 * MU * G), rtol=0.15)


def terrain_slide(speed: float) -> float:
    """How far the 0.2 m cube of ``MASS`` slides on the ground from ``speed`` [m/s] with ``PARAMS``."""
    cube = body("cube").replace(link_mass=jnp.full(1, MASS), link_inertia=INERTIA[None])
    params = SimulationParams.build(cube, dt=DT, contact=PARAMS)
    start = State.build(cube, base_position=[0.0, 0.0, 0.1 - 0.002], base_velocity=[speed, 0.0, 0.0, 0.0, 0.0, 0.0])
    final = jax.jit(lambda s: rollout(cube, s, jnp.zeros((400, 0)), params=params)[0])(start)
    return float(final.base_position[0])
