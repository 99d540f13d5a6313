"""MJCF collision filters, ``<contact><exclude>`` and ``<pair>`` in the collision table (issue 31):
the geom pairs in contact here are MuJoCo's (``mj_collision``'s ``d.contact.geom``), and a pair's
friction and margin act.

One hand-written file of four free bodies and a hinged child: ``contype``/``conaffinity`` masks
that match and that do not, a geom of each mask on one body, an exclude, a child against its
parent (MuJoCo's parent filter), an explicit pair between a child and its parent, an explicit
pair of a geom that collides with nothing else (``contype = conaffinity = 0``) with another body
(with its own friction and margin) and with the floor (the terrain). At random poses (MuJoCo's
body poses: the check is of the table and the narrow phases, not of the kinematics) the pairs
deeper than a tolerance agree both ways; every rule decides at least once. One compiled query
for the module, and one compiled rollout of a scene of pairs against ``mj_step``.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.model import build_model
from jaxsim_like.loading import ContactSampling
from jaxsim_like.parsers import ModelLoadWarning, parse_mjcf_world
from jaxsim_like.parsers.description import TERRAIN
from jaxsim_like.simulation.collision import KINDS, CollisionTable, ExplicitPairs, Geometry, query
from jaxsim_like.simulation.collision.kinds import POINT_CHUNK, POINTS
from jaxsim_like.simulation.world import WorldModel, world_rollout

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

SCENE = """<mujoco model="rules">
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="a" pos="0 0 0.1"><freejoint/>
      <geom name="a_ball" size="0.1"/>
      <geom name="a_arm" type="capsule" fromto="0.12 0 0 0.3 0 0" size="0.04" contype="2" conaffinity="2"/>
    </body>
    <body name="b" pos="0 0 0.3"><freejoint/>
      <geom name="b_box" type="box" size="0.1 0.08 0.06"/>
      <body name="c" pos="0 0 0.13"><joint name="hinge" type="hinge" axis="0 1 0"/>
        <geom name="c_ball" size="0.09" contype="2" conaffinity="1"/>
      </body>
    </body>
    <body name="d" pos="0.4 0 0.1"><freejoint/>
      <geom name="d_ball" size="0.1" contype="0" conaffinity="0"/>
      <geom name="d_box" type="box" pos="0 0 0.14" size="0.05 0.05 0.04" contype="4" conaffinity="6"/>
    </body>
    <body name="e" pos="-0.3 0 0.1"><freejoint/>
      <geom name="e_capsule" type="capsule" fromto="-0.1 0 0 0.1 0 0" size="0.06"/>
    </body>
  </worldbody>
  <contact>
    <exclude body1="a" body2="e"/>
    <pair geom1="c_ball" geom2="b_box"/>
    <pair geom1="d_ball" geom2="a_ball" friction="0.3 0.3" margin="0.01"/>
    <pair geom1="floor" geom2="d_ball"/>
  </contact>
</mujoco>"""
TOLERANCE = 1e-3  # [m]: pairs deeper than this agree both ways; shallower ones may differ by rounding
STATES = 40


def world_of(source):
    """The models of every tree of ``source`` and their table (self-collisions on, every candidate kept)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelLoadWarning)
        models = [build_model(d, collidable_points=ContactSampling().points) for d in parse_mjcf_world(source).models]
    return models, CollisionTable.build(models, self_collision=[True] * len(models), budget=10**6)


def memory_owners(table: CollisionTable) -> list[tuple[str, int, int]]:
    """Per candidate memory (:attr:`.collide.Contacts.slot`): ``(kind, first, second)``, ``first``
    a point (kind ``"p"``) or a shape, ``second`` a shape (global indices)."""
    owners = []
    for group in table.groups:
        memory = KINDS[group.kind].memory
        for c in range(group.candidates):
            for f in range(memory):
                if group.kind == POINTS:
                    owners.append(("p", group.first[c * POINT_CHUNK + f], group.second[c]))
                else:
                    owners.append(("s", group.first[c], group.second[c]))
    return owners


def link_poses(m, d, models) -> np.ndarray:
    """``(L, 4, 4)``: every link's pose from MuJoCo's body poses (links named as their bodies;
    the massless links of a body's joints at the origin: they carry no geometry)."""
    poses = []
    for model in models:
        H = np.tile(np.eye(4), (model.number_of_links, 1, 1))
        for i, name in enumerate(model.link_names):
            b = 0 if name == "world" else mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
            if b >= 0:
                H[i, :3, :3], H[i, :3, 3] = d.xmat[b].reshape(3, 3), d.xpos[b]
        poses.append(H)
    return np.concatenate(poses)


class Ours:
    """The geom pairs in contact here at MuJoCo's body poses: the table's (one compiled query)
    and the terrain's (points of the links the default parameters let touch it below z = 0)."""

    def __init__(self, source):
        self.models, self.table = world_of(source)
        self.owners = memory_owners(self.table)
        self.shapes = [c for model in self.models for c in model.shape_collision]
        self.points = [c for model in self.models for c in model.point_collision]
        self.point_link = np.concatenate([np.asarray(model.point_link, int) + offset
                                          for model, offset in zip(self.models, self.table.link_offsets)])
        self.terrain = np.concatenate([  # per point: the terrain switch of the step
            np.asarray(js.SimulationParams.build(model).contact_enabled)[np.asarray(model.point_link, int)] & (np.asarray(model.point_terrain) > 0)
            for model in self.models])
        geometry = Geometry.of(self.models, jnp.float64)
        margin = ExplicitPairs.of(self.table).memory_margin(self.table, jnp.float64)
        self.query = jax.jit(lambda poses: query(self.table, geometry, poses, margin)[0])

    def pairs(self, poses: np.ndarray, tolerance: float) -> set[frozenset[str]]:
        found = set()
        contacts = self.query(jnp.asarray(poses))
        for slot, depth in zip(np.asarray(contacts.slot), np.where(contacts.active, contacts.depth, -np.inf)):
            if depth > tolerance:
                kind, first, second = self.owners[int(slot)]
                found.add(frozenset(((self.points if kind == "p" else self.shapes)[first], self.shapes[second])))
        points = np.concatenate([np.asarray(model.collidable_points) for model in self.models])
        radius = np.concatenate([np.asarray(model.point_radius) for model in self.models])
        H = poses[self.point_link]
        z = np.einsum("pj,pj->p", H[:, 2, :3], points) + H[:, 2, 3] - radius
        for k in np.flatnonzero(self.terrain & (z < -tolerance)):
            found.add(frozenset(("floor", self.points[k])))
        return found


def mujoco_pairs(m, d, tolerance: float) -> set[frozenset[str]]:
    """MuJoCo's geom pairs deeper than ``tolerance`` (by their distance less the pair's margin)."""
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in range(m.ngeom)]
    return {frozenset(names[g] for g in contact.geom) for contact in d.contact if contact.dist - contact.includemargin < -tolerance}


def random_poses(m, count: int, seed: int = 0):
    """MuJoCo's data at ``count`` random poses: the free bodies within 0.5 m of the origin, at
    most 0.25 m high, randomly turned; the hinge anywhere."""
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(m)
    for _ in range(count):
        for j in range(m.njnt):
            a = m.jnt_qposadr[j]
            if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                d.qpos[a : a + 3] = rng.uniform([-0.25, -0.1, 0.0], [0.25, 0.1, 0.25])
                quaternion = rng.normal(size=4)
                d.qpos[a + 3 : a + 7] = quaternion / np.linalg.norm(quaternion)
            else:
                d.qpos[a] = rng.uniform(-np.pi, np.pi)
        mujoco.mj_forward(m, d)
        yield d


@pytest.fixture(scope="module")
def scene():
    return mujoco.MjModel.from_xml_string(SCENE), Ours(SCENE)


def test_the_geom_pairs_in_contact_are_mujocos(scene, figures):
    m, ours = scene
    seen: set[frozenset[str]] = set()
    for d in random_poses(m, STATES):
        poses = link_poses(m, d, ours.models)
        theirs = mujoco_pairs(m, d, TOLERANCE)
        assert theirs <= ours.pairs(poses, 0.0)  # MuJoCo's deep pairs are ours
        assert ours.pairs(poses, TOLERANCE) <= mujoco_pairs(m, d, 0.0)  # ours deep pairs are MuJoCo's
        seen |= theirs
    # Every rule decided: pairs that touch by the masks, by an explicit pair (with the floor too).
    assert {frozenset(p) for p in [("a_ball", "b_box"), ("a_arm", "c_ball"), ("c_ball", "b_box"), ("d_ball", "a_ball"),
                                   ("floor", "d_ball"), ("floor", "a_ball"), ("d_box", "a_arm"), ("b_box", "e_capsule")]} <= seen
    figures("MJCF contact rules: geom pairs in contact, ours = MuJoCo's (40 poses)", len(seen))


def test_what_never_touches_has_no_candidate(scene):
    """The masks that do not match, the exclude and the parent filter leave no candidate between
    those geoms; the explicit pair between two bodies is one with its friction and margin; the
    terrain touches the points of the geoms whose masks match the floor's and the paired one."""
    _, ours = scene
    candidates = {frozenset(((ours.points if kind == "p" else ours.shapes)[first], ours.shapes[second]))
                  for kind, first, second in ours.owners}
    for blocked in [("a_arm", "b_box"), ("d_box", "a_ball"), ("d_box", "b_box"), ("a_ball", "e_capsule"), ("a_arm", "e_capsule"),
                    ("d_ball", "b_box"), ("d_ball", "e_capsule"), ("d_box", "e_capsule")]:
        assert frozenset(blocked) not in candidates, blocked
    for allowed in [("a_ball", "b_box"), ("a_arm", "c_ball"), ("c_ball", "b_box"), ("d_ball", "a_ball"), ("d_box", "a_arm"),
                    ("c_ball", "a_ball"), ("d_box", "c_ball"), ("e_capsule", "c_ball")]:
        assert frozenset(allowed) in candidates, allowed
    rules = ours.models[0].collision_rules
    explicit = {frozenset((p.collision_a, p.collision_b)): (p.friction, p.margin) for p in ours.table.pairs if p in rules.pairs}
    assert explicit == {frozenset(("a_ball", "d_ball")): (0.3, 0.01), frozenset(("b_box", "c_ball")): (1.0, 0.0)}
    # The other candidates between geoms carry the two geoms' surfaces combined: MuJoCo's defaults here.
    assert {(p.friction, p.margin, p.gap) for p in ours.table.pairs if p not in rules.pairs} == {(1.0, 0.0, 0.0)}
    assert {ours.points[k] for k in np.flatnonzero(ours.terrain)} == {"a_ball", "b_box", "c_ball", "d_ball", "e_capsule"}


def test_what_a_pair_cannot_say_here_warns_located():
    """A pair's anisotropic friction (tangential, and rolling at condim 6), solref and solimp, a
    pair with a world geom that is not the floor and floors of different surfaces warn, each at
    its line; the pair still loads with its first friction coefficient, and its torsional and
    rolling ones (condim 6). A geom's condim 4 no longer warns: its contacts carry its torsional
    friction. A pair with the floor keeps its friction, and geoms their margins."""
    xml = """<mujoco>
<worldbody><geom name="floor" type="plane" size="1 1 0.1"/><geom name="wall" type="box" pos="1 0 0" size="0.1 1 1"/>
<geom name="ice" type="plane" pos="3 0 0" size="1 1 0.1" friction="0.05"/>
<body name="a"><freejoint/><geom name="a" size="0.1" margin="0.002"/></body>
<body name="b" pos="0.5 0 0"><freejoint/><geom name="b" size="0.1" condim="4"/></body></worldbody>
<contact>
<pair geom1="a" geom2="b" condim="6" friction="0.4 0.2 0.01 0.001 0.002" solref="0.01 1" solimp="0.9 0.95 0.001"/>
<pair geom1="a" geom2="wall"/>
<pair geom1="b" geom2="floor" friction="0.8 0.8"/>
</contact></mujoco>"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (model,) = parse_mjcf_world(xml).models[:1]
    found = sorted((w.message.line, w.message.reason) for w in caught if issubclass(w.category, ModelLoadWarning))
    assert found == sorted([
        (7, "the contact pair's anisotropic rolling friction (0.001, 0.002) is read as isotropic, 0.001"),
        (7, "the contact pair's anisotropic friction (0.4, 0.2) is read as isotropic, 0.4"),
        (7, "the contact pair's solref, solimp are not represented (the contact law here is sized from the bodies' masses): ignored"),
        (8, "the contact pair of geoms 'a' and 'wall' with a world geom other than the floor is not represented (the terrain's "
            "contacts take the floor's surface): ignored"),
        (3, "the floors' friction, margin, gap, condim and priority differ: the terrain takes those of the first, 'floor'"),
    ])
    rules = model.collision_rules
    assert sorted((p.collision_a, p.collision_b, p.friction, p.torsion, p.rolling) for p in rules.pairs) == [
        ("", "b", 0.8, 0.0, 0.0), ("a", "b", 0.4, 0.01, 0.001)]
    # The pair's torsion; geom a's condim 3 with the floor's: none.
    assert (rules.surface("a", "b").torsion, rules.surface("a", TERRAIN).torsion) == (0.01, 0.0)
    assert rules.terrain == {"a", "b"}
    assert rules.surface("b", TERRAIN).friction == 0.8 and rules.surface("a", TERRAIN).margin == 0.002


ROLLOUT = """<mujoco model="pairs">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="table" pos="0.5 0 0.1"><geom name="table" type="box" size="0.4 0.3 0.1" friction="0.3"/></body>
    <body name="ghost" pos="0 -0.5 0.3"><freejoint/><geom name="ghost" size="0.05" mass="0.5" contype="0" conaffinity="0"/></body>
    <body name="ball" pos="0.5 0.15 0.4"><freejoint/><geom name="ball" size="0.05" mass="0.5" contype="2" conaffinity="2"/></body>
    <body name="sinker" pos="0 0.5 0.3"><freejoint/><geom name="sinker" size="0.05" mass="0.5" contype="2" conaffinity="2"/></body>
    <body name="grippy" pos="0.3 -0.15 0.2399"><freejoint/><geom name="grippy" type="box" size="0.04 0.04 0.04" mass="0.3" friction="0.3"/></body>
    <body name="slippy" pos="0.3 0 0.2399"><freejoint/><geom name="slippy" type="box" size="0.04 0.04 0.04" mass="0.3" friction="0.1"/></body>
  </worldbody>
  <contact>
    <pair geom1="ghost" geom2="floor"/>
    <pair geom1="ball" geom2="table" margin="0.01"/>
    <pair geom1="grippy" geom2="table" friction="0.6 0.6"/>
  </contact>
</mujoco>"""
SPEED = 0.8  # [m/s]: the two boxes' start, along x on the table
ROLLOUT_TIME = 0.6  # [s]


def test_a_scene_of_pairs_moves_as_in_mujoco(figures):
    """``ghost`` (collides with nothing) rests on the floor through its pair; ``ball`` rests on the
    table through a pair with a 1 cm margin; ``sinker`` (masks that match nothing) falls through
    everything; two boxes resting on the table slide from 0.8 m/s and stop, ``grippy`` after
    ``v^2 / (2 g 0.6)`` (its pair's friction), ``slippy`` after ``v^2 / (2 g 0.3)`` (the larger
    of its geom's 0.1 and the table's 0.3, MuJoCo's rule). 0.6 s at 2 ms, MuJoCo's Euler and the implicit step
    here; the contact laws differ (MuJoCo's soft constraints), so the distances are reported and
    bounded at 1 mm."""
    m = mujoco.MjModel.from_xml_string(ROLLOUT)
    d = mujoco.MjData(m)
    boxes = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name) for name in ("grippy", "slippy")]
    for b in boxes:
        d.qvel[m.jnt_dofadr[m.body_jntadr[b]]] = SPEED
    steps = int(round(ROLLOUT_TIME / m.opt.timestep))
    for _ in range(steps):
        mujoco.mj_step(m, d)
    mujoco.mj_kinematics(m, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelLoadWarning)
        world_description = parse_mjcf_world(ROLLOUT)
    models = [build_model(x, collidable_points=ContactSampling().points) for x in world_description.models]
    world = WorldModel.build(models, dt=float(m.opt.timestep), gravity=world_description.gravity)
    states = [js.State.build(model, base_velocity=[SPEED, 0, 0, 0, 0, 0] if model.name in ("grippy", "slippy") else None)
              if model.floating_base else js.State.build(model) for model in models]
    final = jax.jit(lambda s: world_rollout(world, s, None, steps)[0])(world.initial_state(states))
    ours = {model.name: np.asarray(state.base_position) for model, state in zip(models, final.states) if model.floating_base}
    distance = {name: float(np.linalg.norm(position - d.xpos[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)]))
                for name, position in ours.items()}
    for name, value in distance.items():
        figures(f"MJCF pairs rollout 0.6 s vs mj_step: {name} distance", value, "m")
    assert ours["ghost"][2] == pytest.approx(0.05, abs=1.5e-3)
    assert ours["ball"][2] == pytest.approx(0.2 + 0.05 + 0.01, abs=1e-3)
    assert ours["sinker"][2] < -1.0 and distance["sinker"] < 1e-9  # the same free fall
    slid = {name: ours[name][0] - 0.3 for name in ("grippy", "slippy")}
    assert slid["grippy"] == pytest.approx(SPEED**2 / (2 * 9.81 * 0.6), rel=0.1)
    assert slid["slippy"] == pytest.approx(SPEED**2 / (2 * 9.81 * 0.3), rel=0.1)
    assert max(distance.values()) < 1e-3


def test_the_single_model_self_collisions_follow_the_rules():
    """``SimulationParams.build(self_collision=True)``'s pairs follow the rules too: an arm on two
    hinges (a massless link between it and the base) does not touch the base (MuJoCo's parent
    filter), a hand whose mask matches nothing touches nothing; the arm and the leg touch."""
    xml = """<mujoco><worldbody><body name="base"><freejoint/><geom name="base" type="box" size="0.1 0.1 0.1"/>
<body name="arm" pos="0.3 0 0"><joint type="hinge" axis="0 0 1"/><joint type="hinge" axis="0 1 0"/><geom name="arm" size="0.05"/>
<body name="hand" pos="0.2 0 0"><joint type="hinge" axis="0 0 1"/><geom name="hand" size="0.05" contype="2" conaffinity="2"/></body></body>
<body name="leg" pos="0 0 -0.3"><joint type="hinge"/><geom name="leg" size="0.05"/></body></body></worldbody></mujoco>"""
    model = js.load_model(xml)
    table = js.SimulationParams.build(model, self_collision=True).collisions.table
    found = {frozenset((model.shape_collision[a], model.shape_collision[b])) for g in table.groups for a, b in zip(g.first, g.second)}
    assert [g.kind for g in table.groups] == ["sphere-sphere"] and found == {frozenset(("arm", "leg"))}
