"""The mass matrix and the links' translational inverse weights at the zero configuration,
computed on the host with numpy: quantities that building a simulation reads once per model
(the joint limits' stiffness, the pair laws' link weights), without compiling an XLA program
for each model structure.

The same sums as :func:`.crba.mass_matrix` and :func:`.jacobians.link_jacobians`, at zero joint
positions (ball joints: the identity), in the internal frame ``G`` of :mod:`.kinematics` (world
axes, origin at the base), with the base velocity in the mixed representation (the base's
inertial velocity about ``G``'s origin).
"""

from __future__ import annotations

import numpy as np

from .model import JointKind, Model, topology


def _skew(v: np.ndarray) -> np.ndarray:
    """``(..., 3) -> (..., 3, 3)`` with ``skew(a) @ b = a x b``."""
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    zero = np.zeros_like(x)
    return np.stack([np.stack([zero, -z, y], -1), np.stack([z, zero, -x], -1), np.stack([-y, x, zero], -1)], -2)


def link_poses(model: Model) -> np.ndarray:
    """``G_H_L (N, 4, 4)``: every link at the zero configuration, the base in the file's orientation
    at ``G``'s origin."""
    P_H_C = np.asarray(model.joint_transform, dtype=float)
    G_H_L = np.empty_like(P_H_C)
    G_H_L[0] = np.eye(4)
    G_H_L[0, :3, :3] = np.asarray(model.base_transform, dtype=float)[:3, :3]
    for link, parent in enumerate(model.parent[1:], start=1):
        G_H_L[link] = G_H_L[parent] @ P_H_C[link]
    return G_H_L


def _motion_subspaces(model: Model, G_H_L: np.ndarray) -> np.ndarray:
    """``G_S (N, 6)`` ``[linear; angular]``: each link's motion per unit velocity of its joint (root: 0)."""
    R, o = G_H_L[:, :3, :3], G_H_L[:, :3, 3]
    axis = np.einsum("nij,nj->ni", R, np.asarray(model.joint_axis, dtype=float))
    point = np.einsum("nij,nj->ni", R, np.asarray(model.joint_axis_point, dtype=float)) + o
    kinds = np.asarray(model.joint_type)
    turning = np.isin(kinds, (JointKind.REVOLUTE, JointKind.BALL_ROTATION, JointKind.SCREW))[:, None]
    linear = np.where(turning, np.cross(point, axis), 0.0)
    linear = np.where((kinds == JointKind.PRISMATIC)[:, None], axis, linear)
    linear = linear + np.where((kinds == JointKind.SCREW)[:, None], np.asarray(model.joint_pitch, dtype=float)[:, None] * axis, 0.0)
    return np.concatenate([linear, np.where(turning, axis, 0.0)], axis=-1)


def _inertias(model: Model, G_H_L: np.ndarray) -> np.ndarray:
    """``G_M (N, 6, 6)``: each link's 6D inertia about ``G``'s origin, world axes."""
    R, o = G_H_L[:, :3, :3], G_H_L[:, :3, 3]
    mass = np.asarray(model.link_mass, dtype=float)[:, None, None]
    com = np.einsum("nij,nj->ni", R, np.asarray(model.link_com, dtype=float)) + o
    inertia = R @ np.asarray(model.link_inertia, dtype=float) @ np.swapaxes(R, -1, -2)
    c = _skew(com)
    return np.concatenate([np.concatenate([mass * np.eye(3), -mass * c], -1), np.concatenate([mass * c, inertia - mass * c @ c], -1)], -2)


def _tree_terms(model: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``G_H_L (N, 4, 4)``, ``G_S (N, 6)`` and the composite inertias of the links' subtrees ``(N, 6, 6)``."""
    G_H_L = link_poses(model)
    subtree = topology(model.parent, model.joint_link).subtree.astype(float)
    G_M = _inertias(model, G_H_L)
    return G_H_L, _motion_subspaces(model, G_H_L), (subtree @ G_M.reshape(len(G_M), 36)).reshape(G_M.shape)


def _mass_matrix(model: Model, G_S: np.ndarray, G_Mc: np.ndarray) -> np.ndarray:
    """``M (nv, nv)`` from the motion subspaces ``G_S (N, 6)`` and composite inertias ``G_Mc (N, 6, 6)``."""
    joints = np.asarray(model.joint_link, dtype=int)
    above = topology(model.parent, model.joint_link).ancestor
    F = np.einsum("nij,nj->ni", G_Mc[joints], G_S[joints])
    products = G_S[joints] @ F.T
    M_qq = np.where(above, products, 0.0)
    M_qq = M_qq + np.where(above.T & ~np.eye(model.dofs, dtype=bool), products.T, 0.0) + np.diag(np.asarray(model.joint_armature, dtype=float))
    if not model.floating_base:
        return M_qq
    return np.block([[G_Mc[0], F.T], [F, M_qq]])


def mass_matrix(model: Model) -> np.ndarray:
    """``M (nv, nv)`` at the zero configuration, base velocity (when floating) first."""
    _, G_S, G_Mc = _tree_terms(model)
    return _mass_matrix(model, G_S, G_Mc)


def translational_inverse_weights(model: Model) -> np.ndarray:
    """``(N,)`` [1/kg]: the mean of the diagonal of ``J M^-1 J^T`` of each link, ``J (3, nv)`` the
    velocity of its origin, at the zero configuration (zero for a link welded to the world)."""
    G_H_L, G_S, G_Mc = _tree_terms(model)
    M = _mass_matrix(model, G_S, G_Mc)
    if not M.shape[0]:
        return np.zeros(model.number_of_links)
    support = topology(model.parent, model.joint_link).support
    origins = G_H_L[:, :3, 3]
    to_origin = np.concatenate([np.broadcast_to(np.eye(3), origins.shape + (3,)), -_skew(origins)], axis=-1)
    columns = support[:, None, :] * G_S[np.asarray(model.joint_link, dtype=int)].T[None]
    if model.floating_base:
        columns = np.concatenate([np.broadcast_to(np.eye(6), (model.number_of_links, 6, 6)), columns], axis=-1)
    J = to_origin @ columns
    response = np.linalg.solve(M, np.swapaxes(J, 0, 2).reshape(M.shape[0], -1)).reshape(M.shape[0], 3, -1)
    return np.einsum("nij,jin->n", J, response) / 3
