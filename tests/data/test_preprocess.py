"""The shared preprocessing on small synthetic frames: one-hot convention, missing rows, labels, splits."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from dpbench.data.preprocess import Schema, encode, one_hot, split_indices


def mixed_frame(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "num1": rng.normal(size=n),
            "colour": pd.Categorical(
                rng.choice(["red", "blue", "green"], n), categories=["red", "green", "blue", "pink"]
            ),
            "num2": rng.integers(0, 100, n),
            "flag": pd.Categorical(rng.choice(["10", "2", "1"], n)),
            "target": rng.normal(size=n),
        }
    )


def test_one_hot_matches_the_authors_sklearn_pipeline():
    """k columns for k observed levels, sorted by value, categorical blocks first: the authors' ColumnTransformer."""
    frame = mixed_frame()
    X, names, types = one_hot(frame.iloc[:, :-1], ["colour", "flag"])
    ct = ColumnTransformer(
        [
            ("cat", OneHotEncoder(sparse_output=False, handle_unknown="ignore"), ["colour", "flag"]),
            ("num", FunctionTransformer(), ["num1", "num2"]),
        ]
    )
    np.testing.assert_array_equal(X, ct.fit_transform(frame.iloc[:, :-1]))
    assert names == ["colour=blue", "colour=green", "colour=red", "flag=1", "flag=10", "flag=2", "num1", "num2"]
    assert types == ["nominal"] * 6 + ["continuous"] * 2  # the unused level 'pink' gets no column
    assert X.dtype == np.float64 and np.all(X[:, :3].sum(axis=1) == 1)


def test_integer_categoricals_sort_numerically():
    frame = pd.DataFrame({"g": [3, 1, 2, 3, 1], "x": [0.5, 1.5, 2.5, 3.5, 4.5]})
    X, names, types = one_hot(frame, ["g"])
    assert names == ["g=1", "g=2", "g=3", "x"] and types == ["nominal"] * 3 + ["continuous"]
    np.testing.assert_array_equal(X[:, :3].argmax(axis=1), [2, 0, 1, 2, 0])


def test_undeclared_text_column_and_unknown_categorical_are_errors():
    with pytest.raises(ValueError, match="'city' is neither numeric nor declared categorical"):
        one_hot(pd.DataFrame({"city": ["a", "b"], "x": [1.0, 2.0]}), [])
    with pytest.raises(ValueError, match=r"categorical columns \['town'\] are not in the data"):
        one_hot(pd.DataFrame({"city": ["a", "b"]}), ["city", "town"])


def test_encode_regression_drops_incomplete_rows_and_reads_schema():
    frame = mixed_frame(50)
    frame.loc[3, "num1"] = np.nan
    frame.loc[7, "target"] = np.nan
    frame.loc[9, "colour"] = np.nan
    enc = encode(frame)  # the default schema: target last, categoricals from the dtype
    assert enc.X.shape == (47, 3 + 3 + 2) and enc.y.shape == (47,) and enc.n_columns == 4
    np.testing.assert_array_equal(enc.y, frame.drop(index=[3, 7, 9])["target"].to_numpy())
    assert enc.feature_types.count("nominal") == 6 and enc.test_mask is None
    assert not enc.X.flags.writeable and not enc.y.flags.writeable


def telco_like():
    return pd.DataFrame(
        {
            "customerID": pd.array(["a", "b", "c", "d", "e", "f"], dtype="string"),
            "gender": pd.Categorical(["F", "M", "F", "M", "F", "M"]),
            "SeniorCitizen": [0, 1, 0, 0, 1, 0],
            "tenure": [0, 5, 10, 0, 3, 8],
            "TotalCharges": [np.nan, 50.0, 100.0, np.nan, 30.0, 80.0],
            "Churn": pd.Categorical(["No", "Yes", "No", "No", "Yes", "No"]),
        }
    )


def test_encode_classification_labels_fill_and_drop():
    schema = Schema(
        label="Churn",
        positive="Yes",
        drop=("customerID",),
        categorical=("gender", "SeniorCitizen"),
        fill_zero=("TotalCharges",),
    )
    enc = encode(telco_like(), schema, "classification")
    assert enc.feature_names == ("gender=F", "gender=M", "SeniorCitizen=0", "SeniorCitizen=1", "tenure", "TotalCharges")
    np.testing.assert_array_equal(enc.y, [0, 1, 0, 0, 1, 0])
    np.testing.assert_array_equal(enc.X[:, -1], [0, 50, 100, 0, 30, 80])
    # without the fill, rows with a blank are dropped
    enc = encode(telco_like(), Schema(label="Churn", positive="Yes", drop=("customerID",), categorical=("gender",)),
                 "classification")
    assert enc.X.shape == (4, 5)


def test_bad_labels_are_an_error():
    frame = telco_like()
    frame["Churn"] = ["no", "yes"] * 3
    with pytest.raises(ValueError, match="label 'Churn' must take two values, one of them 'Yes'"):
        encode(frame, Schema(label="Churn", positive="Yes", drop=("customerID",)), "classification")


def test_official_split_column_becomes_the_test_mask():
    frame = pd.DataFrame(
        {
            "f1": [1.0, 2.0, np.nan, 4.0],
            "y": np.array([0, 1, 1, 0], dtype=np.int8),
            "split": pd.Categorical(["train", "train", "test", "test"]),
        }
    )
    enc = encode(frame, Schema(label="y"), "classification", split_column="split")
    np.testing.assert_array_equal(enc.test_mask, [False, False, True])
    assert enc.feature_names == ("f1",)


@pytest.mark.parametrize("stratify", [False, True])
def test_split_indices_reproduce_train_test_split(stratify):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1001, 3))
    y = (rng.random(1001) < 0.3).astype(float)
    train, test = split_indices(y, 42, stratify)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, random_state=42, stratify=y if stratify else None)
    np.testing.assert_array_equal(X[train], X_tr)
    np.testing.assert_array_equal(y[test], y_te)
    assert len(test) == 201
