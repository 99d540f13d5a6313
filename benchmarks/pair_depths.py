"""How deep the narrow phase finds two shapes that touch, against a bracket of their true penetration.

    python -m benchmarks.pair_depths [--kinds cylinder-cylinder,box-cylinder] [--poses 400] [--seed 0] [--mujoco]

The shapes are :mod:`benchmarks.pile`'s bodies (a 6 cm box, a sphere of 3 cm radius, a capsule of
2 cm radius and 6 cm segment, a cylinder of 3 cm radius and 6 cm length, the convex rock), each
pair kind of them at ``--poses`` random poses (both turned at random, b's centre at a random
direction and distance from a's) whose penetration lies between 0.2 and 5 mm: what resting and
sliding bodies press into each other. The penetration depth of two convex shapes (the shortest
translation that separates them) is bracketed, in float64, by
- below: the deepest point of either shape inside the other (a point that deep inside keeps the
  two overlapping under any shorter translation), over a dense sample of each shape's surface
  and interior, and
- above: the least overlap of the two along a direction, over a dense sample of directions
  refined twice around the best (the overlap along any direction is at least the depth).

Printed per kind: the bracket's median width, and how often the contacts of our collision query
(:func:`jaxsim_like.simulation.collision.query` of the two, every slot and collidable point) fall
below the bracket by more than 0.5 mm and 1 mm, and by how much at most: the sum of their depths
(a slot that lies within a radius of another is shallower by what that one carries, so that the
force does not jump as they meet, :func:`jaxsim_like.simulation.collision.box.end_fades`: their
sum is at least the deepest slot's own depth) is less than the two overlap (a touching pair the
narrow phase finds too shallow or misses: the bodies rest that much deeper into each other than
the contact law holds them); and how often the deepest slot lies above the bracket by more than
0.5 mm (too deep).
``--mujoco``: the same for MuJoCo C's collision (``mj_collision``, the most negative
``contact.dist``) of the same shapes at the same poses (not for the rock: MuJoCo moves a mesh to
its centre of volume and principal axes).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("JAX_ENABLE_X64", "1")

import numpy as np  # noqa: E402

from jaxsim_like.parsers.shapes import fibonacci_sphere  # noqa: E402

SHAPES = ("sphere", "capsule", "box", "cylinder", "rock")
LOWEST, DEEPEST = 2e-4, 5e-3  # [m] the bracket's lower end of the poses kept
_DIRECTIONS = 6000  # directions of the first sample of the least overlap
_REFINED = 400  # directions of each refinement, around each of the best few
_BEST = 6


class Shape:
    """A shape in its own frame: ``points (P, 3)`` sampling its surface and interior, ``inside(x)``
    how deep points ``(..., 3)`` lie inside it [m] (negative outside), ``support(n)`` its extent
    along directions ``(..., 3)`` [m]."""

    def __init__(self, kind: str):
        from benchmarks import pile

        self.kind = kind
        spread = np.linspace(-1, 1, 13)
        grid = np.stack(np.meshgrid(spread, spread, spread), axis=-1).reshape(-1, 3)
        sphere = fibonacci_sphere(3000)
        if kind == "sphere":
            r = 0.03
            self.points = np.concatenate([r * sphere, r * grid[np.linalg.norm(grid, axis=1) <= 1]])
            self.inside = lambda x: r - np.linalg.norm(x, axis=-1)
            self.support = lambda n: np.full(n.shape[:-1], r)
        elif kind in ("capsule", "cylinder"):
            r, h = (0.02, 0.03) if kind == "capsule" else (0.03, 0.03)
            turn = np.linspace(0, 2 * np.pi, 90, endpoint=False)
            along = np.linspace(-h, h, 61)
            side = np.stack([np.repeat(r * np.cos(turn)[None], len(along), 0), np.repeat(r * np.sin(turn)[None], len(along), 0),
                             np.repeat(along[:, None], len(turn), 1)], axis=-1).reshape(-1, 3)
            core = grid * np.array([r, r, h])
            core = core[np.hypot(core[:, 0], core[:, 1]) <= r]
            if kind == "capsule":
                ends = np.concatenate([r * sphere + [0, 0, h], r * sphere - [0, 0, h]])
                self.points = np.concatenate([side, ends, core])
                self.inside = lambda x: r - np.linalg.norm(x - np.clip(x[..., 2:], -h, h) * [0, 0, 1], axis=-1)
                self.support = lambda n: h * np.abs(n[..., 2]) + r
            else:
                radii = r * np.sqrt(np.linspace(0, 1, 16))
                disc = np.stack([np.outer(radii, np.cos(turn)).ravel(), np.outer(radii, np.sin(turn)).ravel()], axis=-1)
                caps = np.concatenate([np.concatenate([disc, np.full((len(disc), 1), z)], axis=1) for z in (-h, h)])
                self.points = np.concatenate([side, caps, core])
                self.inside = lambda x: np.minimum(r - np.hypot(x[..., 0], x[..., 1]), h - np.abs(x[..., 2]))
                self.support = lambda n: h * np.abs(n[..., 2]) + r * np.sqrt(np.maximum(1 - n[..., 2] ** 2, 0.0))
        elif kind == "box":
            half = np.full(3, 0.03)
            face = np.stack(np.meshgrid(np.linspace(-1, 1, 41), np.linspace(-1, 1, 41)), axis=-1).reshape(-1, 2)
            faces = [np.insert(face, axis, sign, axis=1) for axis in range(3) for sign in (-1.0, 1.0)]
            self.points = np.concatenate(faces + [grid]) * half
            self.inside = lambda x: np.min(half - np.abs(x), axis=-1)
            self.support = lambda n: np.abs(n) @ half
        elif kind == "rock":
            import jaxsim_like as js

            model = self.model()
            vertices = np.asarray(model.shape_hulls.vertices[0])
            planes = np.asarray(model.shape_hulls.planes[0])
            faces = np.asarray(model.shape_hulls.faces[0])  # (F, K, 3): each face's corners (padding repeats)
            weights = np.random.default_rng(0).dirichlet(np.ones(3), 200)
            surface = np.concatenate([vertices] + [weights @ corners[:3] for corners in faces])
            centre = vertices.mean(axis=0)
            self.points = np.concatenate([centre + t * (surface - centre) for t in np.linspace(0.3, 1.0, 8)])
            self.inside = lambda x: np.min(planes[:, 3] - x @ planes[:, :3].T, axis=-1)
            self.support = lambda n: np.max(n @ vertices.T, axis=-1)
        else:
            raise ValueError(f"no shape {kind!r}; the shapes are {', '.join(SHAPES)}")

    def model(self):
        """This shape as a free one-link model (the pile's body)."""
        import jaxsim_like as js
        from benchmarks import pile

        return js.load_model(f'<robot name="{self.kind}"><link name="link"><inertial><mass value="{pile.MASS}"/><inertia '
                             f'ixx="{pile._inertia(self.kind)}" iyy="{pile._inertia(self.kind)}" izz="{pile._inertia(self.kind)}" '
                             f'ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry>{pile._urdf_geometry(self.kind)}'
                             "</geometry></collision></link></robot>")


def _rotation(rng: np.random.Generator) -> np.ndarray:
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def below(a: Shape, b: Shape, R_a: np.ndarray, R_b: np.ndarray, offset: np.ndarray) -> float:
    """The deepest sampled point of either shape inside the other [m] (a at the origin turned by
    ``R_a``, b at ``offset`` turned by ``R_b``)."""
    a_in_b = b.inside((a.points @ R_a.T - offset) @ R_b)
    b_in_a = a.inside((b.points @ R_b.T + offset) @ R_a)
    return float(max(a_in_b.max(), b_in_a.max()))


def above(a: Shape, b: Shape, R_a: np.ndarray, R_b: np.ndarray, offset: np.ndarray) -> float:
    """The least overlap [m] of the two along a sampled direction, refined twice around the best."""

    def overlap(n: np.ndarray) -> np.ndarray:  # n from b towards a
        return b.support(n @ R_b) + a.support(-n @ R_a) + n @ offset

    n = fibonacci_sphere(_DIRECTIONS)
    around = fibonacci_sphere(_REFINED)
    for spread in (0.06, 0.006):
        best = n[np.argsort(overlap(n))[:_BEST]]
        tangential = around[None] - np.einsum("pi,ki->kp", around, best)[..., None] * best[:, None]  # (best, refined, 3)
        turned = (best[:, None] + spread * tangential).reshape(-1, 3)
        n = np.concatenate([best, turned / np.linalg.norm(turned, axis=1, keepdims=True)])
    return float(overlap(n).min())


def poses(a: Shape, b: Shape, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``count`` poses of b relative to a whose bracket's lower end lies in [LOWEST, DEEPEST]:
    ``H (count, 2, 4, 4)`` (a, b), the bracket ``(count, 2)`` [m] (below, above)."""
    kept, brackets = [], []
    while len(kept) < count:
        R_a, R_b = _rotation(rng), _rotation(rng)
        direction = rng.normal(size=3)
        offset = direction / np.linalg.norm(direction) * rng.uniform(0.02, 0.11)
        low = below(a, b, R_a, R_b, offset)
        if not LOWEST <= low <= DEEPEST:
            continue
        H = np.tile(np.eye(4), (2, 1, 1))
        H[0, :3, :3], H[1, :3, :3], H[1, :3, 3] = R_a, R_b, offset
        kept.append(H)
        brackets.append((low, above(a, b, R_a, R_b, offset)))
    return np.stack(kept), np.asarray(brackets)


def ours(a: Shape, b: Shape, H: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sum of the depths [m] of the active contacts of the collision query of the two at each
    pose ``(count,)``, and the deepest ``(count,)``."""
    import jax
    import jax.numpy as jnp

    from jaxsim_like.simulation.collision import CollisionTable, Geometry, query

    models = [a.model(), b.model()]
    table = CollisionTable.build(models)
    geometry = Geometry.of(models, jnp.float64)
    contacts = jax.jit(jax.vmap(lambda P: query(table, geometry, P)[0]))(jnp.asarray(H))
    depth = jnp.where(contacts.active, jnp.maximum(contacts.depth, 0.0), 0.0)
    return np.asarray(jnp.sum(depth, axis=1)), np.asarray(jnp.max(depth, axis=1))


def mujoco_depths(a: Shape, b: Shape, H: np.ndarray) -> np.ndarray:
    """MuJoCo C's deepest contact [m] (``mj_collision``) of the two at each pose ``(count,)``."""
    import mujoco

    from benchmarks import pile

    bodies = "".join(f"<body><freejoint/><geom {pile._mjcf_geometry(s.kind)}/></body>" for s in (a, b))
    model = mujoco.MjModel.from_xml_string(f"<mujoco><worldbody>{bodies}</worldbody></mujoco>")
    data = mujoco.MjData(model)
    depths = []
    for pose in H:
        quaternions = []
        for R in pose[:, :3, :3]:
            q = np.zeros(4)
            mujoco.mju_mat2Quat(q, R.ravel())
            quaternions.append(q)
        data.qpos[:] = np.concatenate([pose[0, :3, 3], quaternions[0], pose[1, :3, 3], quaternions[1]])
        mujoco.mj_kinematics(model, data)
        mujoco.mj_collision(model, data)
        depths.append(max([0.0] + [-c.dist for c in data.contact[: data.ncon]]))
    return np.asarray(depths)


def _row(label: str, carried: np.ndarray, deepest: np.ndarray, bracket: np.ndarray) -> str:
    short = bracket[:, 0] - carried
    excess = deepest - bracket[:, 1]
    return (f"| {label} | {100 * np.mean(short > 5e-4):.1f} | {100 * np.mean(short > 1e-3):.1f} | {1e3 * max(short.max(), 0.0):.2f} | "
            f"{100 * np.mean(excess > 5e-4):.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    pairs = [f"{a}-{b}" for a, b in itertools.combinations_with_replacement(SHAPES, 2)]
    parser.add_argument("--kinds", default=",".join(pairs), help="pairs of shapes, e.g. cylinder-cylinder")
    parser.add_argument("--poses", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mujoco", action="store_true", help="MuJoCo C's collision of the same poses too")
    args = parser.parse_args()
    import jax

    jax.config.update("jax_enable_x64", True)
    print("| pair | library | contacts below the bracket by > 0.5 mm [%] | by > 1 mm [%] | most below [mm] | deepest above it by > 0.5 mm [%] |")
    print("|---|---|---|---|---|---|")
    for pair in args.kinds.split(","):
        a, b = (Shape(kind) for kind in pair.split("-"))
        H, bracket = poses(a, b, args.poses, np.random.default_rng(args.seed))
        width = 1e3 * np.median(bracket[:, 1] - bracket[:, 0])
        print(_row(f"{pair} (bracket median {1e3 * np.median(bracket[:, 0]):.2f}, width {width:.2f} mm) | jaxsim_like", *ours(a, b, H), bracket),
              flush=True)
        if args.mujoco and "rock" not in pair:
            depth = mujoco_depths(a, b, H)
            print(_row(f"{pair} | MuJoCo C", depth, depth, bracket), flush=True)


if __name__ == "__main__":
    main()
