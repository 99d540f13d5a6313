"""The static pair table of a world: which shapes and points of which links may touch.

Candidates, built once in numpy from the models' structure (and their concrete collision
geometry, read once to tell which collidable points sample a solid shape):

- every link of a model against every link of every other model; within a model only when its
  self-collisions are on, skipping a link and itself, parent and child links, and the pairs the
  SRDF disables (by the description links the shapes and points came from:
  ``Model.shape_source`` and ``Model.point_source``; a link lumped into its parent by a fixed
  joint keeps its own name there, so SRDF pairs naming it hold for its shapes and points only);
- of models with :attr:`~...dynamics.model.Model.collision_rules` (MJCF), only the collisions
  those rules let touch (MuJoCo's ``contype``/``conaffinity`` filter, its parent filter on
  welded bodies in place of the parent-and-child rule, and the excludes, see
  :class:`~...parsers.description.CollisionRules`); the filter of a model without rules is
  ``contype = conaffinity = 1``, and excludes apply between models of one parsed file (the
  same rules object) only. Their explicit pairs (``rules.pairs``) are candidates whatever
  these rules and the self-collision switch say, but never within one link; a candidate of an
  explicit pair records it (:attr:`PairGroup.explicit`), and so does a dynamic candidate
  between two collisions whose rules give their surfaces (friction, margin and gap, see
  :meth:`~...parsers.description.CollisionRules.surface`; between models of different files,
  each collision's own by its model's rules), with the pair of the two surfaces combined
  (:attr:`CollisionTable.pairs`);
- for such a pair of links, every pair of their solid shapes (spheres, capsules, boxes,
  cylinders, hulls, ellipsoids: :data:`.kinds.SOLID`; a hull meets a cylinder as the prism on its rims,
  :func:`.hull.cylinder_hull`), and every collidable point of one link against every solid shape
  but a hull or an ellipsoid of the other unless the point (its ball, for a swept point: a sphere's centre point
  of its radius) lies on a solid shape of its own link whose narrow phase with that shape is
  complete (a box corner does not meet a box as a point; it does meet a cylinder, whose narrow
  phases against capsules, boxes and cylinders see only its side: :data:`.kinds.PARTIAL`), or on
  an ellipsoid of its own link (an exact ellipsoid's one point is its terrain contact only).
  Meshes that are not hulls and sampled ellipsoids thus touch solid shapes through their
  points; points never touch points.

Each pair kind keeps at most a static budget of candidates per call (those whose
bounding spheres overlap, in table order): by default one sized from the scene
(:func:`scene_budget`), unless ``budget`` says otherwise. The candidates with a link welded to
the world (static geometry: a table, a bin's walls, :mod:`..scenery`) follow those of the moving
links in their kind's group, culled into a budget of their own (:func:`static_budget`,
:attr:`PairGroup.static`): static geometry takes none of the moving bodies' budget.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import jax
import numpy as np

from ...dynamics.model import Model, topology
from ...dynamics.tree import BOX, CYLINDER, ELLIPSOID, HULL
from ...parsers.description import combined
from .hull import features, first_counts
from .kinds import HULL_ELLIPSOIDS, HULLS, KINDS, PARTIAL, POINT_CHUNK, POINTS, ROUND_HULLS, SOLID, fewest_resting, solid_kind
from .points import KIND_CODES

STATIC_NEIGHBOURS = 2
"""The default budget of a pair kind's candidates with a link welded to the world
(:func:`static_budget`): the static shapes that a moving shape or chunk of points meets at once
(two walls in a bin's corner; the floor is the terrain's)."""

NEIGHBOURS = 4
"""The default budget's bound (:func:`scene_budget`): the shapes of one kind whose bounding spheres
a shape or a chunk of points overlaps, on average over the members of a pair kind, in a dense
pile at rest (the measured margin: docs/benchmarks.md, "A pile in a bin")."""

_ON_SURFACE = 1e-9  # [m] relative to (1 + shape size): a point this close to a solid shape's surface samples it


@dataclasses.dataclass(frozen=True)
class PairGroup:
    """The candidate pairs of one kind: ``first[k]`` and ``second[k]`` are global shape indices; in
    the point-shape kind ``first`` holds :data:`.kinds.POINT_CHUNK` global point indices per
    candidate (``-1`` pads a chunk) and ``second`` the shape. ``keep`` candidates are tested per
    call. ``static``: of its candidates, the last ``static[0]`` have a link welded to the world
    (static geometry), ``static[1]`` of the ``keep`` are theirs (the others' budget is ``keep -
    static[1]``).
    ``explicit``: per candidate, its index in :attr:`CollisionTable.pairs` (``-1``: none; empty:
    no candidate is an explicit pair). ``features``: the contact features of a pair of hulls
    (:func:`.hull.features`; 0: the kind's own, :attr:`.kinds.Kind.memory`)."""

    kind: str
    first: tuple[int, ...]
    second: tuple[int, ...]
    keep: int
    explicit: tuple[int, ...] = ()
    features: int = 0
    static: tuple[int, int] = (0, 0)

    def __repr__(self) -> str:
        welded = f", static={self.static}" if self.static[0] else ""
        return f"PairGroup({self.kind!r}, candidates={self.candidates}, keep={self.keep}{welded})"

    @property
    def candidates(self) -> int:
        return len(self.second)

    @property
    def slots(self) -> int:
        """Contact slots this group fills: ``keep`` times the kind's slots per pair."""
        return self.keep * KINDS[self.kind].slots

    @property
    def memory(self) -> int:
        """Tangential memories kept per candidate pair (:attr:`.kinds.Kind.memory`)."""
        return self.features or KINDS[self.kind].memory


@dataclasses.dataclass(frozen=True)
class CollisionTable:
    """The static pair table of a world of models (a pytree without leaves: hashable, never traced).

    Global numbering: link ``l`` of model ``m`` is ``link_offsets[m] + l``; shapes and collidable
    points likewise with ``shape_offsets`` and ``point_offsets``. ``shape_link`` and ``point_link``
    give the global link of each global shape and point, ``shape_code`` each shape's kind code
    (:data:`.points.KIND_CODES`). ``groups`` hold the candidate pairs per kind, in slot order;
    ``links`` is the number of links of all models; ``pairs``, the explicit contact pairs that
    some candidate tests and the pairs of two collisions' surfaces
    (:class:`~...parsers.description.ContactPair`); ``hull_counts``, the ``(V, F, K, E)`` that the
    hulls of its pairs of hulls are padded to (:class:`.hull.HullData`); ``point_rests_on``, per
    global point, the :data:`.kinds.RESTS_ON` of the round shape whose swept point it is (a
    capsule's end balls: 2; 0: none); ``point_ring``, per global point, the global number of its
    ring of points on a cylinder's rim (:attr:`~...dynamics.model.Model.point_ring`; ``-1``: on no
    ring; empty: no point is on a ring), by which the query turns each ring once per pair.
    """

    link_offsets: tuple[int, ...]
    shape_offsets: tuple[int, ...]
    point_offsets: tuple[int, ...]
    shape_link: tuple[int, ...]
    point_link: tuple[int, ...]
    shape_code: tuple[int, ...]
    groups: tuple[PairGroup, ...]
    links: int
    pairs: tuple[Any, ...] = ()
    hull_counts: tuple[int, int, int, int] = (0, 0, 0, 0)
    point_rests_on: tuple[int, ...] = ()
    point_ring: tuple[int, ...] = ()

    def __repr__(self) -> str:
        return f"CollisionTable(models={len(self.link_offsets)}, slots={self.size}, groups={list(self.groups)})"

    def __hash__(self) -> int:
        # Computed once: jit hashes its static arguments at every call, and a world's table holds
        # thousands of indices (tens of microseconds a hash).
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(tuple(getattr(self, f.name) for f in dataclasses.fields(self)))
            object.__setattr__(self, "_hash", cached)
        return cached

    def counts(self, m: int) -> tuple[int, int, int]:
        """Links, shapes and collidable points of model ``m``."""
        def span(offsets: tuple[int, ...], total: int) -> int:
            return (offsets[m + 1] if m + 1 < len(offsets) else total) - offsets[m]

        return span(self.link_offsets, self.links), span(self.shape_offsets, len(self.shape_link)), span(
            self.point_offsets, len(self.point_link))

    @property
    def link_model(self) -> np.ndarray:
        """``(links,)``: the model of each global link."""
        return np.repeat(np.arange(len(self.link_offsets)), np.diff(np.append(self.link_offsets, self.links)))

    @property
    def candidate_slots(self) -> int:
        """The tangential memories of every candidate pair, culled or not (:attr:`.collide.Contacts.slot`)."""
        return sum(group.candidates * group.memory for group in self.groups)

    @property
    def explicit_slots(self) -> np.ndarray:
        """``(candidate_slots,)``: the explicit pair (index in :attr:`pairs`) of each candidate's
        tangential memories (:attr:`.collide.Contacts.slot`), ``-1`` for the dynamic ones."""
        marks = [np.repeat(np.asarray(group.explicit or (-1,) * group.candidates, dtype=np.int32), group.memory)
                 for group in self.groups]
        return np.concatenate(marks) if marks else np.zeros(0, np.int32)

    @property
    def size(self) -> int:
        """``C``: the number of contact slots :func:`.collide` returns."""
        return sum(group.slots for group in self.groups)

    @staticmethod
    def build(
        models: Sequence[Model],
        *,
        self_collision: Sequence[bool] | None = None,
        srdf: Sequence[Any | None] | None = None,
        budget: int | Mapping[str, int] | None = None,
        others: Sequence[np.ndarray | None] | None = None,
    ) -> "CollisionTable":
        """The table of ``models`` (concrete, not traced). ``self_collision[m]`` turns on the pairs
        within model ``m`` (default off); ``srdf[m]`` disables pairs of model ``m`` (default: the
        SRDF loaded with it); ``budget`` caps the pairs tested per call, one count for every kind
        or a mapping from kind name (:data:`.kinds.KINDS`) to count (the rest, and every kind when
        None, sized from the scene: :func:`scene_budget`); ``others[m] (N_m,)`` (bool): which links
        of model ``m`` meet the links of other models (None: every link).
        Explicit pairs naming a collision of no model here are left out. Two links welded to the
        world (a fixed base on a table) never move, and are no candidate pair unless an explicit
        pair names them, as Gazebo skips static links and MuJoCo the world body's geoms."""
        models = tuple(models)
        count = len(models)
        self_collision = (False,) * count if self_collision is None else tuple(bool(x) for x in self_collision)
        srdf = (None,) * count if srdf is None else tuple(srdf)
        others = (None,) * count if others is None else tuple(others)
        if len(self_collision) != count or len(srdf) != count or len(others) != count:
            raise ValueError(f"self_collision, srdf and others need one entry per model ({count}); "
                             f"got {len(self_collision)}, {len(srdf)} and {len(others)}")
        others = tuple(np.ones(model.number_of_links, bool) if on is None else np.asarray(on, bool) for model, on in zip(models, others))
        if any(on.shape != (model.number_of_links,) for model, on in zip(models, others)):
            raise ValueError(f"others[m] needs one entry per link of model m: {[model.number_of_links for model in models]}")
        welded = np.concatenate([welded_links(model) for model in models])
        budgets = pair_budgets(budget)
        semantics = [model.srdf if s is None else s for model, s in zip(models, srdf)]
        link_offsets = _offsets(model.number_of_links for model in models)
        shape_offsets = _offsets(len(model.shape_kind) for model in models)
        point_offsets = _offsets(len(model.point_link) for model in models)
        links = [_LinkGeometry.of(model, m, shape_offsets[m], point_offsets[m]) for m, model in enumerate(models)]
        pairs: dict[str, tuple[list[int], list[int], list[int]]] = {name: ([], [], []) for name in KINDS}
        marks: dict[Any, int] = {}  # a mark per distinct ContactPair (explicit, or two collisions' surfaces)
        explicit = _explicit_pairs(models)
        for (m_a, l_a, m_b, l_b), found in explicit.items():
            _link_pairs(links[m_a], l_a, links[m_b], l_b, _of_pairs(found, marks), pairs)
        flat = [(m, l) for m, model in enumerate(models) for l in range(model.number_of_links)]
        for i, (m_a, l_a) in enumerate(flat):
            for j, (m_b, l_b) in enumerate(flat[i + 1 :], i + 1):
                if (welded[i] and welded[j]) or (m_a != m_b and not (others[m_a][l_a] and others[m_b][l_b])):
                    continue
                rules = _shared_rules(models[m_a], models[m_b])
                if m_a == m_b and not (self_collision[m_a] and l_a != l_b and (rules is not None or _apart(models[m_a], l_a, l_b))):
                    continue
                found = explicit.get((m_a, l_a, m_b, l_b), {})
                disabled = _disabled(semantics[m_a]) if m_a == m_b else _never
                _link_pairs(links[m_a], l_a, links[m_b], l_b, _dynamic(models[m_a], models[m_b], rules, disabled, found, marks), pairs)
        by_mark = {k: pair for pair, k in marks.items()}
        used = list(dict.fromkeys(k for _, _, marked in pairs.values() for k in marked if k >= 0))
        renumber = {k: i for i, k in enumerate(used)}
        hull_counts = _hull_counts(models)
        hull_kinds = [name for name, candidates in pairs.items() if KINDS[name].family == HULLS and candidates[1]]
        firsts = first_counts(hull_kinds, hull_counts) if hull_kinds else None
        rests = {p: fewest_resting(sampled)
                 for link in links for points in link.points for p, _, sampled, _ in points}
        shape_kinds = [kind for model in models for kind in model.shape_kind]
        point_kinds = [" ".join(sorted({k for k, on in zip(model.shape_kind, model.shape_link) if on == link}))
                       for model in models for link in model.point_link]
        shape_welded = welded[[link_offsets[m] + l for m, model in enumerate(models) for l in model.shape_link]]
        point_welded = welded[[link_offsets[m] + l for m, model in enumerate(models) for l in model.point_link]]
        groups = []
        for name, candidates in pairs.items():
            moving, fixed = _split_static(name, candidates, shape_welded, point_welded)
            keep = min(len(moving[1]), budgets.get(name) or scene_budget(name, *moving[:2], shape_kinds, point_kinds)) if moving[1] else 0
            fixed_keep = min(len(fixed[1]), static_budget(name, *fixed[:2], shape_welded, point_welded))
            first, second, marked = (moving[i] + fixed[i] for i in range(3))
            if second:
                groups.append(PairGroup(name, tuple(first), tuple(second), keep + fixed_keep,
                                        tuple(renumber.get(k, -1) for k in marked) if any(k >= 0 for k in marked) else (),
                                        features(firsts, hull_counts) if KINDS[name].family == HULLS else 0, (len(fixed[1]), fixed_keep)))
        return CollisionTable(
            link_offsets=link_offsets[:-1],
            links=link_offsets[-1],
            shape_offsets=shape_offsets[:-1],
            point_offsets=point_offsets[:-1],
            shape_link=tuple(link_offsets[m] + l for m, model in enumerate(models) for l in model.shape_link),
            point_link=tuple(link_offsets[m] + l for m, model in enumerate(models) for l in model.point_link),
            shape_code=tuple(KIND_CODES[kind] for model in models for kind in model.shape_kind),
            groups=tuple(groups),
            pairs=tuple(by_mark[k] for k in used),
            hull_counts=hull_counts if any(KINDS[g.kind].family in (HULLS, ROUND_HULLS, HULL_ELLIPSOIDS) for g in groups) else (0, 0, 0, 0),
            point_rests_on=tuple(rests[p] for p in range(point_offsets[-1])),
            point_ring=_point_rings(models),
        )


# A pytree without leaves whose static part is the table itself: jit hashes it once (cached
# above) instead of hashing its index tuples at every call.
jax.tree_util.register_pytree_node(CollisionTable, lambda table: ((), table), lambda table, _: table)


def _point_rings(models: Sequence[Model]) -> tuple[int, ...]:
    """The global ring of every point of ``models`` (concrete), ``-1`` on none (empty: no ring)."""
    if all(model.ring_rim is None for model in models):
        return ()
    rings, offset = [], 0
    for model in models:
        if model.ring_rim is None:
            rings.append(np.full(len(model.point_link), -1))
            continue
        own = np.asarray(model.point_ring)
        rings.append(np.where(own > 0, own - 1 + offset, -1))
        offset += len(model.ring_rim) - 1
    return tuple(int(r) for r in np.concatenate(rings))


def _hull_counts(models: Sequence[Model]) -> tuple[int, int, int, int]:
    """The ``(V, F, K, E)`` of the models' hulls (the most of each)."""
    counts = np.max([model.shape_hulls.counts for model in models] + [(0, 0, 0, 0)], axis=0)
    return tuple(int(c) for c in counts)


def welded_links(model: Model) -> np.ndarray:
    """``(N,)`` (bool): the links of ``model`` welded to the world: of a fixed base, those that no
    joint moves (its root link and what fixed joints lumped into it)."""
    if model.floating_base:
        return np.zeros(model.number_of_links, bool)
    return ~topology(model.parent, model.joint_link).support.any(axis=1)


def scene_budget(kind: str, first: Sequence[int], second: Sequence[int], shape_kind: Sequence[str], point_kind: Sequence[str]) -> int:
    """The default budget of the pair kind ``kind`` (:data:`.kinds.KINDS`) of candidates ``first``
    and ``second`` (global shape indices; ``first`` of the point-shape kind: :data:`.kinds.POINT_CHUNK`
    point indices per candidate), from the kind of each shape ``shape_kind`` and of each collidable
    point ``point_kind`` (that of its link's shapes; global orders): :data:`NEIGHBOURS` overlaps per
    member of the kind's smaller side, a member counted once per kind it meets on the other side
    (two shapes of one kind: per shape, each pair counted once). It grows with the bodies of the
    scene, not with their pairs."""
    if kind == POINTS:
        chunks = [tuple(first[k : k + POINT_CHUNK]) for k in range(0, len(first), POINT_CHUNK)]
        by_chunk = set(zip(chunks, (shape_kind[s] for s in second)))
        by_shape = set(zip(second, (point_kind[c[0]] for c in chunks)))
        return NEIGHBOURS * min(len(by_chunk), len(by_shape))
    if kind.split("-")[0] == kind.split("-")[1]:
        return NEIGHBOURS * -(-len(set(first) | set(second)) // 2)
    return NEIGHBOURS * min(len(set(first)), len(set(second)))


def static_budget(kind: str, first: Sequence[int], second: Sequence[int], shape_welded: np.ndarray, point_welded: np.ndarray) -> int:
    """The default budget of the candidates of the pair kind ``kind`` with a link welded to the
    world (``first`` and ``second`` as in :func:`scene_budget`; ``shape_welded`` and
    ``point_welded``: per global shape and point, whether its link is): :data:`STATIC_NEIGHBOURS`
    per moving shape or chunk of points among them."""
    moving = set()
    for k, shape in enumerate(second):
        if kind == POINTS:
            chunk = tuple(first[k * POINT_CHUNK : (k + 1) * POINT_CHUNK])
            moving.add(("shape", shape) if point_welded[chunk[0]] else ("points", chunk))
        else:
            moving.add(shape if shape_welded[first[k]] else first[k])
    return STATIC_NEIGHBOURS * len(moving)


def _split_static(kind: str, candidates: tuple[list[int], list[int], list[int]], shape_welded: np.ndarray,
                  point_welded: np.ndarray) -> tuple[tuple[list[int], list[int], list[int]], tuple[list[int], list[int], list[int]]]:
    """The ``(first, second, marked)`` candidates of the pair kind ``kind`` (as
    :meth:`CollisionTable.build` gathers them) split into those between moving links and those
    with a link welded to the world (``shape_welded``, ``point_welded``: per global shape and point)."""
    first, second, marked = candidates
    width = POINT_CHUNK if kind == POINTS else 1
    parts: tuple[tuple[list[int], list[int], list[int]], ...] = (([], [], []), ([], [], []))
    for k, shape in enumerate(second):
        own = first[k * width : (k + 1) * width]
        welded = bool(shape_welded[shape]) or bool((point_welded if kind == POINTS else shape_welded)[own[0]])
        target = parts[int(welded)]
        target[0].extend(own)
        target[1].append(shape)
        target[2].append(marked[k])
    return parts


def pair_budgets(budget: int | Mapping[str, int] | None) -> dict[str, int]:
    """The budgets ``budget`` gives per pair kind (the kinds it leaves out: none); ValueError
    naming an unknown pair kind or a budget that is not an integer >= 1."""
    if budget is None:
        return {}
    if isinstance(budget, Mapping):
        unknown = set(budget) - set(KINDS)
        if unknown:
            raise ValueError(f"budget names unknown pair kinds {sorted(unknown)}; the kinds are {list(KINDS)}")
        values = dict(budget)
    else:
        values = {name: budget for name in KINDS}
    for name, value in values.items():
        if not (isinstance(value, (int, np.integer)) and value >= 1):
            raise ValueError(f"budget of {name!r} must be an integer >= 1, got {value!r}")
    return {name: int(value) for name, value in values.items()}


def _offsets(sizes) -> tuple[int, ...]:
    return tuple(int(x) for x in np.concatenate([[0], np.cumsum(list(sizes), dtype=int)]))


def _apart(model: Model, a: int, b: int) -> bool:
    """Links ``a`` and ``b`` are neither one link nor parent and child."""
    return a != b and model.parent[a] != b and model.parent[b] != a


def _never(source_a: str, source_b: str) -> bool:
    return False


def _shared_rules(model_a: Model, model_b: Model) -> Any:
    """The collision rules that hold between two models: a model's own, those of the models of
    one parsed file (one rules object), else None."""
    rules = model_a.collision_rules
    return rules if rules is not None and rules is model_b.collision_rules else None


def _filter(model: Model, collision: str) -> tuple[int, int]:
    """``(contype, conaffinity)`` of a model's collision: by its rules, else ``(1, 1)``."""
    rules = model.collision_rules
    return (1, 1) if rules is None else rules.filter(collision)


def _explicit_pairs(models: Sequence[Model]) -> dict[tuple[int, int, int, int], dict[tuple[str, str], Any]]:
    """The explicit pairs of the models' rules between two links (not the terrain's), by
    ``(model_a, link_a, model_b, link_b)`` in table order and then by the two collision names
    (both orders). A pair names collisions of the models sharing its rules object."""
    found: dict[tuple[int, int, int, int], dict[tuple[str, str], Any]] = {}
    done: set[int] = set()
    for model in models:
        rules = model.collision_rules
        if rules is None or id(rules) in done:
            continue
        done.add(id(rules))
        owners: dict[str, list[tuple[int, int]]] = {}
        for m, other in enumerate(models):
            if other.collision_rules is rules:
                for collision, link in (*zip(other.shape_collision, other.shape_link), *zip(other.point_collision, other.point_link)):
                    if collision and (m, link) not in owners.setdefault(collision, []):
                        owners[collision].append((m, link))
        for pair in rules.pairs:
            for a in owners.get(pair.collision_a, []):
                for b in owners.get(pair.collision_b, []):
                    if a != b:
                        key = (*a, *b) if a < b else (*b, *a)
                        found.setdefault(key, {}).update({(pair.collision_a, pair.collision_b): pair, (pair.collision_b, pair.collision_a): pair})
    return found


def _mark(pair: Any, marks: dict[Any, int]) -> int:
    """The mark (``>= 0``) of ``pair`` in ``marks``: one per distinct pair."""
    return marks.setdefault(pair, len(marks))


def _of_pairs(found: dict[tuple[str, str], Any], marks: dict[Any, int]):
    """The predicate of the candidates of explicit pairs ``found``: the pair's mark, else None."""
    def touch(source_a: str, collision_a: str, source_b: str, collision_b: str):
        pair = found.get((collision_a, collision_b))
        return None if pair is None else _mark(pair, marks)

    return touch


def _own(model: Model, collision: str) -> tuple | None:
    """A model's collision's own surface by its rules (:meth:`~...parsers.description.CollisionRules.own`), else None."""
    return None if model.collision_rules is None or not collision else model.collision_rules.own(collision)


def _dynamic(model_a: Model, model_b: Model, rules: Any, disabled, found: dict[tuple[str, str], Any], marks: dict[Any, int]):
    """The predicate of the dynamic candidates between two models' collisions: the ``rules``
    they share (else each one's filter), the SRDF's ``disabled`` pairs; the explicit pairs
    ``found`` are left to their own candidates. Returns -1 (a dynamic candidate), the mark of
    the pair of the two collisions' surfaces where they both have one (``rules.surface``, or
    between models of different files each collision's own by its model's rules, combined as
    MuJoCo combines geoms, or by the two files' own friction rule where they share one (Gazebo's,
    Bullet's): :func:`~...parsers.description.combined`), or None."""
    def touch(source_a: str, collision_a: str, source_b: str, collision_b: str):
        if (collision_a, collision_b) in found or disabled(source_a, source_b):
            return None
        if rules is not None:
            if not rules.touch(source_a, collision_a, source_b, collision_b):
                return None
            surface = rules.surface(collision_a, collision_b) if collision_a and collision_b else None
            return -1 if surface is None else _mark(surface, marks)
        (type_a, affinity_a), (type_b, affinity_b) = _filter(model_a, collision_a), _filter(model_b, collision_b)
        if not (type_a & affinity_b or type_b & affinity_a):
            return None
        rule_a, rule_b = (m.collision_rules.friction_rule if m.collision_rules is not None else "larger" for m in (model_a, model_b))
        surface = combined(collision_a, _own(model_a, collision_a), collision_b, _own(model_b, collision_b), rule_a if rule_a == rule_b else "larger")
        return -1 if surface is None else _mark(surface, marks)

    return touch


def _disabled(srdf: Any):
    if srdf is None:
        return _never
    return srdf.collision_disabled


@dataclasses.dataclass(frozen=True)
class _LinkGeometry:
    """Per link of one model: its shapes ``(global index, kind, source, collision)`` and points
    ``(global index, source, kinds of the solid shapes of its own link it samples, collision)``."""

    shapes: list[list[tuple[int, str, str, str]]]
    points: list[list[tuple[int, str, frozenset[str], str]]]

    @staticmethod
    def of(model: Model, m: int, shape_offset: int, point_offset: int) -> "_LinkGeometry":
        try:
            transforms, sizes = np.asarray(model.shape_transform), np.asarray(model.shape_size)
            points, radii = np.asarray(model.collidable_points), np.asarray(model.point_radius)
            planes = np.asarray(model.shape_hulls.planes)
        except jax.errors.TracerArrayConversionError:
            raise ValueError(f"CollisionTable.build needs concrete models; model {m} ({model.name!r}) is traced") from None
        shape_collision = model.shape_collision or ("",) * len(model.shape_kind)
        point_collision = model.point_collision or ("",) * len(model.point_link)
        shapes: list[list[tuple[int, str, str, str]]] = [[] for _ in range(model.number_of_links)]
        for s, (link, kind, source) in enumerate(zip(model.shape_link, model.shape_kind, model.shape_source)):
            shapes[link].append((shape_offset + s, kind, source, shape_collision[s]))
        per_link: list[list[tuple[int, str, frozenset[str], str]]] = [[] for _ in range(model.number_of_links)]
        for p, (link, source) in enumerate(zip(model.point_link, model.point_source)):
            sampled = frozenset(
                model.shape_kind[s]
                for s in range(len(model.shape_kind))
                if model.shape_link[s] == link and model.shape_kind[s] in SOLID
                and _on_surface(points[p], radii[p], model.shape_kind[s], transforms[s], sizes[s], planes[s] if planes.size else None)
            )
            per_link[link].append((point_offset + p, source, sampled, point_collision[p]))
        return _LinkGeometry(shapes, per_link)


def _on_surface(point: np.ndarray, radius: float, kind: str, L_H_S: np.ndarray, size: np.ndarray, planes: np.ndarray | None) -> bool:
    """The ball of ``radius`` around ``point (3,)`` (link frame) touches the surface of the solid
    shape from inside (a corner: lies on it; a sphere's or a capsule's swept point: the shape's
    own; a hull's by its face ``planes (F, 4)``; numpy)."""
    p = L_H_S[:3, :3].T @ (point - L_H_S[:3, 3])
    if kind == HULL:
        distance = np.max(planes[:, :3] @ p - planes[:, 3])
    elif kind == ELLIPSOID:
        distance = (np.linalg.norm(p / size) - 1.0) * np.min(size)
    elif kind == BOX:
        outside = np.linalg.norm(np.maximum(np.abs(p) - size, 0.0))
        distance = outside if outside > 0 else -np.min(size - np.abs(p))
    elif kind == CYLINDER:
        side, cap = np.hypot(p[0], p[1]) - size[0], abs(p[2]) - size[1]
        distance = np.hypot(max(side, 0.0), max(cap, 0.0)) if max(side, cap) > 0 else max(side, cap)
    else:
        distance = np.linalg.norm(p - np.array([0.0, 0.0, np.clip(p[2], -size[1], size[1])])) - size[0]
    return abs(distance + radius) <= _ON_SURFACE * (1.0 + np.max(size))


def _complete(kind_a: str, kind_b: str) -> bool:
    """Two solid kinds have a narrow phase that sees all of both shapes."""
    rank = {kind: r for r, kind in enumerate(SOLID)}
    first, second = sorted((kind_a, kind_b), key=rank.__getitem__)
    return solid_kind(first, second) in KINDS and solid_kind(first, second) not in PARTIAL


def _link_pairs(
    geometry_a: _LinkGeometry, a: int, geometry_b: _LinkGeometry, b: int, touch, pairs: dict[str, tuple[list[int], list[int], list[int]]]
) -> None:
    """Append the candidate pairs of links ``a`` (of ``geometry_a``) and ``b`` to ``pairs``, those
    of collisions that ``touch(source_a, collision_a, source_b, collision_b)`` marks (not None):
    each candidate with its mark."""
    rank = {kind: r for r, kind in enumerate(SOLID)}
    for s_a, kind_a, source_a, collision_a in geometry_a.shapes[a]:
        for s_b, kind_b, source_b, collision_b in geometry_b.shapes[b]:
            if kind_a not in rank or kind_b not in rank:
                continue
            first, second = ((s_a, kind_a), (s_b, kind_b)) if rank[kind_a] <= rank[kind_b] else ((s_b, kind_b), (s_a, kind_a))
            if solid_kind(first[1], second[1]) not in KINDS:
                continue
            mark = touch(source_a, collision_a, source_b, collision_b)
            if mark is None:
                continue
            group = pairs[solid_kind(first[1], second[1])]
            group[0].append(first[0])
            group[1].append(second[0])
            group[2].append(mark)
    for points, shapes in ((geometry_a.points[a], geometry_b.shapes[b]), (geometry_b.points[b], geometry_a.shapes[a])):
        for s, kind, source_s, collision_s in shapes:
            if kind in (HULL, ELLIPSOID):
                continue
            marked: dict[Any, list[int]] = {}
            for p, source_p, sampled, collision_p in points:
                mark = touch(source_p, collision_p, source_s, collision_s)
                if mark is not None and ELLIPSOID not in sampled and not any(_complete(own, kind) for own in sampled):
                    marked.setdefault(mark, []).append(p)
            for mark, meeting in marked.items():
                for start in range(0, len(meeting), POINT_CHUNK):
                    chunk = meeting[start : start + POINT_CHUNK]
                    pairs[POINTS][0].extend(chunk + [-1] * (POINT_CHUNK - len(chunk)))
                    pairs[POINTS][1].append(s)
                    pairs[POINTS][2].append(mark)
