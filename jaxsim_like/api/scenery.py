"""Collision geometry on the host: the terrain made of static models, and bounding boxes.

A static model whose collision is a ``<plane>`` (the usual ``ground_plane``) becomes the ground
that the soft contacts push against; its ``<box>`` collisions become static obstacles (steps,
walls). Other shapes of static models (spheres, cylinders, meshes) are not obstacles: the
terrain contacts are between the collidable points of moving models and this terrain (moving
models touch each other through the world step's collision table). Only one ground plane is
used: the first one found.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..dynamics.model import Model
from ..parsers.description import Geometry, ModelDescription
from ..parsers.meshes import load_mesh_vertices
from ..simulation import Terrain
from .engine import NO_GROUND_OFFSET
from .utils import log


def model_link_poses(description: ModelDescription) -> dict[str, np.ndarray]:
    """``M_H_L (4, 4)`` of every link of a description at zero joint positions (model frame)."""
    poses = {description.root: np.asarray(description.M_H_root, dtype=float)}
    children: dict[str, list] = {}
    for joint in description.joints:
        children.setdefault(joint.parent, []).append(joint)
    stack = [description.root]
    while stack:
        parent = stack.pop()
        for joint in children.get(parent, []):
            poses[joint.child] = poses[parent] @ np.asarray(joint.P_H_C, dtype=float)
            stack.append(joint.child)
    return poses


def body_collisions(description: ModelDescription, model: Model) -> list[list[tuple[np.ndarray, Geometry]]]:
    """For each link of ``model`` (a body after lumping), its collisions ``(B_H_G, geometry)``,
    including those of the links lumped into it."""
    bodies: list[list[tuple[np.ndarray, Geometry]]] = [[] for _ in model.link_names]
    frame_transforms = np.asarray(model.frame_transform)
    for link in description.links:
        if link.name in model.link_names:
            body, B_H_L = model.link_names.index(link.name), np.eye(4)
        elif link.name in model.frame_names:
            frame = model.frame_names.index(link.name)
            body, B_H_L = model.frame_link[frame], frame_transforms[frame]
        else:
            continue
        for collision in link.collisions:
            bodies[body].append((B_H_L @ np.asarray(collision.L_H_G, dtype=float), collision.geometry))
    return bodies


def _shape_corners(geometry: Geometry) -> np.ndarray | None:
    """Corners ``(8, 3)`` of the shape's bounding box in its own frame (mesh: its vertices)."""
    if geometry.type == "box":
        half = np.asarray(geometry.size, dtype=float) / 2
    elif geometry.type == "sphere":
        half = np.full(3, geometry.radius)
    elif geometry.type == "cylinder":
        half = np.array([geometry.radius, geometry.radius, geometry.length / 2])
    elif geometry.type == "capsule":
        half = np.array([geometry.radius, geometry.radius, geometry.length / 2 + geometry.radius])
    elif geometry.type == "ellipsoid":
        half = np.asarray(geometry.size, dtype=float)
    elif geometry.type == "mesh" and geometry.path is not None:
        return load_mesh_vertices(geometry.path, geometry.scale)
    else:
        return None
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    return signs * half


@dataclass
class AxisAlignedBox:
    """An axis-aligned box: its ``min (3,)`` and ``max (3,)`` corners [m]."""

    min: np.ndarray
    max: np.ndarray

    @property
    def corners(self) -> np.ndarray:
        """The 8 corners ``(8, 3)``."""
        return np.array([[x, y, z] for x in (self.min[0], self.max[0]) for y in (self.min[1], self.max[1]) for z in (self.min[2], self.max[2])])

    def transformed(self, A_H_B: np.ndarray) -> AxisAlignedBox:
        """The axis-aligned box, in frame A, that bounds this box given in frame B."""
        corners = self.corners @ A_H_B[:3, :3].T + A_H_B[:3, 3]
        return AxisAlignedBox(corners.min(axis=0), corners.max(axis=0))


def bounding_box(collisions: Iterable[tuple[np.ndarray, Geometry]]) -> AxisAlignedBox | None:
    """The box bounding every shape (planes excluded) in the frame of the collisions; None without shapes."""
    points = []
    for B_H_G, geometry in collisions:
        corners = _shape_corners(geometry)
        if corners is not None and len(corners):
            points.append(corners @ B_H_G[:3, :3].T + B_H_G[:3, 3])
    if not points:
        return None
    stacked = np.concatenate(points)
    return AxisAlignedBox(stacked.min(axis=0), stacked.max(axis=0))


def static_terrain(statics: Iterable[tuple[str, ModelDescription, Model, np.ndarray]], dtype) -> tuple[Terrain, list[str]]:
    """The terrain of the static models ``(name, description, model, W_H_B)`` (``W_H_B``: pose of
    the base link) and the scoped name of each terrain element: the ground, then every box."""
    ground: tuple[np.ndarray, np.ndarray] | None = None
    ground_name = ""
    box_transforms, box_sizes, names = [], [], []
    for name, description, model, W_H_B in statics:
        W_H_M = W_H_B @ np.linalg.inv(np.asarray(description.M_H_root, dtype=float))
        poses = model_link_poses(description)
        for link in description.links:
            W_H_L = W_H_M @ poses[link.name]
            for collision in link.collisions:
                W_H_G = W_H_L @ np.asarray(collision.L_H_G, dtype=float)
                geometry = collision.geometry
                if geometry.type == "plane":
                    if ground is None:
                        normal = W_H_G[:3, :3] @ np.asarray(geometry.normal, dtype=float)
                        ground, ground_name = (normal, W_H_G[:3, 3]), f"{name}::{link.name}"
                    else:
                        log.warning("static model '%s': only one ground plane is used, ignoring '%s'", name, collision.name)
                elif geometry.type == "box":
                    box_transforms.append(W_H_G)
                    box_sizes.append(np.asarray(geometry.size, dtype=float) / 2)
                    names.append(f"{name}::{link.name}")
                else:
                    log.warning(
                        "static model '%s': collision '%s' is a %s, which is not an obstacle (only planes and boxes are)",
                        name, collision.name, geometry.type,
                    )
    if ground is None:
        terrain = Terrain.plane(height=NO_GROUND_OFFSET)
    else:
        terrain = Terrain.plane(normal=ground[0], point=ground[1])
    terrain = terrain.replace(**{k: v.astype(dtype) for k, v in vars(terrain).items() if k != "height_function"})
    if box_transforms:
        terrain = terrain.with_boxes(np.stack(box_transforms).astype(dtype), np.stack(box_sizes).astype(dtype))
    return terrain, [ground_name] + names
