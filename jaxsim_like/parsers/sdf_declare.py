"""Declaration of an SDFormat world or model into a :class:`FrameGraph`, in document order.

Models nested with ``<model>`` or ``<include>`` get scoped names (``outer::inner::link``);
``<include merge="true">`` (1.9+) adds the included elements to the enclosing model, posed
through the proxy frame ``_merged__<name>__model__``. Includes are resolved with
:func:`resolve_uri` (``model://`` folders through their ``model.config`` or ``model.sdf``).
Names, joint types and references are checked here or when the graph is resolved; every
error is a :class:`ModelLoadError` at its element.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from lxml import etree

from .sdf_elements import warn_ignored
from .sdf_frames import MODEL_FRAME, WORLD, FrameGraph, Node, Ref, Scope, Target
from .sdf_values import (
    NEWEST_VERSION,
    OLDEST_VERSION,
    boolean,
    child,
    child_text,
    parse_version,
    pose_matrix,
    pose_reference,
)
from .uri import resolve_uri
from .xml import error_at, load_xml

SUPPORTED_JOINTS = ("revolute", "continuous", "prismatic", "fixed", "ball", "universal", "revolute2", "screw", "gearbox")

_MAX_INCLUDE_DEPTH = 32


@dataclass(frozen=True)
class Document:
    """Where elements come from: ``file`` (None for a string), its folder and SDFormat version."""

    file: str | None
    directory: str
    version: tuple[int, int]


@dataclass
class JointDeclaration:
    """A joint node with its type and the frames written in ``<parent>`` (None: the world) and ``<child>``."""

    node: Node
    type: str
    parent: Ref | None
    child: Ref


@dataclass
class _Include:
    """What an ``<include>`` (at ``element`` of ``file``) overrides in the included model."""

    element: etree._Element
    file: str | None
    name: str | None
    pose: etree._Element | None
    static: bool | None
    placement: str | None
    merge: bool


def _check_name(name: str | None, element: etree._Element, file: str | None, version: tuple[int, int]) -> str:
    if name is None or not name.strip():
        raise error_at(element, file, "missing name")
    name = name.strip()
    if name == WORLD:
        raise error_at(element, file, "'world' is a reserved name")
    if version >= (1, 7) and name.startswith("__") and name.endswith("__"):
        raise error_at(element, file, f"'{name}' is a reserved name (names starting and ending with '__')")
    if version >= (1, 8) and "::" in name:
        raise error_at(element, file, f"'{name}': '::' is reserved as the scope delimiter")
    return name


class Declarations:
    """The frame graph of one world (or of models placed in a virtual world) and the
    links, joints, frames and world-level models declared in it, in document order."""

    def __init__(self, world_element: etree._Element, document: Document) -> None:
        self.world = Scope(
            prefix="", frame=WORLD, version=document.version, file=document.file, directory=document.directory
        )
        self.graph = FrameGraph(self.world, world_element)
        self.models: list[Node] = []
        self.scopes: dict[str, Scope] = {}
        self.links: list[Node] = []
        self.joints: list[JointDeclaration] = []
        self.frames: list[Node] = []
        self.world_frames: list[Node] = []
        self._includes: list[str] = [os.path.abspath(document.file)] if document.file else []

    def declare_world(self, element: etree._Element, document: Document) -> None:
        """Declare the frames, models and includes of a ``<world>``."""
        for item in element:
            if item.tag == "model":
                self.models.append(self.declare_model(item, self.world, document))
            elif item.tag == "include":
                self.models.append(self._declare_include(item, self.world, document))
            elif item.tag == "frame":
                self.world_frames.append(self._declare_frame(item, self.world, document))
            elif item.tag == "joint":
                raise error_at(item, document.file, "joints between world-level models are not supported")
        for node in self.world_frames:
            self.graph.world_pose(node.id)
            self.graph.attached_link(node.id)

    def declare_model(
        self, element: etree._Element, parent: Scope, document: Document, include: _Include | None = None
    ) -> Node:
        """Declare a ``<model>`` (with the overrides of an ``<include>``) inside ``parent``."""
        file, version = document.file, document.version
        if include is not None and include.name is not None:
            name = _check_name(include.name, include.element, include.file, version)
        else:
            name = _check_name(element.get("name"), element, file, version)
        static_element = child(element, "static", file)
        static = boolean(static_element, file) if static_element is not None else False
        if include is not None and include.static is not None:
            static = include.static
        merge = include is not None and include.merge
        static = static and not merge  # a merged model takes the static flag of the enclosing one
        if static and not parent.is_world and not parent.static:
            raise error_at(element, file, f"static model '{name}' nested in a non-static model is not supported")
        if include is not None and include.pose is not None:
            pose_element, pose_file = include.pose, include.file
        else:
            pose_element, pose_file = child(element, "pose", file), file
        if merge:
            node_name = f"{parent.prefix}_merged__{name}__model__"
            kind, prefix = "frame", parent.prefix
        else:
            node_name = parent.prefix + name
            kind, prefix = "model", f"{parent.prefix}{name}::"
        node_id = f"{kind}:{node_name}"
        scope = Scope(
            prefix=prefix,
            frame=node_id,
            version=version,
            file=file,
            directory=document.directory,
            static=static or parent.static,
            top=node_id if parent.is_world else parent.top,
        )
        if include is not None and include.placement is not None:
            placement = Ref(scope, include.placement, include.element, include.file)
        elif (element.get("placement_frame") or "").strip():
            placement = Ref(scope, element.get("placement_frame").strip(), element, file)
        else:
            placement = None
        reference = pose_reference(pose_element)
        node = Node(
            id=node_id,
            name=node_name,
            kind=kind,
            element=include.element if include is not None else element,
            file=include.file if include is not None else file,
            scope=parent,
            pose=pose_matrix(pose_element, pose_file),
            pose_element=pose_element,
            pose_file=pose_file,
            relative_to=Ref(parent, reference, pose_element, pose_file) if reference else parent.frame,
            placement=placement,
        )
        self.graph.add(node, *(() if merge else (f"{node_name}::{MODEL_FRAME}",)))
        self.scopes[node_id] = scope
        if merge:
            self.frames.append(node)
        node.attached_to = self._declare_children(element, scope, document)
        return node

    def _declare_children(self, element: etree._Element, scope: Scope, document: Document) -> Target | None:
        """Declare the contents of a model; return its canonical link (or None without links)."""
        first_link: Target | None = None
        first_model: Target | None = None
        for item in element:
            if item.tag == "link":
                node = self._declare_link(item, scope, document)
                first_link = first_link or node.id
            elif item.tag == "joint":
                self._declare_joint(item, scope, document)
            elif item.tag == "frame":
                self._declare_frame(item, scope, document)
            elif item.tag == "model":
                node = self.declare_model(item, scope, document)
                first_model = first_model or node.id
            elif item.tag == "include":
                node = self._declare_include(item, scope, document)
                if node.kind == "frame":
                    first_link = first_link or node.attached_to
                else:
                    first_model = first_model or node.id
        canonical = (element.get("canonical_link") or "").strip()
        if canonical:
            return Ref(scope, canonical, element, document.file)
        return first_link or first_model

    def _pose_target(self, node: Node, scope: Scope, default: Target) -> Target:
        reference = pose_reference(node.pose_element)
        return Ref(scope, reference, node.pose_element, node.pose_file) if reference else default

    def _named_node(self, item: etree._Element, kind: str, scope: Scope, document: Document) -> Node:
        name = _check_name(item.get("name"), item, document.file, document.version)
        pose_element = child(item, "pose", document.file)
        return Node(
            id=f"{kind}:{scope.prefix}{name}",
            name=scope.prefix + name,
            kind=kind,
            element=item,
            file=document.file,
            scope=scope,
            pose=pose_matrix(pose_element, document.file),
            pose_element=pose_element,
            pose_file=document.file,
        )

    def _declare_link(self, item: etree._Element, scope: Scope, document: Document) -> Node:
        node = self._named_node(item, "link", scope, document)
        node.relative_to = self._pose_target(node, scope, scope.frame)
        self.graph.add(node)
        self.links.append(node)
        return node

    def _declare_frame(self, item: etree._Element, scope: Scope, document: Document) -> Node:
        node = self._named_node(item, "frame", scope, document)
        attached = (item.get("attached_to") or "").strip()
        node.attached_to = Ref(scope, attached, item, document.file) if attached else scope.frame
        node.relative_to = self._pose_target(node, scope, node.attached_to)
        self.graph.add(node)
        if not scope.is_world:
            self.frames.append(node)
        return node

    def _declare_joint(self, item: etree._Element, scope: Scope, document: Document) -> None:
        file = document.file
        node = self._named_node(item, "joint", scope, document)
        joint_type = (item.get("type") or "").strip()
        if not joint_type:
            raise error_at(item, file, "missing joint type")
        if joint_type not in SUPPORTED_JOINTS:
            raise error_at(item, file, f"unknown joint type '{joint_type}' ({', '.join(SUPPORTED_JOINTS)})")
        references = {}
        for role in ("parent", "child"):
            name = child_text(item, role, file)
            if name is None:
                raise error_at(item, file, f"missing <{role}>")
            references[role] = Ref(scope, name, child(item, role, file), file)
        if references["child"].name == WORLD:
            raise error_at(references["child"].element, file, "the child of a joint cannot be the world")
        parent = None if references["parent"].name == WORLD else references["parent"]
        node.attached_to = references["child"]
        node.relative_to = self._pose_target(node, scope, references["child"])
        self.graph.add(node)
        self.joints.append(JointDeclaration(node=node, type=joint_type, parent=parent, child=references["child"]))

    def _declare_include(self, item: etree._Element, scope: Scope, document: Document) -> Node:
        file = document.file
        uri = child_text(item, "uri", file)
        if uri is None:
            raise error_at(item, file, "missing <uri>")
        path = self._include_file(uri, item, document)
        if path in self._includes:
            raise error_at(item, file, f"include cycle: '{path}' includes itself")
        if len(self._includes) >= _MAX_INCLUDE_DEPTH:
            raise error_at(item, file, f"includes nested deeper than {_MAX_INCLUDE_DEPTH}")
        included = load_xml(path)
        root = included.root
        warn_ignored(root, path)
        if root.tag == "sdf":
            version = parse_version(root, path)
            model = root.find("model")
        else:
            version, model = NEWEST_VERSION, root if root.tag == "model" else None
        if model is None:
            raise error_at(item, file, f"included file '{path}' has no <model>")
        merge_text = (item.get("merge") or "").strip().lower()
        merge = merge_text in ("true", "1")
        if merge and scope.is_world:
            raise error_at(item, file, 'merge="true" is only allowed inside a <model>')
        static_element = child(item, "static", file)
        include = _Include(
            element=item,
            file=file,
            name=child_text(item, "name", file),
            pose=child(item, "pose", file),
            static=boolean(static_element, file) if static_element is not None else None,
            placement=child_text(item, "placement_frame", file),
            merge=merge,
        )
        self._includes.append(path)
        try:
            return self.declare_model(model, scope, Document(path, os.path.dirname(path), version), include)
        finally:
            self._includes.pop()

    def _include_file(self, uri: str, item: etree._Element, document: Document) -> str:
        """The SDFormat file named by an ``<include><uri>`` (a file, or a model folder)."""
        resolved = resolve_uri(uri, document.directory)
        if resolved is None:
            raise error_at(item, document.file, f"cannot resolve include '{uri}'")
        if os.path.isdir(resolved):
            config = os.path.join(resolved, "model.config")
            if os.path.isfile(config):
                resolved = os.path.join(resolved, _config_entry(config))
            else:
                resolved = os.path.join(resolved, "model.sdf")
        if not os.path.isfile(resolved):
            raise error_at(item, document.file, f"include '{uri}': no such file '{resolved}'")
        return os.path.abspath(resolved)


def _config_entry(config: str) -> str:
    """The ``<sdf>`` file named in a ``model.config``: the newest supported version."""
    root = load_xml(config).root
    best: tuple[tuple[int, int], str] | None = None
    for entry in root.findall("sdf"):
        name = (entry.text or "").strip()
        text = (entry.get("version") or "").strip()
        try:
            version = tuple(int(part) for part in text.split(".")) if text else OLDEST_VERSION
        except ValueError:
            raise error_at(entry, config, f"malformed version '{text}'") from None
        if name and version <= NEWEST_VERSION and (best is None or version > best[0]):
            best = (version, name)
    if best is None:
        raise error_at(root, config, "no <sdf> entry of a supported version (1.4 to 1.11)")
    return best[1]
