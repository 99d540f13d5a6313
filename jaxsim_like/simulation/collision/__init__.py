"""Collisions between the links of different models and between the links of one model.

One mechanism for both: a static pair table (:class:`CollisionTable`, built once from the models'
structure), a broad phase inside the jitted call that keeps a static budget of the pairs
of each kind whose bounding spheres overlap (and counts those it had no room for), narrow phases that fill a fixed number of contact slots per pair (:class:`Contacts`),
and the contact law with tangential memory, sized per contact, in its linearly implicit form
(:func:`pair_forces`). Everything jits, vmaps
and differentiates; shapes never change the compiled graph.
"""

from .collide import Contacts, Geometry, collide, query
from .forces import ExplicitPairs, PairLaw, explicit_pair_forces, pair_forces
from .kinds import KINDS
from .table import NEIGHBOURS, CollisionTable, PairGroup, scene_budget

__all__ = [
    "NEIGHBOURS",
    "ExplicitPairs",
    "KINDS",
    "CollisionTable",
    "Contacts",
    "Geometry",
    "PairLaw",
    "PairGroup",
    "collide",
    "explicit_pair_forces",
    "pair_forces",
    "query",
    "scene_budget",
]
