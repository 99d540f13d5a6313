"""The active set of the terrain contacts' normal forces, as a soft constraint row on a model's
solve.

The implicit step linearises each terrain contact at the start of the step; a point that
separates fast there has its force clipped to zero by its own damping, and no slopes
(:func:`.contacts.implicit_contact_forces`). At large steps a light link it belongs to falls back
into the ground within the step, is pushed out by the next and rests in a cycle of a few steps.
Where the first solve's end velocity shows that the law linearised without the clip still
pushes (:func:`.contacts.separating_law`), that law is added to the solve as a soft row
(:mod:`.constraint_rows`): a force ``target - slope (n . v+)`` along the contact normal at the
point, with the exact effective mass ``G M~^-1 G^T`` of the rows on the solve's own factor (one
articulated-body pass per row, :func:`~jaxsim_like.dynamics.aba.articulated_body_responses`).
This equals solving the step again with those slots' unclipped linearisation, for ``ROWS``
slots per model (those that would push hardest), at the cost of a few vector traversals of the
tree.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics import kinematics as kin_module
from ..dynamics.aba import ArticulatedFactor, articulated_body_responses
from ..dynamics.model import Model
from . import contacts
from .constraint_rows import Rows, row_forces

ROWS = 1
"""The clipped slots a model's solve takes in its active set, those that would push hardest (a
fixed amount of work; the cycle of a resting robot involves one light point at a time)."""


class Released(NamedTuple):
    """A solve with its separating rows: the base acceleration ``d/dt G_v_WB (6,)``, the joint
    accelerations ``(n,)`` and the rows' forces at the slots ``(S, 3)`` [N] (world axes)."""

    G_a_B: jax.Array
    joint_accelerations: jax.Array
    slot_forces: jax.Array


def _link_accelerations(model: Model, G_a_B: jax.Array, joint_accelerations: jax.Array, G_S: jax.Array) -> jax.Array:
    """``(N, 6)``: the links' spatial accelerations (inertial, world axes about ``G``'s origin) of
    a base acceleration and joint accelerations, without the velocity terms."""
    return G_a_B + kin_module.ancestors_sum(model, G_S * kin_module.to_link_order(model, joint_accelerations)[:, None])


def release(
    model: Model,
    linear: contacts.ImplicitContacts,
    law: contacts.SeparatingLaw,
    slot_points: jax.Array,
    slot_link: jax.Array,
    velocities: jax.Array,
    G_S: jax.Array,
    factor: ArticulatedFactor,
    G_a_B: jax.Array,
    joint_accelerations: jax.Array,
    dt: jax.Array,
) -> Released:
    """The accelerations of a solve (``G_a_B (6,)``, ``joint_accelerations (n,)``, with the
    ``factor`` of its matrix) with the separating rows of its terrain contacts ``linear`` (their
    :class:`.contacts.SeparatingLaw` ``law``; at the slots, the material ``slot_points (S, 3)`` of
    the links ``slot_link (S,)`` and their ``velocities (S, 3)``, frame ``G``) over a step of
    ``dt`` [s]; ``G_S (N, 6)`` the links' motion subspaces."""
    dtype = G_a_B.dtype
    count = min(ROWS, linear.normal.shape[0])
    if count == 0:
        return Released(G_a_B, joint_accelerations, jnp.zeros_like(linear.normal))
    G_dv = dt * _link_accelerations(model, G_a_B, joint_accelerations, G_S)[slot_link]
    predicted = velocities + G_dv[:, :3] + jnp.cross(G_dv[:, 3:], slot_points)
    rows = law.rows(linear.normal, predicted)
    if count == 1:  # the largest gain: a reduction, where ``top_k`` is a sort kernel on the CPU
        pick = jnp.argmax(rows.gain, keepdims=True)
        gain = rows.gain[pick]
    else:
        gain, pick = jax.lax.top_k(rows.gain, count)
    chosen = gain > 0
    picked_points, links = slot_points[pick], slot_link[pick]
    normal = linear.normal[pick]
    wrench = jnp.concatenate([normal, jnp.cross(picked_points, normal)], axis=-1)
    one_hot = jax.nn.one_hot(links, model.number_of_links, dtype=dtype)
    wrenches = jnp.where(chosen[:, None, None], one_hot[:, :, None] * wrench[:, None, :], 0.0)
    base_responses, joint_responses = articulated_body_responses(model, factor, None, wrenches)

    def normal_rates(a_B: jax.Array, qdd: jax.Array) -> jax.Array:
        a = _link_accelerations(model, a_B, qdd, G_S)[links]
        return jnp.sum(normal * (a[:, :3] + jnp.cross(a[:, 3:], picked_points)), axis=-1)

    effective = jax.vmap(normal_rates)(base_responses, joint_responses)
    effective = 0.5 * (effective + effective.T)
    start = jnp.sum(normal * predicted[pick], axis=-1)
    soft = np.ones(count, dtype=bool)
    target = jnp.where(chosen, rows.target[pick], 0.0)
    slope = jnp.where(chosen, rows.slope[pick], 0.0)
    forces = row_forces(Rows(jnp.zeros((count, model.dofs), dtype), target, slope, chosen, soft, ~soft), effective, start, dt)
    slot_forces = jnp.zeros_like(linear.normal).at[pick].add(forces[:, None] * normal)
    return Released(G_a_B + forces @ base_responses, joint_accelerations + forces @ joint_responses, slot_forces)
