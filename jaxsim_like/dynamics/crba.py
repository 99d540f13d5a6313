"""The mass matrix (composite rigid bodies, written as sums over the tree in the world frame)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import kinematics as kin_module
from . import representations as rep
from .model import Model, topology
from .state import State, check_representation


def mass_matrix(model: Model, state: State, *, velocity_representation: str | None = None) -> jax.Array:
    """``M(q) (nv, nv)``, symmetric positive definite, for ``nu = [base velocity; joint velocities]``
    with the base velocity in ``velocity_representation`` (default: the state's); the joints'
    ``model.joint_armature`` is on the joint diagonal."""
    representation = check_representation(velocity_representation or state.velocity_representation)
    G_H_B, origin = kin_module.internal_base_pose(state)
    W_H_L = kin_module.link_poses(model, G_H_B, state.joint_positions)
    W_S = kin_module.world_motion_subspaces(model, W_H_L)
    W_M = kin_module.world_inertias(model, W_H_L)
    W_Mc = kin_module.subtree_sum(model, W_M)
    F = (W_Mc @ W_S[:, :, None])[:, :, 0]
    joints = np.asarray(model.joint_link, dtype=int)
    above = topology(model.parent, model.joint_link).ancestor
    products = W_S[joints] @ F[joints].T
    upper = jnp.where(above, products, 0.0)
    M_qq = upper + jnp.where(above.T & ~np.eye(model.dofs, dtype=bool), products.T, 0.0) + jnp.diag(model.joint_armature)
    if not model.floating_base:
        return M_qq
    X = rep.to_inertial_transform(W_H_L[0], representation, origin)
    M_BB = X.T @ W_Mc[0] @ X
    M_Bq = X.T @ F[joints].T
    return jnp.block([[M_BB, M_Bq], [M_Bq.T, M_qq]])
