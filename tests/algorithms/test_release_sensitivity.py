"""Per-release sensitivity: every release of every private algorithm moves by at most its recorded sensitivity.

The check is `dpbench.checks.release_sensitivity` (what `python -m dpbench check` runs on a user's algorithm; its
comment says what is compared for each mechanism): each algorithm is fitted on D and on D plus one crafted record
with the same seed, the second fit replaying the first fit's noisy outputs, on the audit's designs and `bin_edge`;
algorithms with a batched path also through `fit_batch`, on batches mixing clip bounds and rounds and on
`outlier_design`.  Here, every built-in algorithm must also have had the releases of `MUST_CHECK` checked.
"""

from __future__ import annotations

import pytest

from dpbench import algorithms
from dpbench.algorithms import kernels
from dpbench.checks import entries, release_sensitivity

PRIVATE = [n for n in algorithms.available() if algorithms.get_spec(n).private]
BATCHED = [n for n in PRIVATE if "fit_batch" in entries(n)]
# releases each algorithm must have had checked (a mechanism that stops reporting would leave its branch idle)
MUST_CHECK = {"robgd": {"histogram"}, "ambssgd": {"gaussian"}, "dp_ebm": {"gaussian"},
              "dp_ebm_clf": {"gaussian"}}


@pytest.mark.parametrize("name", PRIVATE)
def test_every_release_moves_by_at_most_its_sensitivity(name):
    checked = release_sensitivity(name, "fit")
    assert checked and MUST_CHECK.get(name, set()) <= set(checked), f"{name}: checked only {dict(checked)}"


@pytest.mark.parametrize("name", BATCHED)
def test_every_release_of_fit_batch_moves_by_at_most_its_sensitivity(name):
    """As above through `fit_batch` (what sweeps call): one batch of runs with different clip bounds and rounds,
    on the audit's designs and on `outlier_design`."""
    assert release_sensitivity(name, "fit_batch")["gaussian"] > 0


@pytest.mark.skipif(not kernels.numba_available(), reason="without numba the test above runs numpy's kernels")
@pytest.mark.parametrize("name", ["boosted_adassp", "boosted_adassp_clf", "dpgd"])
def test_fit_batch_releases_with_the_other_kernels(name):
    """The test above runs the default elementwise kernels (numba's when installed); numpy's, here, too."""
    with kernels.use("numpy"):
        assert release_sensitivity(name, "fit_batch")["gaussian"] > 0
