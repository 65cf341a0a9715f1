"""`python -m dpbench data list|verify|import`, run in-process; raw LIBSVM / Kaggle fixtures are made in tmp_path."""

import numpy as np
import pandas as pd
import pytest

from dpbench.__main__ import main as dpbench_main
from dpbench.cli.data import main
from dpbench.data import available, catalog, get_spec, groups, openml_source
from dpbench.data import mirror as mirror_files


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("DPBENCH_OFFLINE", "1")
    monkeypatch.setattr(openml_source, "cache_dir", lambda: tmp_path / "empty-openml-cache")
    catalog._encoded.cache_clear()


def run(capsys, *argv):
    code = main(list(map(str, argv)))
    return code, capsys.readouterr().out.splitlines()


def dataset_lines(lines):
    """{dataset name: its line}: the name is the first (list) or second (verify, import) word."""
    out = {}
    for line in lines:
        name = next((w for w in line.split()[:2] if w in available()), None)
        if name:
            out[name] = line
    return out


# ------------------------------------------------------------------ list


def test_list_marks_every_set_missing_in_an_empty_dir(capsys, tmp_path):
    code, lines = run(capsys, "list", "--data-dir", tmp_path)
    rows = dataset_lines(lines)
    assert code == 0 and list(rows) == available()
    assert all(" MISSING " in line for name, line in rows.items() if not get_spec(name).generated)
    assert all(" generated " in rows[n] for n in ("synthetic", "paper003_synthetic", "paper004_synthetic"))
    assert "7797  613" in rows["openml_361075"] and "isolet" in rows["openml_361075"]
    assert str(tmp_path / "classification" / "creditcard.parquet") in rows["creditcard"]


def test_list_on_the_mirror(capsys, mirror):
    code, lines = run(capsys, "list", "--data-dir", mirror)
    rows = dataset_lines(lines)
    assert code == 0 and len(rows) == 50  # 33 OpenML + 5 classification + 10 of paper 003 + 2 generators
    for name, line in rows.items():
        status = catalog.availability(name, mirror)[0]
        assert (" MISSING " in line) == (status == "missing") and (" mirror " in line) == (status == "mirror")
    assert " 241600   15  mirror " in rows["openml_361104"]


def test_list_through_the_package_entry_point(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv(catalog.DATA_DIR_ENV, str(tmp_path))
    assert dpbench_main(["data", "list"]) == 0
    assert f"data directory: {tmp_path}" in capsys.readouterr().out


# ------------------------------------------------------------------ verify


def test_verify_the_mirror(capsys, mirror):
    code, lines = run(capsys, "verify", "--data-dir", mirror)
    rows = dataset_lines(lines)
    assert len(rows) == 47  # every dataset but the generators
    for name, line in rows.items():
        path = catalog.mirror_path(name, mirror)  # None: no source provides it (paper 003's missing four)
        expected = "MISSING" if path is None or not path.is_file() else "OK"
        assert line.startswith(expected), line
    assert code == 0


def test_verify_flags_a_bad_file_and_a_bad_manifest(capsys, tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(100, 22)), columns=[f"c{j}" for j in range(22)])
    (tmp_path / "openml").mkdir()
    frame.to_parquet(tmp_path / "openml" / "361072.parquet")
    pd.DataFrame([{"task_id": 361072, "rows": 100, "columns": 21, "sha256": "0" * 64}]).to_csv(
        tmp_path / "openml" / "MANIFEST.csv", index=False
    )
    code, lines = run(capsys, "verify", "--data-dir", tmp_path)
    line = dataset_lines(lines)["openml_361072"]
    assert code == 1 and line.startswith("MISMATCH")
    assert "sha256 differs" in line and "n 100 != paper 8192" in line and "rows 100" not in line


def test_verify_without_a_directory(capsys, tmp_path):
    code, lines = run(capsys, "verify", "--data-dir", tmp_path / "nowhere")
    assert code == 2 and "no data directory" in lines[0]


# ------------------------------------------------------------------ import --from-raw


def write_libsvm(path, X, y):
    with open(path, "w") as fh:
        for row, label in zip(X, y, strict=True):
            feats = " ".join(f"{j + 1}:{v:g}" for j, v in enumerate(row) if v != 0)
            fh.write(f"{'+1' if label else '-1'} {feats}\n")


def make_raw(raw):
    """Small files in the published formats; returns what the mirror must contain."""
    rng = np.random.default_rng(5)
    raw.mkdir()
    cod = {s: (np.round(rng.normal(size=(n, 8)) * 8) / 8, rng.random(n) < 1 / 3) for s, n in (("tr", 30), ("te", 60))}
    write_libsvm(raw / "cod-rna", *cod["tr"])
    write_libsvm(raw / "cod-rna.t", *cod["te"])
    a9a = {s: (rng.random((n, 123)) < 0.1, rng.random(n) < 0.25) for s, n in (("tr", 40), ("te", 20))}
    a9a["te"][0][:, 122] = False  # like the real a9a.t, the test file never uses feature 123
    write_libsvm(raw / "a9a", a9a["tr"][0].astype(float), a9a["tr"][1])
    write_libsvm(raw / "a9a.t", a9a["te"][0].astype(float), a9a["te"][1])
    n = 50
    credit = pd.DataFrame(
        np.round(rng.normal(size=(n, 30)), 3), columns=["Time"] + [f"V{j}" for j in range(1, 29)] + ["Amount"]
    )
    credit["Class"] = ['"1"' if k % 10 == 0 else '"0"' for k in range(n)]  # Kaggle quotes the class
    credit.to_csv(raw / "creditcard.csv", index=False, quoting=3)
    tenure = rng.integers(0, 72, n)
    tenure[:3] = 0
    telco = pd.DataFrame(
        {
            "customerID": [f"{k:04d}-ABCDE" for k in range(n)],
            "gender": rng.choice(["Female", "Male"], n),
            "SeniorCitizen": rng.integers(0, 2, n),
            "Partner": rng.choice(["Yes", "No"], n),
            "Dependents": rng.choice(["Yes", "No"], n),
            "tenure": tenure,
            "PhoneService": rng.choice(["Yes", "No"], n),
            "MultipleLines": rng.choice(["Yes", "No", "No phone service"], n),
            "InternetService": rng.choice(["DSL", "Fiber optic", "No"], n),
            **{
                c: rng.choice(["Yes", "No", "No internet service"], n)
                for c in (
                    "OnlineSecurity",
                    "OnlineBackup",
                    "DeviceProtection",
                    "TechSupport",
                    "StreamingTV",
                    "StreamingMovies",
                )
            },
            "Contract": rng.choice(["Month-to-month", "One year", "Two year"], n),
            "PaperlessBilling": rng.choice(["Yes", "No"], n),
            "PaymentMethod": rng.choice(
                ["Electronic check", "Mailed check", "Bank transfer (automatic)", "Credit card (automatic)"], n
            ),
            "MonthlyCharges": np.round(rng.uniform(18, 120, n), 2),
            "TotalCharges": [" " if t == 0 else f"{t * 50.5:.2f}" for t in tenure],
            "Churn": ["Yes" if k % 4 == 0 else "No" for k in range(n)],
        }
    )
    telco.to_csv(raw / "WA_Fn-UseC_-Telco-Customer-Churn.csv", index=False)
    cardio = pd.DataFrame(
        {
            "id": np.arange(n),
            "age": rng.integers(11000, 23000, n),
            "gender": rng.integers(1, 3, n),
            "height": rng.integers(150, 190, n),
            "weight": np.round(rng.uniform(50, 110, n), 1),
            "ap_hi": rng.integers(100, 160, n),
            "ap_lo": rng.integers(60, 100, n),
            "cholesterol": rng.integers(1, 4, n),
            "gluc": rng.integers(1, 4, n),
            "smoke": rng.integers(0, 2, n),
            "alco": rng.integers(0, 2, n),
            "active": rng.integers(0, 2, n),
            "cardio": np.arange(n) % 2,
        }
    )
    cardio.to_csv(raw / "cardio_train.csv", sep=";", index=False)
    return {"cod-rna": cod, "adult": a9a, "creditcard": credit, "telco": telco, "cardio": cardio}


def test_import_from_raw_round_trip(capsys, tmp_path):
    made = make_raw(tmp_path / "raw")
    out = tmp_path / "mirror"
    code, lines = run(capsys, "import", "--from-raw", tmp_path / "raw", "--out", out)
    assert code == 0, lines
    assert sum(line.startswith("wrote") for line in lines) == 5

    cod = catalog.load("cod-rna", out)
    np.testing.assert_array_equal(cod.X_train, made["cod-rna"]["tr"][0])
    np.testing.assert_array_equal(cod.y_test, made["cod-rna"]["te"][1])
    assert catalog.load("cod-rna", out, split="paper").n_train == 60

    adult = catalog.load("adult", out)
    assert (adult.d, adult.n_train, adult.n_test) == (123, 40, 20)
    np.testing.assert_array_equal(adult.X_test, made["adult"]["te"][0])

    credit = catalog.load("creditcard", out)
    assert (credit.d, credit.n_test) == (30, 10) and credit.y_train.sum() + credit.y_test.sum() == 5
    assert credit.y_test.sum() == 1  # stratified: 5 positives -> 1 in a test set of 10

    telco = catalog.load("telco", out)
    raw_telco = pd.read_parquet(out / "classification" / "telco.parquet")
    assert isinstance(raw_telco["Contract"].dtype, pd.CategoricalDtype) and raw_telco["TotalCharges"].isna().sum() == 3
    levels = sum(made["telco"][c].nunique() for c in get_spec("telco").schema.categorical)
    assert telco.d == levels + 3 and telco.n_train + telco.n_test == 50  # blank TotalCharges kept as 0
    np.testing.assert_array_equal(np.r_[telco.y_train, telco.y_test].sum(), 13)

    cardio = catalog.load("cardio", out)
    assert cardio.d == 5 + sum(
        made["cardio"][c].nunique() for c in ("gender", "cholesterol", "gluc", "smoke", "alco", "active")
    )

    manifest = mirror_files.read_manifest(out / "classification").set_index("name")
    assert list(manifest.index) == ["cod-rna", "adult", "creditcard", "telco", "cardio"]
    for name, row in manifest.iterrows():
        path = out / "classification" / f"{name}.parquet"
        assert row["sha256"] == mirror_files.sha256(path) and int(row["rows"]) == len(pd.read_parquet(path))
        assert row["matches_expected"].startswith("no:")  # tiny fixtures cannot match Table 2

    # verify: manifest rows agree with the files; only the paper's numbers differ
    code, lines = run(capsys, "verify", "--data-dir", out)
    rows = dataset_lines(lines)
    assert code == 1
    for name in groups()["classification_all"]:
        assert rows[name].startswith("MISMATCH") and "manifest" not in rows[name] and "sha256" not in rows[name]

    # re-importing one set replaces its manifest row instead of adding one
    code, _ = run(capsys, "import", "--from-raw", tmp_path / "raw", "--out", out, "--datasets", "telco")
    assert code == 0 and len(mirror_files.read_manifest(out / "classification")) == 5


def test_kaggle_csvs_written_from_the_mirror_import_back_to_the_same_data(capsys, tmp_path, mirror):
    """The raw-file path and the mirror path give the same Dataset on the real telco and cardio files."""
    raw = tmp_path / "raw"
    raw.mkdir()
    files = (("telco", "WA_Fn-UseC_-Telco-Customer-Churn.csv", ","), ("cardio", "cardio_train.csv", ";"))
    for name, file, sep in files:
        if not catalog.mirror_path(name, mirror).is_file():
            pytest.skip(f"{name} is not in the mirror {mirror}")
        frame = pd.read_parquet(catalog.mirror_path(name, mirror))
        if name == "telco":  # the published CSV has a blank where the mirror has NaN
            frame["TotalCharges"] = frame["TotalCharges"].map(lambda v: " " if pd.isna(v) else f"{v:g}")
        frame.to_csv(raw / file, sep=sep, index=False)
    code, _ = run(capsys, "import", "--from-raw", raw, "--out", tmp_path / "m", "--datasets", "telco", "cardio")
    assert code == 0
    for name in ("telco", "cardio"):
        a, b = catalog.load(name, mirror), catalog.load(name, tmp_path / "m")
        assert a.feature_names == b.feature_names and a.feature_types == b.feature_types
        np.testing.assert_array_equal(a.X_train, b.X_train)
        np.testing.assert_array_equal(a.y_test, b.y_test)


def test_import_from_raw_reports_what_is_absent(capsys, tmp_path):
    (tmp_path / "raw").mkdir()
    code, lines = run(capsys, "import", "--from-raw", tmp_path / "raw", "--out", tmp_path / "m")
    assert code == 1 and sum(line.startswith("skipped") for line in lines) == 5
    assert any("a9a + a9a.t not in" in line for line in lines)
    code, lines = run(capsys, "import", "--from-raw", tmp_path / "nowhere", "--out", tmp_path / "m")
    assert code == 2
    code, lines = run(
        capsys, "import", "--from-raw", tmp_path / "raw", "--out", tmp_path / "m", "--datasets", "openml_361072"
    )
    assert code == 1 and "does not come from raw files (it comes --from-openml)" in lines[0]
    with pytest.raises(ValueError, match="unknown dataset 'iris'"):
        main(["import", "--from-raw", str(tmp_path / "raw"), "--out", str(tmp_path / "m"), "--datasets", "iris"])


def test_import_requires_a_source(tmp_path):
    with pytest.raises(SystemExit):
        main(["import", "--out", str(tmp_path)])
