"""SRDF (semantic robot description) parser, following srdfdom's ``srdf::Model``.

An SRDF adds meaning to a model: planning groups, named group states, end effectors,
virtual and passive joints, collision pairs to skip, sphere approximations of links and
free-form joint properties. Names are trimmed of surrounding whitespace, as srdfdom does.

Where srdfdom logs an error and skips an element, :func:`parse_srdf` raises
:class:`ModelLoadError` at that element (file, line, tag). References between SRDF
elements (subgroups, the group of a state or of an end effector) are always checked;
links and joints are checked when a :class:`ModelDescription` is given.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field

import numpy as np
from lxml import etree

from .description import JointDescription, ModelDescription, SourceLocation
from .errors import ModelLoadError
from .xml import error_at, load_xml, location

VIRTUAL_JOINT_TYPES = ("fixed", "floating", "planar")

# Values a group state gives per joint type, as MoveIt counts joint variables:
# planar x, y, theta; floating x, y, z and a quaternion (x, y, z, w).
_JOINT_VALUE_COUNTS = {"revolute": 1, "continuous": 1, "prismatic": 1, "fixed": 0, "planar": 3, "floating": 7}


@dataclass
class Group:
    """A planning group: joints, links, chains ``(base_link, tip_link)`` and included groups.

    A listed joint brings its child link, a listed link brings its parent joint, a chain
    brings the joints on the tree path between its two links; see :meth:`SRDF.group_joints`.
    """

    name: str
    joints: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    chains: list[tuple[str, str]] = field(default_factory=list)
    subgroups: list[str] = field(default_factory=list)
    location: SourceLocation = field(default_factory=SourceLocation)


@dataclass
class GroupState:
    """A named configuration of ``group``: joint name -> values (one per joint variable)."""

    name: str
    group: str
    joint_values: dict[str, list[float]] = field(default_factory=dict)
    location: SourceLocation = field(default_factory=SourceLocation)


@dataclass
class EndEffector:
    """An end effector made of ``component_group``, attached to ``parent_link``.

    ``parent_group`` (empty when not given) is the group that holds ``parent_link``.
    """

    name: str
    parent_link: str
    component_group: str
    parent_group: str = ""
    location: SourceLocation = field(default_factory=SourceLocation)


@dataclass
class VirtualJoint:
    """A joint not in the model: ``type`` fixed (0 DoF), planar (x, y, yaw) or floating (6 DoF)
    from the frame ``parent_frame`` (usually not a link, e.g. ``world``) to ``child_link``."""

    name: str
    type: str
    parent_frame: str
    child_link: str
    location: SourceLocation = field(default_factory=SourceLocation)


@dataclass
class CollisionPair:
    """Two links whose collision checking is disabled or re-enabled, and why."""

    link1: str
    link2: str
    reason: str = ""
    location: SourceLocation = field(default_factory=SourceLocation)


@dataclass
class Sphere:
    """A sphere: ``center: (3,)`` in the link frame [m] and ``radius`` [m]."""

    center: np.ndarray
    radius: float


@dataclass
class LinkSpheres:
    """The spheres approximating ``link``.

    As in srdfdom, spheres of zero radius are dropped when any sphere has a positive
    radius; when all are zero, a single zero sphere at the origin is kept, meaning the
    link takes no part in collision checking. An approximation without spheres is not
    kept (the link is then approximated by one sphere enclosing its collision shapes).
    """

    link: str
    spheres: list[Sphere] = field(default_factory=list)
    location: SourceLocation = field(default_factory=SourceLocation)


@dataclass
class SRDF:
    """The semantic description of robot ``name``.

    ``no_default_collision_links`` are links whose collisions are disabled with every
    link unless a pair in ``enabled_collision_pairs`` re-enables them; pairs in
    ``disabled_collision_pairs`` are always disabled. ``joint_properties`` maps a joint
    name to ``{property name: value}`` (values are strings, their type is unspecified).
    """

    name: str
    groups: list[Group] = field(default_factory=list)
    group_states: list[GroupState] = field(default_factory=list)
    end_effectors: list[EndEffector] = field(default_factory=list)
    virtual_joints: list[VirtualJoint] = field(default_factory=list)
    passive_joints: list[str] = field(default_factory=list)
    no_default_collision_links: list[str] = field(default_factory=list)
    disabled_collision_pairs: list[CollisionPair] = field(default_factory=list)
    enabled_collision_pairs: list[CollisionPair] = field(default_factory=list)
    link_sphere_approximations: list[LinkSpheres] = field(default_factory=list)
    joint_properties: dict[str, dict[str, str]] = field(default_factory=dict)
    source: str | None = None

    def group(self, name: str) -> Group:
        """The group called ``name`` (KeyError if none)."""
        for group in self.groups:
            if group.name == name:
                return group
        raise KeyError(name)

    def group_state(self, group: str, name: str) -> GroupState:
        """The state ``name`` of ``group`` (KeyError if none)."""
        for state in self.group_states:
            if state.group == group and state.name == name:
                return state
        raise KeyError((group, name))

    def group_joints(self, name: str, model: ModelDescription) -> list[str]:
        """All joints of group ``name`` in tree order (virtual joints before the model joints
        below their child link), with listed links, chains and subgroups expanded.

        A chain contributes the joints on the tree path from ``base_link`` to
        ``tip_link`` (up from the base to the common ancestor, then down to the tip).
        Raises KeyError for an unknown group, ModelLoadError for a subgroup cycle or a
        name the model does not have.
        """
        tree = _Tree(model, self.virtual_joints)
        joints, _ = self._collect(name, tree, ())
        return sorted(joints, key=tree.joint_key)

    def group_links(self, name: str, model: ModelDescription) -> list[str]:
        """All links of group ``name`` in tree order: the child links of its joints and
        the links it lists (itself or through subgroups)."""
        tree = _Tree(model, self.virtual_joints)
        joints, links = self._collect(name, tree, ())
        links = links | {tree.child_of(joint) for joint in joints}
        return sorted(links, key=tree.link_key)

    def collision_disabled(self, link_a: str, link_b: str) -> bool:
        """Whether collisions between ``link_a`` and ``link_b`` are not checked (symmetric).

        A disabled pair wins over an enabled pair, which wins over a link's default.
        """
        pair = {link_a, link_b}
        if any({p.link1, p.link2} == pair for p in self.disabled_collision_pairs):
            return True
        if any({p.link1, p.link2} == pair for p in self.enabled_collision_pairs):
            return False
        return link_a in self.no_default_collision_links or link_b in self.no_default_collision_links

    def _collect(self, name: str, tree: "_Tree", visiting: tuple[str, ...]) -> tuple[set[str], set[str]]:
        group = self.group(name)
        if name in visiting:
            cycle = " -> ".join((*visiting[visiting.index(name) :], name))
            raise _error_in(group, f"subgroups form a cycle: {cycle}")
        joints = set(group.joints)
        links = set(group.links)
        try:
            for joint in group.joints:
                tree.child_of(joint)
            for link in group.links:
                parent = tree.parent_joint(link)
                if parent is not None:
                    joints.add(parent)
            for base, tip in group.chains:
                joints.update(tree.path(base, tip))
        except ModelLoadError as error:
            raise _error_in(group, error.reason) from None
        for subgroup in group.subgroups:
            if not any(other.name == subgroup for other in self.groups):
                raise _error_in(group, f"subgroup '{subgroup}' is not defined")
            sub_joints, sub_links = self._collect(subgroup, tree, (*visiting, name))
            joints |= sub_joints
            links |= sub_links
        return joints, links


def _error_in(group: Group, message: str) -> ModelLoadError:
    where = group.location
    return ModelLoadError(message, file=where.file, line=where.line, element=where.element)


class _Tree:
    """Parent joints, tree order and paths of a model, with the SRDF's virtual joints."""

    def __init__(self, model: ModelDescription, virtual_joints: list[VirtualJoint]) -> None:
        self.joints: dict[str, JointDescription] = {joint.name: joint for joint in model.joints}
        self.virtual = {joint.name: joint for joint in virtual_joints}
        self.links = {link.name for link in model.links}
        self.parent: dict[str, JointDescription] = {joint.child: joint for joint in model.joints}
        self.order = {link: index for index, link in enumerate(self._preorder(model))}

    def _preorder(self, model: ModelDescription) -> list[str]:
        children: dict[str, list[str]] = {}
        for joint in model.joints:
            children.setdefault(joint.parent, []).append(joint.child)
        roots = [model.root] if model.root else []
        roots += [link.name for link in model.links if link.name not in self.parent and link.name not in roots]
        order: list[str] = []
        seen: set[str] = set()
        stack = list(reversed(roots))
        while stack:
            link = stack.pop()
            if link in seen:
                continue
            seen.add(link)
            order.append(link)
            stack.extend(reversed(children.get(link, [])))
        order += [link.name for link in model.links if link.name not in seen]
        return order

    def link_key(self, link: str) -> int:
        return self.order.get(link, len(self.order))

    def joint_key(self, joint: str) -> tuple[int, int]:
        return (self.link_key(self.child_of(joint)), 0 if joint in self.virtual else 1)

    def child_of(self, joint: str) -> str:
        if joint in self.virtual:
            return self.virtual[joint].child_link
        if joint in self.joints:
            return self.joints[joint].child
        raise ModelLoadError(f"joint '{joint}' is not in the model nor a virtual joint")

    def parent_joint(self, link: str) -> str | None:
        """The model joint whose child is ``link``, else a virtual joint attached to it."""
        if link not in self.links:
            raise ModelLoadError(f"link '{link}' is not in the model")
        if link in self.parent:
            return self.parent[link].name
        for joint in self.virtual.values():
            if joint.child_link == link:
                return joint.name
        return None

    def ancestors(self, link: str) -> list[str]:
        """``link`` and its ancestors up to the root, nearest first."""
        chain = [link]
        while chain[-1] in self.parent and len(chain) <= len(self.parent):
            chain.append(self.parent[chain[-1]].parent)
        return chain

    def path(self, base: str, tip: str) -> list[str]:
        """The joints on the tree path from ``base`` up to the common ancestor and down to ``tip``."""
        for link in (base, tip):
            if link not in self.links:
                raise ModelLoadError(f"link '{link}' is not in the model")
        up_from_tip = self.ancestors(tip)
        up_from_base = self.ancestors(base)
        common = next((link for link in up_from_base if link in up_from_tip), None)
        if common is None:
            raise ModelLoadError(f"links '{base}' and '{tip}' do not form a chain")
        below = up_from_base[: up_from_base.index(common)] + up_from_tip[: up_from_tip.index(common)]
        return [self.parent[link].name for link in below]


def parse_srdf(source: str | os.PathLike, model: ModelDescription | None = None) -> SRDF:
    """Parse an SRDF path or XML string; with ``model``, check every link and joint it names.

    Raises :class:`ModelLoadError` naming file, line and element for malformed input,
    a missing attribute, an unknown reference or a subgroup cycle.
    """
    xml = load_xml(source)
    root, file = xml.root, xml.file
    if root.tag != "robot":
        raise error_at(root, file, "an SRDF document has a <robot> root element")
    srdf = SRDF(name=_required(root, file, "name"), source=file)
    if model is not None and srdf.name != model.name:
        warnings.warn(f"SRDF is for robot '{srdf.name}', the model is '{model.name}'", stacklevel=2)
    reader = _Reader(srdf, file, model)
    for element in root.iterchildren("virtual_joint"):
        srdf.virtual_joints.append(reader.virtual_joint(element))
    reader.unique(srdf.virtual_joints, root.iterchildren("virtual_joint"), "virtual joint")
    for element in root.iterchildren("group"):
        srdf.groups.append(reader.group(element))
    reader.unique(srdf.groups, root.iterchildren("group"), "group")
    reader.check_subgroups(root)
    for element in root.iterchildren("group_state"):
        srdf.group_states.append(reader.group_state(element))
    for element in root.iterchildren("end_effector"):
        srdf.end_effectors.append(reader.end_effector(element))
    reader.unique(srdf.end_effectors, root.iterchildren("end_effector"), "end effector")
    for element in root.iterchildren("link_sphere_approximation"):
        spheres = reader.link_spheres(element)
        if spheres.spheres:
            srdf.link_sphere_approximations.append(spheres)
    for element in root.iterchildren("disable_default_collisions"):
        srdf.no_default_collision_links.append(reader.link(element, "link"))
    for element in root.iterchildren("enable_collisions"):
        srdf.enabled_collision_pairs.append(reader.collision_pair(element))
    for element in root.iterchildren("disable_collisions"):
        srdf.disabled_collision_pairs.append(reader.collision_pair(element))
    for element in root.iterchildren("passive_joint"):
        srdf.passive_joints.append(reader.joint(element, "name"))
    for element in root.iterchildren("joint_property"):
        joint = reader.joint(element, "joint_name")
        prop = _required(element, file, "property_name")
        value = element.get("value")
        if value is None:
            raise error_at(element, file, "missing attribute 'value'")
        srdf.joint_properties.setdefault(joint, {})[prop] = value
    return srdf


def _required(element: etree._Element, file: str | None, attribute: str) -> str:
    value = element.get(attribute)
    if value is None or not value.strip():
        raise error_at(element, file, f"missing attribute '{attribute}'")
    return value.strip()


def _floats(element: etree._Element, file: str | None, attribute: str) -> list[float]:
    text = _required(element, file, attribute)
    try:
        values = [float(token) for token in text.split()]
    except ValueError:
        raise error_at(element, file, f"attribute '{attribute}' is not a list of numbers: '{text}'") from None
    if not all(np.isfinite(values)):
        raise error_at(element, file, f"attribute '{attribute}' is not finite: '{text}'")
    return values


class _Reader:
    """Reads SRDF elements into records, checking references as it goes."""

    def __init__(self, srdf: SRDF, file: str | None, model: ModelDescription | None) -> None:
        self.srdf = srdf
        self.file = file
        self.model = model
        self.model_links = {link.name for link in model.links} if model is not None else set()
        self.model_joints = {joint.name: joint for joint in model.joints} if model is not None else {}

    def link(self, element: etree._Element, attribute: str) -> str:
        name = _required(element, self.file, attribute)
        if self.model is not None and name not in self.model_links:
            raise error_at(element, self.file, f"link '{name}' is not in model '{self.model.name}'")
        return name

    def joint(self, element: etree._Element, attribute: str) -> str:
        name = _required(element, self.file, attribute)
        virtual = {joint.name for joint in self.srdf.virtual_joints}
        if self.model is not None and name not in self.model_joints and name not in virtual:
            message = f"joint '{name}' is not in model '{self.model.name}' nor a virtual joint"
            raise error_at(element, self.file, message)
        return name

    def known_group(self, element: etree._Element, attribute: str) -> str:
        name = _required(element, self.file, attribute)
        if not any(group.name == name for group in self.srdf.groups):
            raise error_at(element, self.file, f"group '{name}' is not defined")
        return name

    def unique(self, records: list, elements, what: str) -> None:
        seen: set[str] = set()
        for record, element in zip(records, elements):
            if record.name in seen:
                raise error_at(element, self.file, f"{what} '{record.name}' is defined twice")
            seen.add(record.name)

    def virtual_joint(self, element: etree._Element) -> VirtualJoint:
        name = _required(element, self.file, "name")
        if name in self.model_joints:
            raise error_at(element, self.file, f"virtual joint '{name}' has the name of a model joint")
        kind = _required(element, self.file, "type").lower()
        if kind not in VIRTUAL_JOINT_TYPES:
            known = ", ".join(VIRTUAL_JOINT_TYPES)
            raise error_at(element, self.file, f"unknown virtual joint type '{kind}' (one of {known})")
        return VirtualJoint(
            name=name,
            type=kind,
            parent_frame=_required(element, self.file, "parent_frame"),
            child_link=self.link(element, "child_link"),
            location=location(element, self.file),
        )

    def group(self, element: etree._Element) -> Group:
        group = Group(name=_required(element, self.file, "name"), location=location(element, self.file))
        for child in element.iterchildren("link"):
            group.links.append(self.link(child, "name"))
        for child in element.iterchildren("joint"):
            group.joints.append(self.joint(child, "name"))
        for child in element.iterchildren("chain"):
            base = self.link(child, "base_link")
            tip = self.link(child, "tip_link")
            if self.model is not None:
                try:
                    _Tree(self.model, self.srdf.virtual_joints).path(base, tip)
                except ModelLoadError as error:
                    raise error_at(child, self.file, error.reason) from None
            group.chains.append((base, tip))
        for child in element.iterchildren("group"):
            group.subgroups.append(_required(child, self.file, "name"))
        return group

    def check_subgroups(self, root: etree._Element) -> None:
        elements = dict(zip((group.name for group in self.srdf.groups), root.iterchildren("group")))
        for group in self.srdf.groups:
            for child, subgroup in zip(elements[group.name].iterchildren("group"), group.subgroups):
                if subgroup not in elements:
                    raise error_at(child, self.file, f"subgroup '{subgroup}' of group '{group.name}' is not defined")
        for group in self.srdf.groups:
            self._check_acyclic(group.name, elements, ())

    def _check_acyclic(self, name: str, elements: dict[str, etree._Element], visiting: tuple[str, ...]) -> None:
        if name in visiting:
            cycle = " -> ".join((*visiting[visiting.index(name) :], name))
            raise error_at(elements[name], self.file, f"subgroups form a cycle: {cycle}")
        for subgroup in self.srdf.group(name).subgroups:
            self._check_acyclic(subgroup, elements, (*visiting, name))

    def group_state(self, element: etree._Element) -> GroupState:
        state = GroupState(
            name=_required(element, self.file, "name"),
            group=self.known_group(element, "group"),
            location=location(element, self.file),
        )
        if any(other.group == state.group and other.name == state.name for other in self.srdf.group_states):
            raise error_at(element, self.file, f"state '{state.name}' of group '{state.group}' is defined twice")
        members = set(self.srdf.group_joints(state.group, self.model)) if self.model is not None else None
        for child in element.iterchildren("joint"):
            joint = self.joint(child, "name")
            values = _floats(child, self.file, "value")
            if members is not None:
                if joint not in members:
                    raise error_at(child, self.file, f"joint '{joint}' is not in group '{state.group}'")
                kind = self.model_joints[joint].type if joint in self.model_joints else self._virtual_type(joint)
                expected = _JOINT_VALUE_COUNTS.get(kind)
                if expected is not None and len(values) != expected:
                    message = f"{kind} joint '{joint}' takes {expected} values, got {len(values)}"
                    raise error_at(child, self.file, message)
            state.joint_values[joint] = values
        return state

    def _virtual_type(self, name: str) -> str:
        return next(joint.type for joint in self.srdf.virtual_joints if joint.name == name)

    def end_effector(self, element: etree._Element) -> EndEffector:
        effector = EndEffector(
            name=_required(element, self.file, "name"),
            component_group=self.known_group(element, "group"),
            parent_link=self.link(element, "parent_link"),
            location=location(element, self.file),
        )
        if element.get("parent_group") is not None:
            effector.parent_group = self.known_group(element, "parent_group")
            if self.model is not None:
                links = self.srdf.group_links(effector.parent_group, self.model)
                if effector.parent_link not in links:
                    raise error_at(
                        element,
                        self.file,
                        f"parent group '{effector.parent_group}' does not hold parent link '{effector.parent_link}'",
                    )
        return effector

    def link_spheres(self, element: etree._Element) -> LinkSpheres:
        spheres = LinkSpheres(link=self.link(element, "link"), location=location(element, self.file))
        for child in element.iterchildren("sphere"):
            center = _floats(child, self.file, "center")
            if len(center) != 3:
                raise error_at(child, self.file, f"attribute 'center' needs 3 numbers, got {len(center)}")
            radius = _floats(child, self.file, "radius")
            if len(radius) != 1 or radius[0] < 0.0:
                raise error_at(child, self.file, "attribute 'radius' must be one non-negative number")
            spheres.spheres.append(Sphere(center=np.array(center), radius=radius[0]))
        positive = [sphere for sphere in spheres.spheres if sphere.radius > np.finfo(float).eps]
        if positive:
            spheres.spheres = positive
        elif spheres.spheres:
            spheres.spheres = [Sphere(center=np.zeros(3), radius=0.0)]
        return spheres

    def collision_pair(self, element: etree._Element) -> CollisionPair:
        return CollisionPair(
            link1=self.link(element, "link1"),
            link2=self.link(element, "link2"),
            reason=element.get("reason", ""),
            location=location(element, self.file),
        )
