"""Fixtures of the object-API tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from jaxsim_like import api

from .helpers import simulator


@pytest.fixture
def make_world() -> Callable[..., tuple[api.Simulator, api.World]]:
    """``make_world(*models, ground=False)``: a fresh simulator and world with ``(file, pose, name)`` models."""

    def build(*models, ground: bool = False, steps_per_run: int = 1):
        sim = simulator(steps_per_run=steps_per_run)
        world = sim.get_world()
        if ground:
            assert world.insert_model(api.get_ground_plane())
        for file, pose, name in models:
            assert world.insert_model(file, pose, name)
        return sim, world

    return build
