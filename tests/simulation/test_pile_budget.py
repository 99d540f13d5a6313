"""The pair budget (issue 29): the default holds the 125-body pile at rest with a margin, and a
run's summary keeps the most overlapping pairs of links that a pair kind's budget left untested
in a step."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
from collision_worlds import solid

from jaxsim_like.dynamics.spatial import quaternion_to_rotation
from jaxsim_like.monitor import Summary
from jaxsim_like.simulation.collision import CollisionTable, Geometry, query

REST = Path(__file__).resolve().parents[1] / "assets" / "pile125_rest.txt"
SHAPES = {  # benchmarks/pile.py's bodies, in its order
    "box": '<box size="0.06 0.06 0.06"/>',
    "sphere": '<sphere radius="0.03"/>',
    "capsule": '<capsule radius="0.02" length="0.06"/>',
    "cylinder": '<cylinder radius="0.03" length="0.06"/>',
}
MARGIN = 1.5


def test_the_default_budget_holds_the_125_body_pile_at_rest_with_a_margin():
    """The poses of ``benchmarks/pile.py``'s 125 bodies at rest after 3 s: every pair kind's
    overlapping candidates fit in its default budget divided by ``MARGIN`` (the counts over the
    pile's 3 s: docs/changelog.md, "A pair budget from the shapes' sizes")."""
    rest = np.loadtxt(REST)
    models = {kind: solid(kind, geometry, 0.2, 1e-4) for kind, geometry in SHAPES.items()}
    bodies = [models[kind] for kind in list(SHAPES) * 32][: len(rest)]
    default = CollisionTable.build(bodies)
    table = CollisionTable.build(bodies, budget={g.kind: int(g.keep / MARGIN) for g in default.groups})
    poses = np.tile(np.eye(4), (len(rest), 1, 1))
    poses[:, :3, :3] = np.asarray(quaternion_to_rotation(jnp.asarray(rest[:, 3:])))
    poses[:, :3, 3] = rest[:, :3]
    _, overflow = jax.jit(query, static_argnums=0)(table, Geometry.of(bodies, jnp.float64), jnp.asarray(poses))
    assert dict(zip([g.kind for g in table.groups], np.asarray(overflow).tolist())) == {g.kind: 0 for g in table.groups}


def _outputs(overflow, dropped=None):
    """The fields of a step's outputs that :meth:`Summary.update` reads, with self-contacts whose
    broad phase left ``overflow`` pairs per pair group (None: no self-collisions) and whose
    touching budget left out ``dropped`` touching slots (None: the step solved every slot)."""
    contacts = None if overflow is None else SimpleNamespace(
        overflow=jnp.asarray(overflow, jnp.int32), dropped=None if dropped is None else jnp.asarray(dropped, jnp.int32))
    return SimpleNamespace(finite=jnp.asarray(True), penetration=jnp.zeros(2), contact_forces=jnp.zeros((2, 3)),
                           self_contacts=contacts)


def test_a_summary_keeps_the_most_pairs_a_budget_left_untested():
    """The most of any pair group in any step, over steps and over runs continued with ``then``;
    zero without self-collisions; the touching slots a touching budget left out count too."""
    summary = Summary.start(jnp.float64)
    for step, overflow in enumerate([[0, 2], [3, 1], [0, 0]]):
        summary = summary.update(_outputs(overflow), jnp.asarray(step))
    assert int(summary.pair_overflow) == 3
    later = Summary.start(jnp.float64).update(_outputs([5, 0]), jnp.asarray(0))
    assert int(summary.then(later, 3).pair_overflow) == 5
    assert int(Summary.start(jnp.float64).update(_outputs(None), jnp.asarray(0)).pair_overflow) == 0
    assert int(Summary.start(jnp.float64).update(_outputs([1, 0], dropped=4), jnp.asarray(0)).pair_overflow) == 4
