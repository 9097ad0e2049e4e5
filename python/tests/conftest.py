"""Every test runs with tessel.jax installed: CPU pallas_calls without
interpret=True go to Tessel."""

import pytest

import tessel.jax


@pytest.fixture(autouse=True)
def tessel_installed():
    with tessel.jax.installed():
        yield
