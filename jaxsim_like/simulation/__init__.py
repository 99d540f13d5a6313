"""Simulation: soft contacts, joint effects, integrators, the step and rollouts (pure functions)."""

from .contacts import ContactParams, contact_forces
from .params import INTEGRATORS, SimulationParams
from .step import StepOutput, rollout, step
from .terrain import Terrain, penetration

__all__ = [
    "INTEGRATORS",
    "ContactParams",
    "SimulationParams",
    "StepOutput",
    "Terrain",
    "contact_forces",
    "penetration",
    "rollout",
    "step",
]
