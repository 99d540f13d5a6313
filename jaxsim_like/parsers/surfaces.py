"""Surface friction of SDF and URDF collisions, as the :class:`CollisionRules` MJCF files carry.

SDF: a ``<collision>``'s ``<surface><friction><ode><mu>`` (what Gazebo's physics engines read; the
``<bullet>`` and ``<torsional>`` coefficients are not read). URDF: the ``<mu1>`` of a ``<gazebo
reference="link">`` extension, for every collision of that link (what sdformat's URDF to SDF
conversion writes into their ``ode/mu``), else PyBullet's ``<link><contact><lateral_friction
value>`` (its rolling and spinning friction, stiffness and damping are not read). The friction
cone is isotropic here: a second coefficient (``<mu2>``) that differs warns, located, and ``mu``
is used. Only an explicit coefficient counts (Gazebo's default of 1 for an ``<ode>`` without
``<mu>`` is not applied): a collision without one keeps the contact law's friction. A plane's is
not read, in either format (a plane is the terrain, whose law is the simulation's: Gazebo's
stock ground plane gives ``mu`` 100 and ``mu2`` 50, and PyBullet's ``plane.urdf`` a lateral
friction of 1, neutral under their engines' rules).

SDF collisions' ``<surface><contact><collide_bitmask>`` and ``<category_bitmask>`` are the
filters of Gazebo's engines (DART, Bullet): two collisions touch when ``category_a & collide_b``
or ``category_b & collide_a`` is non-zero, MuJoCo's rule with the category as ``contype`` and
the collide bitmask as ``conaffinity``; a collision without them has ``0xffff`` for both, and the
ground touches every collision with a bit set. Between models the rule holds with each model's
own masks: the models of one world without bitmasks get ``0xffff`` where another has some
(:func:`with_world_bitmasks`); a model loaded alone without them has no rules, and counts as
``1, 1``, MuJoCo's default, against the masks of others.

A file whose collisions carry friction or bitmasks gets :class:`CollisionRules` with those
surfaces (margin and gap 0, contact dimension 3, priority 0) and filters, the friction rule of the engine the file was written
for (``friction_rule``: the smaller of two collisions' friction, as Gazebo combines surfaces, or
their product, as Bullet does, for PyBullet's extension) and the parent filter on its links
welded by fixed joints (links of one weld, or of welds that are parent and child, never touch:
the rule of a model without rules). The rules name collisions, so collisions sharing a name
across links are named ``link::name`` in such a file.
"""

from __future__ import annotations

import dataclasses
import math

from lxml import etree

from .description import CollisionRules, ModelDescription
from .xml import describe, error_at, warn_at

GAZEBO_BITMASK = 0xFFFF
"""SDF's default ``collide_bitmask``: a collision without one touches every other that has a bit."""


def _child(parent: etree._Element | None, tag: str, file: str | None) -> etree._Element | None:
    """The single ``<tag>`` child of ``parent`` (None when absent or ``parent`` is None); a
    located error for several."""
    found = [] if parent is None else parent.findall(tag)
    if len(found) > 1:
        raise error_at(found[1], file, f"several <{tag}> elements in {describe(parent)}")
    return found[0] if found else None


def _coefficient(element: etree._Element | None, file: str | None) -> float | None:
    """The non-negative number of ``element``: its ``value`` attribute where it has one (as
    sdformat reads URDF's extensions, and PyBullet its ``<contact>``), else its text (None when
    ``element`` is absent); a located error otherwise."""
    if element is None:
        return None
    text = (element.get("value", element.text) or "").strip()
    try:
        value = float(text)
    except ValueError:
        raise error_at(element, file, f"a friction coefficient must be a number, got '{text}'") from None
    if not math.isfinite(value) or value < 0:
        raise error_at(element, file, f"a friction coefficient must be a finite number >= 0, got {value:g}")
    return value


def _isotropic(mu: float | None, mu2: float | None, element: etree._Element, file: str | None, names: tuple[str, str]) -> float | None:
    """``mu``, with a located warning where ``mu2`` differs or comes without it."""
    if mu2 is not None and mu2 != mu:
        what = f"{names[1]}={mu2:g} without {names[0]}: not read" if mu is None else (
            f"{names[1]}={mu2:g} differs from {names[0]}={mu:g}: the friction cone is isotropic here, {names[0]} is used")
        warn_at(element, file, what)
    return mu


def sdf_friction(collision: etree._Element, file: str | None) -> float | None:
    """The Coulomb friction of an SDF ``<collision>``: its ``<surface><friction><ode><mu>``, else None."""
    ode = _child(_child(_child(collision, "surface", file), "friction", file), "ode", file)
    if ode is None:
        return None
    mu, mu2 = (_coefficient(_child(ode, tag, file), file) for tag in ("mu", "mu2"))
    return _isotropic(mu, mu2, ode, file, ("mu", "mu2"))


def sdf_bitmasks(collision: etree._Element, file: str | None) -> tuple[int, int] | None:
    """``(category, collide)`` of an SDF ``<collision>``'s ``<surface><contact>``: its
    ``<collide_bitmask>`` and ``<category_bitmask>`` (which defaults to the collide one, as
    Gazebo's engines read it; the collide one to :data:`GAZEBO_BITMASK`), else None."""
    contact = _child(_child(collision, "surface", file), "contact", file)
    collide, category = (_bitmask(_child(contact, tag, file), file) for tag in ("collide_bitmask", "category_bitmask"))
    if collide is None and category is None:
        return None
    collide = GAZEBO_BITMASK if collide is None else collide
    return (collide if category is None else category), collide


def _bitmask(element: etree._Element | None, file: str | None) -> int | None:
    """The unsigned 16-bit number of ``element`` (decimal or ``0x`` hexadecimal), None when absent."""
    if element is None:
        return None
    text = (element.text or "").strip()
    try:
        value = int(text, 0)
    except ValueError:
        raise error_at(element, file, f"a bitmask must be an integer (decimal or 0x hexadecimal), got '{text}'") from None
    if not 0 <= value <= GAZEBO_BITMASK:
        raise error_at(element, file, f"a bitmask must be within 0 and 0xffff, got {text}")
    return value


def urdf_friction(robot: etree._Element, file: str | None, links: set[str]) -> tuple[dict[str, float], str]:
    """The Coulomb friction per link name of a URDF ``<robot>`` and how two such combine
    (:data:`~.description.FRICTION_RULES`): the ``<mu1>`` of its ``<gazebo reference>`` extensions
    (the last extension of a link that gives one wins, as sdformat merges them; Gazebo's rule,
    ``"smaller"``), else a link's ``<contact><lateral_friction value>`` (PyBullet's extension;
    Bullet's rule, ``"product"``, where no link has a ``<mu1>``). A ``<gazebo>`` naming none of
    ``links`` warns, located."""
    found: dict[str, float] = {}
    for gazebo in robot.findall("gazebo"):
        reference = (gazebo.get("reference") or "").strip()
        mu1, mu2 = (_coefficient(_child(gazebo, tag, file), file) for tag in ("mu1", "mu2"))
        mu = _isotropic(mu1, mu2, gazebo, file, ("mu1", "mu2"))
        if reference and mu is not None:
            if reference in links:
                found[reference] = mu
            else:
                warn_at(gazebo, file, f"mu1 of '{reference}', which is not a link of the robot: not read")
    lateral: dict[str, float] = {}
    for link in robot.findall("link"):
        element = _child(_child(link, "contact", file), "lateral_friction", file)
        if element is not None:
            lateral[link.get("name", "")] = _coefficient(element, file)
    if found:
        return {**lateral, **found}, "smaller"
    return lateral, "product" if lateral else "smaller"


def _welds(description: ModelDescription) -> tuple[tuple[str, int, int], ...]:
    """``(link, weld, weld_parent)`` per link: links joined by fixed joints share a weld (numbered
    from 1, so that none is MuJoCo's world weld 0), ``weld_parent`` the weld of the weld's parent."""
    children: dict[str, list[tuple[str, bool]]] = {}
    for joint in description.joints:
        children.setdefault(joint.parent, []).append((joint.child, joint.type == "fixed"))
    welds: dict[str, tuple[int, int]] = {}
    count = 0
    for start in ([description.root] if description.root else []) + [link.name for link in description.links]:
        if start in welds:
            continue
        count += 1
        welds[start], stack = (count, -1), [start]
        while stack:
            parent = stack.pop()
            for name, fixed in children.get(parent, []):
                if name not in welds:
                    if not fixed:
                        count += 1
                    welds[name] = welds[parent] if fixed else (count, welds[parent][0])
                    stack.append(name)
    return tuple((name, weld, parent) for name, (weld, parent) in welds.items())


def with_world_bitmasks(models: list[ModelDescription]) -> list[ModelDescription]:
    """The models of one SDF world, those without bitmasks given Gazebo's default ones
    (``0xffff``) for every collision where another model has bitmasks, so that between them the
    rule is Gazebo's, not that of a model without rules (see the module docstring)."""
    if not any(m.collision_rules is not None and m.collision_rules.filters for m in models):
        return models
    return [m if m.collision_rules is not None and m.collision_rules.filters else _gazebo_filters(m) for m in models]


def _gazebo_filters(description: ModelDescription) -> ModelDescription:
    """``description`` with every collision's filter Gazebo's default (its rules kept)."""
    if description.collision_rules is None:
        marked = [dataclasses.replace(link, collisions=[dataclasses.replace(c, bitmasks=(GAZEBO_BITMASK, GAZEBO_BITMASK))
                                                        for c in link.collisions]) for link in description.links]
        return with_surfaces(description.replace(links=marked))
    names = [c.name for link in description.links for c in link.collisions]
    rules = dataclasses.replace(description.collision_rules, filters=tuple((name, GAZEBO_BITMASK, GAZEBO_BITMASK) for name in names))
    return description.replace(collision_rules=rules)


def with_surfaces(description: ModelDescription, rule: str = "smaller") -> ModelDescription:
    """``description`` with :class:`CollisionRules` of its collisions' friction, combined by
    ``rule``, and their bitmasks (see the module docstring); unchanged when it has rules already
    or no collision carries friction or bitmasks."""
    collisions = [c for link in description.links for c in link.collisions]
    if description.collision_rules is not None or all(c.friction is None and c.bitmasks is None for c in collisions):
        return description
    counts: dict[str, int] = {}
    for c in collisions:
        counts[c.name] = counts.get(c.name, 0) + 1
    links = [
        dataclasses.replace(link, collisions=[
            dataclasses.replace(c, name=f"{link.name}::{c.name}") if counts[c.name] > 1 else c for c in link.collisions
        ])
        for link in description.links
    ]
    named = [c for link in links for c in link.collisions]
    surfaces = tuple((c.name, c.friction, 0.0, 0.0, 3, 0) for c in named if c.friction is not None)
    filters, terrain = (), None
    if any(c.bitmasks is not None for c in collisions):
        masks = {c.name: c.bitmasks or (GAZEBO_BITMASK, GAZEBO_BITMASK) for c in named}
        filters = tuple((name, category, collide) for name, (category, collide) in masks.items())
        # The ground (a plane without bitmasks) touches every collision that has a bit.
        terrain = frozenset(name for name, (category, collide) in masks.items() if category or collide)
    rules = CollisionRules(filters=filters, welds=_welds(description), terrain=terrain, surfaces=surfaces, friction_rule=rule)
    return description.replace(links=links, collision_rules=rules)
