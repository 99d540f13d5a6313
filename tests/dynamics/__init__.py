"""Tests of the rigid-body dynamics core (jaxsim_like.dynamics)."""
