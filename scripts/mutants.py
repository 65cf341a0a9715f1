"""`make mutants`: deliberate privacy bugs that the test suite must catch.

Each mutant replaces one line of the package, in a temporary copy of the project, with the kind of bug
public implementations of these algorithms have had; then the tests named beside it run against the copy.
A mutant is *killed* when they fail.  Prints a table (mutant, killed by, seconds); exit 1 if any survives.

    python scripts/mutants.py            # all
    python scripts/mutants.py sqrt_T     # those whose name contains the argument
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str  # under dpbench/
    old: str  # must occur exactly once
    new: str
    tests: tuple[str, ...]  # pytest node ids (or files) that must fail


SENSITIVITY = "tests/algorithms/test_release_sensitivity.py::test_every_release_moves_by_at_most_its_sensitivity"
BATCH_SENSITIVITY = ("tests/algorithms/test_release_sensitivity.py::"
                     "test_every_release_of_fit_batch_moves_by_at_most_its_sensitivity")
FAILURES = ("tests/algorithms/test_failures_are_releases.py::"
            "test_a_private_fit_returns_a_finite_model_on_any_finite_input")
MUTANTS = [
    Mutant("gaussian_noise_times_mu", "privacy/mechanisms.py",
           "    return sensitivity / mu\n", "    return sensitivity * mu\n",
           ("tests/privacy/test_mechanisms.py::test_gaussian_noise_std_is_sensitivity_over_mu",)),
    Mutant("boosting_round_without_sqrt_T", "algorithms/boosting.py",  # the ledger no longer composes to the budget
           "mu_grad / math.sqrt(est.n_rounds)", "mu_grad",
           ("tests/algorithms/test_boosting.py::test_ledger_matches_budget",)),
    Mutant("adassp_gram_sensitivity_halved", "algorithms/ssp.py",
           "d, sens = gram.shape[0], x_bound**2", "d, sens = gram.shape[0], x_bound**2 / 2",
           (SENSITIVITY + "[adassp]",)),
    Mutant("dpgd_gradient_sensitivity_halved", "algorithms/gradient_descent.py",
           "gaussian_rounds(self.grad_bound, mu_grad", "gaussian_rounds(self.grad_bound / 2, mu_grad",
           (SENSITIVITY + "[dpgd]",)),
    Mutant("dpgd_round_without_sqrt_T", "algorithms/gradient_descent.py",  # T rounds of mu each: sqrt(T) mu
           "mu_grad / math.sqrt(self.n_rounds), self.n_rounds", "mu_grad, self.n_rounds",
           ("tests/algorithms/test_gradient_descent.py::test_ledger_matches_budget",)),
    Mutant("symmetric_noise_averaged", "privacy/mechanisms.py",  # off-diagonal std / 2: sensitivity off by 2
           "    noise = noise + np.triu(noise, 1).T\n", "    noise = (noise + noise.T) / 2\n",
           ("tests/privacy/test_mechanisms.py::test_symmetric_gaussian_noise_is_mirrored_with_std_sensitivity_over_mu",)),
    Mutant("ssp_gram_sensitivity_halved", "algorithms/ssp.py",
           "symmetric_gaussian_mechanism(shared.gram(*key), self.x_bound**2, mu_gram",
           "symmetric_gaussian_mechanism(shared.gram(*key), self.x_bound**2 / 2, mu_gram",
           (SENSITIVITY + "[ssp]",)),
    Mutant("dp_xgboost_gain_sensitivity_halved", "algorithms/dp_xgboost.py",
           "GAIN_SENSITIVITY * gs**2\n", "GAIN_SENSITIVITY * gs**2 / 2\n",
           (SENSITIVITY + "[dp_xgboost]",
            "tests/algorithms/test_dp_xgboost.py::test_ledger_has_the_packages_split_of_each_round_and_composes_to_the_budget")),
    Mutant("tukey_depth_weights_x2", "algorithms/tukey.py",  # the paper's monotone exponent under a swap
           "    depth_exponent_divisor = 2\n", "    depth_exponent_divisor = 1\n",
           ("tests/algorithms/test_tukey.py::test_ledger_when_ptr_passes",)),
    Mutant("selection_vote_x4", "algorithms/private_selection.py",
           "exponential_mechanism(self.epsilon * counts,", "exponential_mechanism(4 * self.epsilon * counts,",
           (SENSITIVITY + "[private_selection]",)),
    Mutant("selection_candidates_on_all_rows", "algorithms/private_selection.py",  # fit and validation overlap
           "models.append(_fitted_or_fallback(est, X[fit], y[fit],",
           "models.append(_fitted_or_fallback(est, X, y,",
           (SENSITIVITY + "[private_selection]",)),
    Mutant("stability_threshold_without_delta", "privacy/histogram.py",  # 1 + 2 log(2)/eps: singletons released
           "SENSITIVITY * math.log(2.0 / delta) / epsilon", "SENSITIVITY * math.log(2.0) / epsilon",
           ("tests/privacy/test_histogram.py::test_release_probability_matches_threshold",
            "tests/privacy/test_histogram.py::test_scale_and_threshold_hand_values")),
    Mutant("classifier_labels_from_rows", "algorithms/base.py",
           "return public_binary_labels(y, self.classes) if self.private else binary_labels(y)",
           "return binary_labels(y)",
           ("tests/algorithms/test_registry.py::test_private_classifiers_take_their_label_set_from_classes[boosted_adassp_clf]",)),
    # issue 35's six classes of bugs the suite once missed, written afresh, and its leaks
    Mutant("batched_row_block_unclipped", "algorithms/boosting.py",  # a block's top row escapes a run's clip
           "lo, hi = by_norm.norms[rows.start], by_norm.norms[rows.stop - 1]",
           "lo, hi = by_norm.norms[rows.start], by_norm.norms[rows.stop - 2]",
           (BATCH_SENSITIVITY + "[boosted_adassp]",)),
    Mutant("interpret_binning_noise_halved", "algorithms/_interpret_patch.py",  # drawn at half the ledger's scale
           "noisy = counts + native.generate_gaussian_random(",
           "noisy = counts + 0.5 * native.generate_gaussian_random(",
           ("tests/algorithms/test_noise_ledger.py::test_noise_drawn_equals_ledger[dp_ebm]",)),
    Mutant("dp_ebm_bounds_utility_x2", "algorithms/dp_ebm.py",  # the exponential mechanism spends twice its charge
           "below - level * len(X))) / 2,", "below - level * len(X))),",
           (SENSITIVITY + "[dp_ebm_clf]",)),
    Mutant("dpgd_step_by_true_n", "algorithms/gradient_descent.py",  # the noisy count is released but unused
           "        return self.record_count_, gaussian_rounds(", "        return n, gaussian_rounds(",
           ("tests/algorithms/test_released_counts.py::test_a_private_fit_reads_its_released_count_not_n[dpgd-fit]",)),
    Mutant("robgd_distance_histogram_on_S3", "algorithms/robust_gd.py",  # S2's histograms read S3's rows
           "X2, y2, groups2 = X[S2], y[S2], random_groups(S2.size, k, rng)",
           "X2, y2, groups2 = X[S3], y[S3], random_groups(S3.size, k, rng)",
           (SENSITIVITY + "[robgd]",)),
    Mutant("gdp_part_charge_ignores_count", "privacy/composition.py",  # a part's k releases charged as one
           "compose_mu([e.mu * math.sqrt(e.count) for e in entries])", "compose_mu([e.mu for e in entries])",
           ("tests/privacy/test_composition.py::test_spent_by_composes_a_gaussian_part_in_gdp_by_hand",)),
    Mutant("dp_xgboost_int_histograms", "algorithms/dp_xgboost.py",  # raises on all-zero-bin data
           "    if weights is not None:  # bincount", "    if False:  # bincount",
           (FAILURES + "[dp_xgboost-fit]",)),
    Mutant("selection_exact_votes_attribute", "algorithms/private_selection.py",  # an undeclared exact count
           "        keep_diagnostics(self, votes=counts)\n", "        self.votes_ = counts\n",
           ("tests/algorithms/test_failures_are_releases.py::test_every_fitted_attribute_is_declared_private"
            "[private_selection-fit]",)),
]


def failing(tests, root: Path) -> str:
    """The first of `tests` that fails when run against the project at `root` ('' if all pass)."""
    env = {**os.environ, "PYTHONPATH": str(root)}  # the copy, not the installed package
    for test in tests:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", test],
                              cwd=root, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            return test
    return ""


def run(mutant: Mutant) -> tuple[bool, str, float]:
    """(killed, by which test, seconds) for one mutant, in a fresh copy of the project."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dpbench-mutant-") as tmp:
        copy = Path(tmp) / "project"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".venv", "results", "__pycache__"))
        path = copy / "dpbench" / mutant.file
        text = path.read_text()
        if text.count(mutant.old) != 1:
            raise SystemExit(f"mutant {mutant.name}: {mutant.old!r} occurs {text.count(mutant.old)} times in "
                             f"dpbench/{mutant.file} (the code moved: update the mutant)")
        path.write_text(text.replace(mutant.old, mutant.new))
        by = failing(mutant.tests, copy)
    return bool(by), by, time.perf_counter() - t0


def check_copy_is_imported() -> None:
    """The tests of a copy must import the copy's dpbench, not the installed one."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "dpbench").mkdir()
        (Path(tmp) / "dpbench" / "__init__.py").write_text("")
        out = subprocess.run([sys.executable, "-c", "import dpbench; print(dpbench.__file__)"], cwd=tmp,
                             env={**os.environ, "PYTHONPATH": tmp}, capture_output=True, text=True).stdout
        if not out.startswith(str(Path(tmp).resolve())) and not out.startswith(tmp):
            raise SystemExit(f"a copy's tests would import {out.strip()}, not the copy")


def main(argv: list[str]) -> int:
    check_copy_is_imported()
    chosen = [m for m in MUTANTS if not argv or any(a in m.name for a in argv)]
    control = failing(sorted({t for m in chosen for t in m.tests}), ROOT)
    if control:  # a kill only means something if the test passes on the unmutated code
        raise SystemExit(f"{control} fails without any mutant: fix it first")
    survived = 0
    print(f"{'mutant':34s} {'result':8s} {'seconds':>7s}  killed by")
    for mutant in chosen:
        killed, by, seconds = run(mutant)
        survived += not killed
        print(f"{mutant.name:34s} {'killed' if killed else 'SURVIVED':8s} {seconds:7.1f}  {by}", flush=True)
    print(f"\n{len(chosen) - survived} of {len(chosen)} mutants killed")
    return 1 if survived else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
