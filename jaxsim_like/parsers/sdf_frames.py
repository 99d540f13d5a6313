"""The SDFormat frame graph: named frames, their poses (``relative_to``) and attachments.

Every link, joint, explicit ``<frame>``, model and the world is a node. A node's pose is
written in another frame (its ``relative_to`` edge) and the node is attached to a frame that
eventually leads to a link (its ``attached_to`` edge). Names are looked up in scopes:
``name`` in model ``outer::inner`` is the node ``outer::inner::name``; ``__model__`` is the
scope's model frame (or, for an ``<include merge="true">``, its proxy frame). Poses are
resolved to the world frame ``W``; cycles in either graph raise :class:`ModelLoadError`
at the element that closes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from lxml import etree

from .errors import ModelLoadError
from .xml import describe, error_at

WORLD = "world"
MODEL_FRAME = "__model__"

# Before SDFormat 1.7 a link and a joint may share a name; a reference then names the link.
_LOOKUP_PRIORITY = {"link": 0, "frame": 1, "model": 2, "joint": 3, "world": 4}
_STRICT_NAMES = (1, 7)


def inverse(transform: np.ndarray) -> np.ndarray:
    """The inverse ``(4, 4)`` of a rigid transform."""
    result = np.eye(4)
    rotation = transform[:3, :3]
    result[:3, :3] = rotation.T
    result[:3, 3] = -rotation.T @ transform[:3, 3]
    return result


@dataclass(eq=False)
class Scope:
    """Where names are looked up: a model (``prefix`` ``"outer::inner::"``) or the world.

    ``frame`` is the node that ``__model__`` names, ``top`` the world-level model the scope
    belongs to (None for the world itself), ``version`` the SDFormat version of its file.
    """

    prefix: str
    frame: str
    version: tuple[int, int]
    file: str | None
    directory: str
    static: bool = False
    top: str | None = None

    @property
    def is_world(self) -> bool:
        return self.top is None

    @property
    def label(self) -> str:
        return "the world" if self.is_world else f"model '{self.prefix[:-2]}'"


@dataclass(frozen=True, eq=False)
class Ref:
    """A frame name written at ``element`` of ``file``, to be looked up in ``scope``."""

    scope: Scope
    name: str
    element: etree._Element
    file: str | None


Target = str | Ref
"""A node id, or a :class:`Ref` naming one."""


@dataclass(eq=False)
class Node:
    """A frame: ``pose`` is ``R_H_node`` with ``R`` the ``relative_to`` frame, except that for a
    model with a ``placement`` frame ``P`` it is ``R_H_P``."""

    id: str
    name: str
    kind: str
    element: etree._Element
    file: str | None
    scope: Scope
    pose: np.ndarray = field(default_factory=lambda: np.eye(4))
    pose_element: etree._Element | None = None
    pose_file: str | None = None
    relative_to: Target | None = None
    attached_to: Target | None = None
    placement: Ref | None = None

    def error(self, message: str, at_pose: bool = False) -> ModelLoadError:
        if at_pose and self.pose_element is not None:
            return error_at(self.pose_element, self.pose_file, message)
        return error_at(self.element, self.file, message)


class FrameGraph:
    """Frames of a world (or of a model placed in a virtual world), by id and by name."""

    def __init__(self, world: Scope, element: etree._Element) -> None:
        root = Node(id=WORLD, name=WORLD, kind="world", element=element, file=world.file, scope=world)
        self.nodes: dict[str, Node] = {WORLD: root}
        self._names: dict[str, str] = {WORLD: WORLD}
        self._world_poses: dict[str, np.ndarray] = {WORLD: np.eye(4)}

    def add(self, node: Node, *aliases: str) -> None:
        """Register ``node`` under its name and ``aliases``; duplicate names raise."""
        for name in (node.name, *aliases):
            known = self._names.get(name)
            if known is None:
                self._names[name] = node.id
                continue
            other = self.nodes[known]
            legacy = node.scope.version < _STRICT_NAMES and other.scope.version < _STRICT_NAMES
            if other.kind == node.kind or not legacy:
                line = other.element.sourceline
                raise node.error(f"duplicate name '{name}': already used by {describe(other.element)} at line {line}")
            if _LOOKUP_PRIORITY[node.kind] < _LOOKUP_PRIORITY[other.kind]:
                self._names[name] = node.id
        self.nodes[node.id] = node

    def lookup(self, target: Target) -> str:
        """The id of the node that ``target`` names."""
        if isinstance(target, str):
            return target
        scope = target.scope
        if target.name == MODEL_FRAME:
            if scope.is_world:
                raise error_at(target.element, target.file, "'__model__' does not exist in a world")
            return scope.frame
        found = self._names.get(scope.prefix + target.name)
        if found is None:
            raise error_at(target.element, target.file, f"unknown frame '{target.name}' in {scope.label}")
        return found

    def _local(self, node_id: str) -> tuple[str, np.ndarray]:
        """(the relative_to node, the pose of ``node_id`` in it)."""
        node = self.nodes[node_id]
        parent = self.lookup(node.relative_to)
        if node.placement is None:
            return parent, node.pose
        placement = self.lookup(node.placement)
        node_H_placement = self.chain(placement, node_id, node)
        return parent, node.pose @ inverse(node_H_placement)

    def chain(self, start: str, anchor: str, owner: Node) -> np.ndarray:
        """``anchor_H_start``, following ``relative_to`` edges from ``start`` up to ``anchor``
        (used for placement frames, which must lie inside the model ``owner``)."""
        transform = np.eye(4)
        current, visited = start, [start]
        while current != anchor:
            if current == WORLD:
                name = self.nodes[start].name
                where = owner.placement
                raise error_at(where.element, where.file, f"placement frame '{name}' is not inside '{owner.name}'")
            parent, local = self._local(current)
            transform = local @ transform
            if parent in visited:
                raise self._cycle("relative_to", visited + [parent], self.nodes[current])
            visited.append(parent)
            current = parent
        return transform

    def world_pose(self, node_id: str) -> np.ndarray:
        """``W_H_node``: the pose of ``node_id`` in the world frame."""
        pending: list[tuple[str, np.ndarray]] = []
        current = node_id
        visited = [node_id]
        while current not in self._world_poses:
            parent, local = self._local(current)
            pending.append((current, local))
            if parent in visited:
                raise self._cycle("relative_to", visited + [parent], self.nodes[current])
            visited.append(parent)
            current = parent
        pose = self._world_poses[current]
        for pending_id, local in reversed(pending):
            pose = pose @ local
            self._world_poses[pending_id] = pose
        return pose

    def relative_pose(self, node_id: str, anchor: str) -> np.ndarray:
        """``anchor_H_node``."""
        return inverse(self.world_pose(anchor)) @ self.world_pose(node_id)

    def attached_link(self, node_id: str) -> str:
        """The link (or the world) that ``node_id`` is rigidly attached to."""
        current, visited = node_id, [node_id]
        while True:
            node = self.nodes[current]
            if node.kind in ("link", "world"):
                return current
            if node.attached_to is None:
                raise node.error(f"{node.name} has no link to attach to")
            target = self.lookup(node.attached_to)
            if target in visited:
                raise self._cycle("attached_to", visited + [target], node)
            visited.append(target)
            current = target

    def _cycle(self, edge: str, ids: list[str], node: Node) -> ModelLoadError:
        path = " -> ".join(self.nodes[item].name for item in ids[ids.index(ids[-1]) :])
        return node.error(f"{edge} cycle: {path}", at_pose=edge == "relative_to")
