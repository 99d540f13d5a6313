"""Which geoms of a compiled ``MjModel`` touch, as MuJoCo's collision filters say, as
:class:`CollisionRules` (numpy only).

MuJoCo tests two kinds of geom pairs:

- *dynamic* pairs, between geoms of different bodies: two geoms touch when ``contype_a &
  conaffinity_b`` or ``contype_b & conaffinity_a`` is non-zero, unless their bodies are welded
  together, their welds are parent and child (MuJoCo's ``filterparent``; the world excepted), or
  an ``<exclude body1 body2>`` names the two bodies;
- *explicit* pairs ``<contact><pair geom1 geom2>``, tested whatever the filters and excludes say
  (a dynamic pair equal to an explicit one is tested once, as the explicit one).

The world body's planes facing up (floors) are the terrain: a geom touches it when its filter
matches a floor's and no exclude names its body and the world, or when a pair names it and a
floor. Without a floor in the world body every geom touches the terrain; the world body's other
geoms (walls) are left out. Each geom brings its three friction coefficients (Coulomb,
torsional, rolling), ``margin``, ``gap``, ``condim`` and ``priority`` to its contacts, and the floor
its own (the first floor's: floors that differ warn); a contact without a pair takes the larger
margin and gap, and the friction and ``condim`` of the geom of higher priority, or the larger of
each (MuJoCo's rule), and has no friction at ``condim`` 1, torsional friction from ``condim`` 4
and rolling friction at 6 (:meth:`CollisionRules.surface`). A pair keeps its Coulomb friction
(the first of its five coefficients; none at ``condim`` 1), its torsional (the third, from
``condim`` 4) and rolling friction (the fourth, at 6), its ``margin`` and ``gap``, with the
floor too. A contact pushes within its margin; its gap acts
as in MuJoCo since 3.9 (it only widens which contacts MuJoCo reports, without force): not at
all. What the contact law here cannot represent warns, located at the ``<pair>``: an
anisotropic friction (the second coefficient differs from the first, or at ``condim`` 6 the
fifth from the fourth), the ``solref``, ``solreffriction`` and ``solimp`` of the
pair (the law here is sized from the bodies' masses). A pair with a world geom that is not a
floor warns and is ignored.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .description import TERRAIN, CollisionRules, ContactPair, SourceLocation
from .errors import warn

_PLANE = 0  # mjtGeom
_LAW = ("solref", "solreffriction", "solimp")  # <pair> attributes the law here does not read


def geom_label(reader, g: int) -> str:
    """The name of geom ``g`` as a collision: its own, else ``{body}_geom{g}``."""
    return reader.name("geom", g) or f"{reader.body(int(reader.m.geom_bodyid[g]))}_geom{g}"


def paired_geoms(m) -> set[int]:
    """The geoms an explicit pair names."""
    return {int(g) for g in np.concatenate([m.pair_geom1, m.pair_geom2])}


def touches_bodies(m, g: int) -> bool:
    """Whether geom ``g`` collides with a geom of another body (not the world's) by the filters
    (see :func:`matching`), or a pair names it."""
    if g in paired_geoms(m):
        return True
    contype, conaffinity, body = (np.asarray(values) for values in (m.geom_contype, m.geom_conaffinity, m.geom_bodyid))
    filtered = ((contype[g] & conaffinity) != 0) | ((contype & conaffinity[g]) != 0)
    return bool(np.any(filtered & (body != body[g]) & (body != 0)))


def floor_geoms(m) -> list[int]:
    """The world body's planes facing up (their z axis the world's): the terrain; walls are not."""
    def up(g: int) -> bool:
        _, x, y, _ = (float(v) for v in m.geom_quat[g])
        return 1.0 - 2.0 * (x * x + y * y) > 1.0 - 1e-9
    return [g for g in range(m.ngeom) if m.geom_bodyid[g] == 0 and m.geom_type[g] == _PLANE and up(g)]


def matching(m, g: int, h: int) -> bool:
    """Whether geoms ``g`` and ``h`` collide by MuJoCo's ``contype``/``conaffinity`` filter."""
    return bool(m.geom_contype[g] & m.geom_conaffinity[h] or m.geom_contype[h] & m.geom_conaffinity[g])


def _excluded(m) -> set[frozenset[int]]:
    """The body pairs of the excludes (MuJoCo's signature: ``body1 << 16 | body2``)."""
    return {frozenset((int(s) >> 16, int(s) & 0xFFFF)) for s in m.exclude_signature}


def _pair_elements(reader) -> dict[frozenset[str], object]:
    """The ``<pair>`` elements of the main file by their two geom names (MuJoCo sorts its pairs)."""
    elements = [child for section in reader.root.iter("contact") for child in section if child.tag == "pair"]
    return {frozenset((element.get("geom1"), element.get("geom2"))): element for element in elements}


def _pair_element(reader, p: int, elements: dict[frozenset[str], object]):
    """The ``<pair>`` element of pair ``p`` in the main file, or None."""
    names = frozenset(reader.name("geom", int(g)) for g in (reader.m.pair_geom1[p], reader.m.pair_geom2[p]))
    return elements.get(names)


def _pair_where(reader, element) -> SourceLocation:
    if element is None:
        line = reader.lines.get(("contact", None))
        return SourceLocation(file=reader.file, line=line, element="<contact>" if line is not None else "<mujoco>")
    return SourceLocation(file=reader.file, line=element.sourceline, element=f'<pair geom1="{element.get("geom1")}" geom2="{element.get("geom2")}">')


def warn_located(message: str, where: SourceLocation) -> None:
    """A :class:`ModelLoadWarning` of ``message`` at ``where``."""
    warn(message, file=where.file, line=where.line, element=where.element)


def _pair(reader, p: int, elements: dict[frozenset[str], object], floors: set[int]) -> ContactPair | None:
    """Explicit pair ``p`` as a :class:`ContactPair` (None, with a warning, when it is not represented)."""
    m = reader.m
    g1, g2 = int(m.pair_geom1[p]), int(m.pair_geom2[p])
    element = _pair_element(reader, p, elements)
    where = _pair_where(reader, element)
    labels = [TERRAIN if g in floors else geom_label(reader, g) for g in (g1, g2)]
    world = [g for g in (g1, g2) if m.geom_bodyid[g] == 0 and g not in floors]
    if world or (g1 in floors and g2 in floors):
        first, second = (element.get("geom1"), element.get("geom2")) if element is not None else map(partial(geom_label, reader), (g1, g2))
        warn_located(f"the contact pair of geoms '{first}' and '{second}' "
              "with a world geom other than the floor is not represented (the terrain's contacts take the floor's surface): ignored", where)
        return None
    friction = np.array(m.pair_friction[p], dtype=float)
    condim = int(m.pair_dim[p])
    if condim == 1:
        friction[:] = 0.0  # a frictionless pair
    if friction[1] != friction[0] and condim > 1:
        warn_located(f"the contact pair's anisotropic friction ({friction[0]:g}, {friction[1]:g}) is read as isotropic, {friction[0]:g}", where)
    if friction[4] != friction[3] and condim >= 6:
        warn_located(f"the contact pair's anisotropic rolling friction ({friction[3]:g}, {friction[4]:g}) is read as isotropic, "
              f"{friction[3]:g}", where)
    given = [name for name in _LAW if element is not None and element.get(name) is not None]
    if given:
        warn_located(f"the contact pair's {', '.join(given)} are not represented (the contact law here is sized from the bodies' masses): ignored", where)
    if g2 in floors:
        labels = labels[::-1]
    return ContactPair(labels[0], labels[1], float(friction[0]), float(m.pair_margin[p]), float(m.pair_gap[p]),
                       float(friction[2]) if condim >= 4 else 0.0, float(friction[3]) if condim >= 6 else 0.0, location=where)


def _welds(reader) -> tuple[tuple[str, int, int], ...]:
    """``(body, weld, weld parent)`` of every body but the world; weld parent -1 where
    ``<flag filterparent="disable">``."""
    m = reader.m
    off = bool(m.opt.disableflags & int(reader.mujoco.mjtDisableBit.mjDSBL_FILTERPARENT))
    weld = np.asarray(m.body_weldid, dtype=int)
    return tuple(
        (reader.body(b), int(weld[b]), -1 if off else int(weld[m.body_parentid[weld[b]]])) for b in range(1, m.nbody)
    )


def collision_rules(reader, kept: list[int]) -> CollisionRules:
    """The :class:`CollisionRules` of the geoms ``kept`` as collisions (see the module docstring)."""
    m = reader.m
    floors = set(floor_geoms(m))
    excluded = _excluded(m)
    elements = _pair_elements(reader)
    pairs = tuple(pair for p in range(m.npair) if (pair := _pair(reader, p, elements, floors)) is not None)
    terrain = None
    if floors:
        dynamic = {
            geom_label(reader, g) for g in kept
            if m.body_weldid[m.geom_bodyid[g]] != 0 and frozenset((int(m.geom_bodyid[g]), 0)) not in excluded
            and any(matching(m, g, f) for f in floors)
        }
        terrain = frozenset(dynamic | {pair.collision_b for pair in pairs if pair.collision_a == TERRAIN})
    return CollisionRules(
        filters=tuple(
            (geom_label(reader, g), int(m.geom_contype[g]), int(m.geom_conaffinity[g])) for g in kept
            if (m.geom_contype[g], m.geom_conaffinity[g]) != (1, 1)
        ),
        welds=_welds(reader),
        excludes=tuple(sorted((reader.body(a) if a else TERRAIN, reader.body(b) if b else TERRAIN) for a, b in map(sorted, excluded))),
        terrain=terrain,
        pairs=pairs,
        surfaces=tuple((geom_label(reader, g), *_surface(m, g)) for g in kept) + _floor_surface(reader, sorted(floors)),
    )


def _surface(m, g: int) -> tuple[float, float, float, int, int, float, float]:
    """Geom ``g``'s Coulomb friction (the first coefficient), margin, gap, contact dimension,
    priority, and torsional and rolling friction (the second and third coefficients)."""
    friction = m.geom_friction[g]
    return (float(friction[0]), float(m.geom_margin[g]), float(m.geom_gap[g]), int(m.geom_condim[g]), int(m.geom_priority[g]),
            float(friction[1]), float(friction[2]))


def _floor_surface(reader, floors: list[int]) -> tuple[tuple, ...]:
    """The terrain's surface, the first floor's (a warning, located at the first floor that
    differs, when floors differ: the terrain is one surface); none without a floor."""
    if not floors:
        return ()
    first = _surface(reader.m, floors[0])
    other = next((g for g in floors[1:] if _surface(reader.m, g) != first), None)
    if other is not None:
        name = reader.name("geom", other)
        where = reader.where("geom", name) if name else reader.where("body", reader.body(0))
        warn_located(f"the floors' friction, margin, gap, condim and priority differ: the terrain takes those of the first, "
              f"'{geom_label(reader, floors[0])}'", where)
    return ((TERRAIN, *first),)
