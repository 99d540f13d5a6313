"""The pair budget reported: a run's summary keeps the most overlapping pairs of links that a
pair kind's budget left untested in a step (issue 29)."""

from __future__ import annotations

from types import SimpleNamespace

import jax.numpy as jnp

from jaxsim_like.monitor import Summary


def _outputs(overflow):
    """The fields of a step's outputs that :meth:`Summary.update` reads, with self-contacts whose
    broad phase left ``overflow`` pairs per pair group (None: no self-collisions)."""
    contacts = None if overflow is None else SimpleNamespace(overflow=jnp.asarray(overflow, jnp.int32))
    return SimpleNamespace(finite=jnp.asarray(True), penetration=jnp.zeros(2), contact_forces=jnp.zeros((2, 3)),
                           self_contacts=contacts)


def test_a_summary_keeps_the_most_pairs_a_budget_left_untested():
    """The most of any pair group in any step, over steps and over runs continued with ``then``;
    zero without self-collisions."""
    summary = Summary.start(jnp.float64)
    for step, overflow in enumerate([[0, 2], [3, 1], [0, 0]]):
        summary = summary.update(_outputs(overflow), jnp.asarray(step))
    assert int(summary.pair_overflow) == 3
    later = Summary.start(jnp.float64).update(_outputs([5, 0]), jnp.asarray(0))
    assert int(summary.then(later, 3).pair_overflow) == 5
    assert int(Summary.start(jnp.float64).update(_outputs(None), jnp.asarray(0)).pair_overflow) == 0
