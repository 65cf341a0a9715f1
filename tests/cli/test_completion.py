"""Tab completion (`dpbench sweep -sc install=bash`): commands, and group options including nested ones."""

import pytest

from dpbench.__main__ import main


@pytest.mark.parametrize("line, expected, absent", [
    ("dpbench sw", {"sweep"}, {"plot"}),
    ("dpbench sweep experiment=smoke/fig1", {"experiment=smoke/fig1", "experiment=smoke/fig12"},
     {"experiment=fig1"}),
    ("dpbench sweep experiment=smo", {"experiment=smoke/paper001", "experiment=smoke/robust_label"},
     {"experiment=fig1"}),
    ("dpbench sweep runner=", {"runner=dask", "runner=local"}, set()),
    ("dpbench sweep +experiment=fig1_", {"+experiment=fig1_fixed", "+experiment=fig1_split"}, set()),
])
def test_completion(line, expected, absent, monkeypatch, capsys):
    monkeypatch.setenv("COMP_LINE", line)
    assert main(["-sc", "query=bash"]) == 0
    words = set(capsys.readouterr().out.split())
    assert expected <= words and not (absent & words)
