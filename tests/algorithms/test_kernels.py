"""The batched fits' elementwise passes: numba's fused loops give numpy's numbers (`dpbench.algorithms.kernels`).

The batched fits themselves are checked against each fit alone under both backends in test_shared_data.py (its
autouse `kernel` fixture); here the kernels meet each other directly, on blocks holding what a fit can produce
(NaN, +-inf, 1e300, rows of norm 0)."""

import numpy as np
import pytest

from dpbench.algorithms import kernels

needs_numba = pytest.mark.skipif(not kernels.numba_available(), reason="numba not installed (the `fast` extra)")


def block(rng, runs, m, dtype):
    s = rng.normal(size=(runs, m)) * rng.choice([0.01, 1.0, 100.0], size=(runs, 1))
    s[0, :4] = [np.nan, np.inf, -np.inf, np.finfo(dtype).max / 4]
    return s.astype(dtype)


def both(fn, *args):
    """fn(*args) with the numpy kernels, then with numba's (each on its own copy of the first argument)."""
    out = []
    for name in kernels.BACKENDS:
        buffer = args[0].copy()
        with kernels.use(name):
            fn(buffer, *args[1:])
        out.append(buffer)
    return out


@needs_numba
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("loss", ["squared", "logistic", "hinge"])
@pytest.mark.parametrize("a, b", [(7, 7), (0, 7), (0, 0), (2, 5), (3, 3)])
@pytest.mark.parametrize("per_run_tau", [False, True])
def test_boosting_gradients_numba_equals_numpy(dtype, loss, a, b, per_run_tau):
    """Runs [:a] clipped, [a:b] mixed (a factor per row), [b:] unclipped (the norms, one of them 0); one tau or
    one per run: float64 bitwise equal (the logistic loss: exp may differ by an ulp), float32 to its rounding."""
    rng = np.random.default_rng(a + 10 * b)
    runs, m = 7, 301
    s = block(rng, runs, m, dtype)
    y = (rng.normal(size=m) if loss == "squared" else rng.choice([-1.0, 1.0], size=m)).astype(dtype)
    if loss == "logistic":
        y = (y > 0).astype(dtype)
    norms = np.abs(rng.normal(size=m)).astype(dtype)
    norms[5] = 0.0
    f = np.minimum(rng.uniform(0, 2, size=(b - a, m)), 1.0).astype(dtype) if b > a else None
    inverse_tau = (1.0 / rng.uniform(0.1, 5, size=runs)).astype(dtype) if per_run_tau else None
    tau = dtype(1.0 if per_run_tau else 0.7)
    ref, got = both(kernels.boosting_gradients, s, y, loss, a, b, f, None if b == runs else norms, inverse_tau, tau)
    assert np.isnan(ref).any() or loss != "squared"  # the NaN score went through
    if dtype == np.float64 and loss != "logistic":
        np.testing.assert_array_equal(got, ref)
        assert np.array_equal(np.signbit(got), np.signbit(ref))  # -0.0 of the hinge loss too
    else:
        ulps = 4 if dtype == np.float64 else 16  # of the largest gradient: exp's last bits, float32 intermediates
        np.testing.assert_allclose(got, ref, rtol=0, atol=ulps * np.finfo(dtype).eps * np.nanmax(np.abs(ref)))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))


@needs_numba
@pytest.mark.parametrize("runs", [1, 3, 40])
def test_dpgd_clip_residuals_numba_equals_numpy(runs):
    """DP-GD's clipped residuals, bitwise: overflowing residuals (+-inf) clip, inf - inf stays NaN, rows of norm 0
    are never clipped; gradient bounds per run."""
    rng = np.random.default_rng(runs)
    m = 257
    r = rng.normal(size=(m, runs)) * 10
    r[0, 0], r[1, 0], r[2, -1] = np.inf, np.nan, -np.inf
    y = rng.normal(size=m)
    y[2] = -np.inf
    norms = np.abs(rng.normal(size=m))
    norms[3] = 0.0
    bounds = rng.uniform(0.01, 20, size=runs)
    ref, got = both(kernels.clip_residuals, r, y, bounds, norms)
    np.testing.assert_array_equal(got, ref)
    assert np.isnan(got[2, -1]) and abs(got[0, 0]) == bounds[0] / norms[0]


def test_a_one_run_residual_stays_on_numpy():
    """A single fit's residuals (a vector) take numpy's path under either backend: the same numbers as rows x 1."""
    rng = np.random.default_rng(0)
    r, y, norms = rng.normal(size=50), rng.normal(size=50), np.abs(rng.normal(size=50))
    expected = np.copysign(np.minimum(np.abs(r - y), 0.3 / norms), r - y)
    np.testing.assert_array_equal(kernels.clip_residuals(r.copy(), y, 0.3, norms), expected)


def test_the_backend_is_chosen_by_the_environment(monkeypatch):
    monkeypatch.setitem(kernels._state, "backend", None)
    monkeypatch.setenv("DPBENCH_KERNELS", "numpy")
    assert kernels.backend() == "numpy"
    monkeypatch.setitem(kernels._state, "backend", None)
    monkeypatch.setenv("DPBENCH_KERNELS", "fortran")
    with pytest.raises(ValueError, match="DPBENCH_KERNELS must be one of"):
        kernels.backend()
    monkeypatch.setitem(kernels._state, "backend", None)
    monkeypatch.delenv("DPBENCH_KERNELS")
    assert kernels.backend() == ("numba" if kernels.numba_available() else "numpy")
    monkeypatch.setitem(kernels._state, "backend", None)
    monkeypatch.setenv("DPBENCH_KERNELS", "numba")
    monkeypatch.setattr(kernels, "numba_available", lambda: False)
    with pytest.raises(ImportError, match=r"pip install 'dpbench\[fast\]'"):
        kernels.backend()
    with pytest.raises(ImportError, match="numba is not installed"):
        kernels.use("numba").__enter__()
    with pytest.raises(ValueError, match="kernel backend must be one of"):
        kernels.use("cuda").__enter__()
