"""tessel.compile: modules in process, entries called on arrays in place."""

import pathlib

import numpy as np
import pytest

import tessel

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def matmul():
    return tessel.compile(EXAMPLES / "matmul.mlir")


def test_entries_and_in_place_call(matmul):
    assert list(matmul.entries) == ["matmul"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1024, 256), dtype=np.float32)
    y = rng.standard_normal((256, 1024), dtype=np.float32)
    z = np.zeros((1024, 1024), np.float32)
    assert matmul.matmul(x, y, z) is None
    np.testing.assert_allclose(z, x.astype(np.float64) @ y, rtol=1e-4, atol=1e-4)


class DLPackOnly:
    """An array known only through the DLPack protocol."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_objects_are_used_in_place(matmul):
    x = np.ones((1024, 256), np.float32)
    y = np.ones((256, 1024), np.float32)
    z = np.zeros((1024, 1024), np.float32)
    matmul.matmul(DLPackOnly(x), DLPackOnly(y), DLPackOnly(z))
    np.testing.assert_array_equal(z, np.full((1024, 1024), 256, np.float32))


def test_wrong_arrays_are_type_and_value_errors(matmul):
    x = np.ones((1024, 256), np.float32)
    y = np.ones((256, 1024), np.float32)
    z = np.zeros((1024, 1024), np.float32)
    with pytest.raises(TypeError, match="dtype float32"):
        matmul.matmul(x.astype(np.float64), y, z)
    with pytest.raises(ValueError, match=r"shape \(256, 1024\)"):
        matmul.matmul(x, y[:, :512], z)
    with pytest.raises(ValueError, match="C-contiguous"):
        matmul.matmul(np.asfortranarray(x), y, z)
    with pytest.raises(TypeError, match="takes 3 arrays"):
        matmul.matmul(x, y)
    with pytest.raises(TypeError, match="numpy array or a DLPack"):
        matmul.matmul([1, 2], y, z)
    with pytest.raises(AttributeError, match="no entry @nope"):
        matmul.nope


def test_knobs_change_schedule_not_results():
    source = (EXAMPLES / "matmul.mlir").read_text()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1024, 256), dtype=np.float32)
    y = rng.standard_normal((256, 1024), dtype=np.float32)
    results = []
    for knobs in ({}, {"register_tile": (2, 16), "num_threads": 1}):
        z = np.zeros((1024, 1024), np.float32)
        tessel.compile(source, **knobs).matmul(x, y, z)
        results.append(z)
    np.testing.assert_array_equal(results[0], results[1])
    assert "register_tile" in tessel.knob_names()


def test_tune_searches_caches_and_compile_uses_it(tmp_path, monkeypatch):
    # tessel tune's search, in process: the winner is cached and a second
    # call answers from the cache; compile() then builds that schedule.
    monkeypatch.setenv("TESSEL_CACHE_DIR", str(tmp_path))
    tuned = tessel.tune(EXAMPLES / "matmul.mlir", "matmul", budget=3, beam=2)
    assert set(tuned) == {"default_s", "best_s", "candidates", "cached", "best"}
    assert not tuned["cached"] and tuned["candidates"] >= 1
    assert 0 < tuned["best_s"] <= tuned["default_s"] * 1.05
    assert "register_tile" in tuned["best"]
    assert any(tmp_path.iterdir()), "the winner is in the cache"
    again = tessel.tune(EXAMPLES / "matmul.mlir", "matmul", budget=3)
    assert again["cached"] and again["best"] == tuned["best"]
    module = tessel.compile(EXAMPLES / "matmul.mlir")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1024, 256), dtype=np.float32)
    y = rng.standard_normal((256, 1024), dtype=np.float32)
    z = np.zeros((1024, 1024), np.float32)
    module.matmul(x, y, z)
    np.testing.assert_allclose(z, x.astype(np.float64) @ y, rtol=1e-4, atol=1e-4)


def test_tune_reports_bad_requests():
    source = "func.func @f(%x: memref<4xf32>) {\n  return\n}\n"
    with pytest.raises(ValueError, match="no entry @g"):
        tessel.tune(source, "g", budget=1)
    with pytest.raises(ValueError, match="beam"):
        tessel.tune(source, "f", beam=0)
    with pytest.raises(ValueError, match="budget"):
        tessel.tune(source, "f", budget=-1)
    with pytest.raises(tessel.CompileError, match="<string>:1:"):
        tessel.tune("func.func @f(%x: memref<4xf32>) { garbage", "f")
