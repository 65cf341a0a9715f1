"""The packaged configs compose, validate and expand; bad configs are one-line ConfigErrors before anything runs."""

from pathlib import Path

import pytest

from dpbench import algorithms, config
from dpbench.config import (
    CONF_DIR,
    ConfigError,
    compose,
    dataset_shorthand,
    experiment,
    experiment_names,
    options,
    validate,
)
from dpbench.runner.grid import expand

CLASSIFICATION_DATA = "datasets=[{name: synthetic, task: classification, n_train: 500, n_test: 100}]"


def _grid(*overrides):
    return expand(experiment(validate(compose(list(overrides)))))


def test_the_shipped_experiments_are_the_files_and_their_smoke_variants():
    """A smoke variant per experiment with a smoke overlay (conf/smoke/): its own, or its base config's."""
    files = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
    smoke = ["fig1", "fig12", "fig1_fixed", "fig1_split", "fig2", "fig3", "fig4", "fig5", "leaderboard",
             "leaderboard_clf", "paper001", "robust_feature", "robust_label", "robust_model"]
    assert experiment_names() == sorted(files + [f"smoke/{n}" for n in smoke])
    assert [config.smoke_overlay(n) for n in ("fig1", "fig4", "fig1_fixed", "robust_model", "paper001", "zoo")] == [
        "paper000", "fig4", "fig1_fixed", "robust", "paper001", None]


def test_paper000_figures_share_one_grid():
    """Figs 1-5, 12 and 1(c)'s variants extend base/paper000: its datasets, seeds, split and (but fig1_fixed)
    epsilons; their smoke variants share smoke/paper000's tasks and seeds."""
    names = ["fig1", "fig2", "fig3", "fig4", "fig5", "fig12", "fig1_split", "fig1_fixed"]
    for name in names:
        cfg = validate(compose([f"experiment={name}"]))
        assert (cfg["datasets"], cfg["seeds"], cfg["deltas"], cfg["split"]) == (["openml_all"], [0, 1, 2], [1e-6],
                                                                                "fixed")
        assert cfg["epsilons"] == ([0.1, 0.5, 1.0, 2.0, 5.0, 10.0] if name == "fig1_fixed" else [0.1, 1.0, 10.0])
        assert (cfg["plot"]["kind"], cfg["plot"]["y"]) == ("scatter", "boosted_adassp")
        smoke = validate(compose([f"experiment=smoke/{name}"]))
        assert (smoke["datasets"], smoke["seeds"]) == (["openml_361072", "openml_361076"], [0, 1])


def test_a_dataset_grid_crosses_every_dataset():
    """robust_*: one template per experiment, crossed with base/robust's p x n (20 datasets, p-major); the smoke
    overlay changes only the values."""
    cfg = validate(compose(["experiment=robust_label"]))
    assert cfg["dataset_grid"] == {} and len(cfg["datasets"]) == 20
    assert cfg["datasets"][:2] == [{"name": "synthetic", "outlier": "label", "d": 10, "fraction": 0.01, "n_train": n,
                                    "n_test": 10000} for n in (10000, 30000)]
    smoke = validate(compose(["experiment=smoke/robust_model"]))
    assert [(d["outlier"], d["fraction"], d["n_train"], d["n_test"]) for d in smoke["datasets"]] == [
        ("model", p, n, 500) for p in (0.05, 0.2) for n in (1000, 3000)]
    runs = _grid("datasets=[{name: synthetic, n_test: 100}]", "+dataset_grid.n_train=[200,300]",
                 "algorithms=[ols]")
    assert sorted({r.dataset["n_train"] for r in runs}) == [200, 300]


def test_a_user_experiment_on_a_base_gets_a_smoke_variant(tmp_path, monkeypatch):
    (tmp_path / "conf" / "experiment").mkdir(parents=True)
    (tmp_path / "conf" / "experiment" / "mine.yaml").write_text(
        "# @package _global_\ndefaults:\n  - /base/paper000\n  - _self_\nname: mine\n"
        "algorithms: [boosted_adassp, adassp]\nplot: {x: adassp}\n")
    monkeypatch.chdir(tmp_path)
    assert {"mine", "smoke/mine"} <= set(experiment_names())
    cfg = validate(compose(["experiment=smoke/mine"]))
    assert cfg["name"] == "mine_smoke" and cfg["datasets"] == ["openml_361072", "openml_361076"]


@pytest.mark.parametrize("name", experiment_names())
def test_every_experiment_composes_validates_and_expands(name):
    cfg = validate(compose([f"experiment={name}"]))
    smoke = name.startswith("smoke/")  # a smoke variant: the experiment's name + _smoke, its own results dir
    if smoke:
        assert cfg["name"] == name.removeprefix("smoke/") + "_smoke"
    elif cfg["name"] != name:  # a sub-grid of another experiment, writing into that experiment's results
        assert f"/experiment/{cfg['name']}" in (CONF_DIR / "experiment" / f"{name}.yaml").read_text()
    assert len(expand(experiment(cfg))) > 0


@pytest.mark.parametrize("name", options("dataset"))
def test_every_dataset_shorthand(name):
    from dpbench import data

    names = {dataset_shorthand(n): n for n in data.available()}
    if name in names and data.get_spec(names[name]).split == "all":  # paper 003's: fitted and scored on all rows
        with pytest.raises(ConfigError, match="has no test part"):
            validate(compose([f"dataset={name}", "algorithms=[ols,logreg]"]))
        return
    cfg = validate(compose([f"dataset={name}", "algorithms=[ols,logreg]"]))  # one per task
    assert cfg["name"] == "quickstart" and cfg["datasets"] != validate(compose([]))["datasets"]
    assert len(expand(experiment(cfg))) > 0


@pytest.mark.parametrize("name", options("algorithm"))
def test_every_algorithm_shorthand(name):
    task = algorithms.get_spec(name).task
    runs = _grid(f"algorithm={name}", *([CLASSIFICATION_DATA] if task == "classification" else []))
    assert {r.algorithm for r in runs} == {name}


@pytest.mark.parametrize("name", options("runner"))
def test_every_runner(name):
    assert validate(compose([f"runner={name}"]))["runner"]["backend"] in ("loky", "dask")


def test_defaults_and_the_old_plus_form():
    assert validate(compose([]))["name"] == "quickstart"  # sweep with no experiment: the quickstart
    assert compose(["+experiment=zoo"])["name"] == "zoo"  # `+experiment=` of earlier versions still works
    runs = _grid("dataset=openml/cpu_act")  # the README's form, no `+`
    assert len({r.dataset["name"] for r in runs}) == 1 and runs[0].dataset["name"].startswith("openml_")


def test_a_conf_dir_in_the_working_directory_adds_configs(tmp_path, monkeypatch):
    (tmp_path / "conf" / "experiment").mkdir(parents=True)
    (tmp_path / "conf" / "experiment" / "mine.yaml").write_text(
        "# @package _global_\nname: mine\nalgorithms: [adassp]\ndatasets: [{name: synthetic, n_train: 500}]\n"
        "epsilons: [1.0]\n")
    monkeypatch.chdir(tmp_path)
    assert "mine" in experiment_names()
    assert len(_grid("experiment=mine")) == 1


def test_the_repository_conf_is_not_searched_twice(tmp_path, monkeypatch):
    """From the root of a checkout ./conf is dpbench's own conf/ (it holds config.yaml), this one's or another's
    whose dpbench is installed: not a user layer, so not searched twice and no clash with itself."""
    monkeypatch.chdir(CONF_DIR.parent)
    assert Path("conf").resolve() == CONF_DIR.resolve()
    assert config.user_conf_dir() is None and config.searchpath() == []
    config.check_user_configs()
    assert validate(compose([]))["name"] == "quickstart"
    (tmp_path / "conf" / "experiment").mkdir(parents=True)  # another checkout's conf/
    (tmp_path / "conf" / "config.yaml").write_text("name: other\n")
    (tmp_path / "conf" / "experiment" / "quickstart.yaml").write_text("# @package _global_\nname: other\n")
    monkeypatch.chdir(tmp_path)
    assert config.user_conf_dir() is None
    config.check_user_configs()
    assert compose([])["name"] == "quickstart"


def test_every_package_is_installed():
    """pyproject.toml lists the packages (conf/ installs as dpbench.conf, which `packages.find` cannot say): a new
    subpackage of dpbench/ must be listed too, or a non-editable install lacks it."""
    tomllib = pytest.importorskip("tomllib")
    root = CONF_DIR.parent
    if not (root / "pyproject.toml").exists():
        pytest.skip("not a checkout")
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {".".join(p.parent.relative_to(root).parts) for p in (root / "dpbench").rglob("*.py")}
    groups = {f"dpbench.conf.{d.name}" for d in (root / "conf").iterdir() if d.is_dir()}
    assert sorted(setuptools["packages"]) == sorted(found | {"dpbench.conf"} | groups)
    assert setuptools["package-dir"] == {"dpbench.conf": "conf"}
    assert set(setuptools["package-data"]) >= {"dpbench.conf"} | groups


def test_a_user_config_with_a_packaged_name_is_an_error_naming_it(tmp_path, monkeypatch, capsys):
    """The packaged search path comes first, so ./conf/experiment/quickstart.yaml would be ignored silently."""
    from dpbench.__main__ import main

    (tmp_path / "conf" / "experiment" / "smoke").mkdir(parents=True)
    (tmp_path / "conf" / "experiment" / "smoke" / "fig1.yaml").write_text("# @package _global_\nname: mine\n")
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "conf/experiment/smoke/fig1.yaml has the name of dpbench's packaged" in err
    assert not (tmp_path / "results").exists()


BAD = [
    (["epsilon=[1]"], "unknown config key 'epsilon' (did you mean epsilons?); valid keys: name, algorithms"),
    (["+epsilon=[1]"], "unknown config key 'epsilon' (did you mean epsilons?)"),
    (["epsilons=1"], "epsilons must be a list, e.g. epsilons=[1]"),
    (["seeds=[0.5]"], "seeds=[0.5]"),
    (["datasets=[{name: synthetic, outlier: lable}]"], "outlier must be one of ('none', 'label', 'feature', 'model')"),
    (["datasets=[{name: synthetic, outliers: label}]"], "unknown option(s) ['outliers'] for dataset 'synthetic'"),
    (["datasets=[{name: synthetic, n_train: 0}]"], "n_train must be an integer >= 1"),
    (["datasets=[{name: synthetic, n_train: abc}]"], "n_train must be an integer >= 1, got 'abc'"),
    (["runner.n_jobs=0"], "runner.n_jobs must be >= 1 (workers) or negative"),
    (["runner.part_size=0"], "runner.part_size must be >= 1, got 0"),
    (["runner.connect_timeout=0"], "runner.connect_timeout must be > 0 seconds"),
    (["datasets=[cpu_act]"], "unknown dataset 'cpu_act'"),
    (["datasets=[{name: adult, splitt: paper}]"], "unknown option(s) ['splitt'] for dataset 'adult'"),
    (["algorithms=[adasp]"], "unknown algorithm 'adasp'; available: adassp"),
    (["algorithms=[{name: adassp, params: {n_rounds: 3}}]"], "unknown parameter(s) ['n_rounds'] for"),
    (["algorithms=[{name: boosted_adassp, params: {n_rounds: -3}}]"], "'n_rounds' parameter of BoostedAdaSSP"),
    (["algorithms=[{name: boosted_adassp, grid: {n_rounds: 3}}]"], "grid.n_rounds must be a non-empty list"),
    (["algorithms=[{name: adassp, prams: {}}]"], "an algorithm entry has keys name, params, grid"),
    (["runner.foo=1"], "unknown config key 'runner.foo'; valid keys of runner: n_jobs, backend"),
    (["runner.n_jobs=two"], "runner.n_jobs=two"),
    (["runner.backend=spark"], "runner.backend='spark' is not one of loky"),
    (["runner=nope"], "unknown runner 'nope'; available: dask, local"),
    (["experiment=nope"], "unknown experiment 'nope'; available: "),
    (["dataset=openml/nope"], "unknown dataset 'openml/nope'; available: "),
    (["epsilons=[1"], "bad override 'epsilons=[1'"),
    (["quickstart"], "bad override 'quickstart': Error parsing override 'quickstart' (did you mean "
                     "experiment=quickstart? syntax"),
    (["algorithms=[{name: adassp, params: {xbound: 1}}]"],
     "unknown parameter(s) ['xbound'] for algorithm 'adassp' (did you mean x_bound for xbound?)"),
    (["epsilons=[-1]"], "epsilons must be numbers in (0, inf)"),
    (["tuning_mode=private"], "tuning_mode='private' is not one of fixed, tuned, private_selection"),
    (["algorithms=[{name: ols, modes: [tuned]}]"], "algorithm 'ols' has no tuning space: it cannot run in tuned mode"),
    (["algorithms=[{name: adassp, modes: [tuning]}]"],
     "algorithm 'adassp' modes must be a list of fixed, tuned, private_selection"),
    (["tuning.n_trials=0"], "tuning.n_trials must be an integer >= 1, got 0"),
    (["tuning.validation_fraction=1.5"], "tuning.validation_fraction must be in (0, 1), got 1.5"),
    (["tuning=nope"], "unknown tuning 'nope'; available: default, quick"),
    (["dataset_grid={n_train: [5]}"], "a dataset option to cross is added with +dataset_grid.n_train=[values]"),
    (["+dataset_grid.n_train=5"], "dataset_grid.n_train"),
    (["+dataset_grid.n_train=[]"], "dataset_grid.n_train must be a non-empty list of values"),
    (["datasets=[openml_all]", "+dataset_grid.split=[fixed]"], "dataset_grid cannot cross the group 'openml_all'"),
    (["+dataset_grid.n_trian=[5]"], "unknown option(s) ['n_trian'] for dataset 'synthetic'"),
    (["plot.kind=scatter"], "plot.kind=scatter needs plot.x"),
    (["plot.metric=mse"], "plot.metric='mse' is not one of test_mse"),
    (["plot.kind=scatter", "plot.x=adassp", "plot.y=boosted"], "plot.y='boosted' is not one of"),
    (["+plot.bins=3"], "plot.kind=privacy_curve does not take bins"),
    (["algorithms=[3]"], "algorithms: each entry is a name or {name: ..., params: {...}}, got 3"),
    (["algorithms=[{params: {x_bound: 1}}]"], "algorithms: each entry is a name or"),
    (["experiment=fig4", "algorithms=[{name: ols}]"],  # before the sweep, not after it
     "plot.x=dp_ebm is not among the experiment's algorithms (ols): set plot.x and plot.y to two of them, or draw "
     "the default figure (privacy_curve) with ~plot"),
    (["name=null"], "the config has no experiment name"),
    (["datasets=[paper003_garbage]"], "dataset 'paper003_garbage' has no test part (paper 003 fits and scores on"),
]


@pytest.mark.parametrize("overrides, message", BAD, ids=[" ".join(o) for o, _ in BAD])
def test_bad_configs_are_one_line_errors(overrides, message):
    with pytest.raises(ConfigError) as err:
        validate(compose(overrides))
    text = str(err.value)
    assert message in text and "\n" not in text


def test_a_removed_section_is_its_default():
    """`~plot` (or `~runner`, ...) removes a section the experiment set: the schema's default, not a KeyError."""
    cfg = validate(compose(["experiment=fig4", "algorithms=[{name: ols}]", "~plot", "~runner"]))
    assert cfg["plot"]["kind"] == "privacy_curve" and cfg["runner"]["n_jobs"] == validate(compose([]))["runner"][
        "n_jobs"]


def test_an_import_that_fails_is_a_one_line_config_error(tmp_path, monkeypatch):
    """`imports:` names the user's modules; one that is missing or raises is named in one line."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken_ext.py").write_text("raise RuntimeError('half-written module')\n")
    for module, message in [("no_such_module_xyz", "imports: cannot import 'no_such_module_xyz': ModuleNotFound"),
                            ("broken_ext", "imports: cannot import 'broken_ext': RuntimeError: half-written module")]:
        with pytest.raises(ConfigError) as err:
            validate(compose(["experiment=quickstart", f"imports=[{module}]"]))
        assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_a_packaged_experiment_composes_without_the_registries():
    """Composing imports no algorithm, dataset or scikit-learn module unless an override names algorithm= or
    dataset= (config.shorthand_groups): a sweep's workers start meanwhile (runner.prestart).  In a fresh process,
    where no earlier composition stored the shorthands."""
    import subprocess
    import sys

    code = ("import sys; from dpbench import config; cfg = config.compose(['experiment=fig1_fixed']); "
            "print(sorted(m for m in ('sklearn', 'dpbench.algorithms', 'dpbench.data', 'matplotlib') "
            "if m in sys.modules)); "
            "cfg = config.compose(['dataset=openml/cpu_act', 'algorithm=ols']); "
            "print(cfg.datasets[0], cfg.algorithms[0].name)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout.splitlines()
    assert out == ["[]", "openml_361072 ols"]
