"""Every CSV is CSV (issue 32): the committed files under data/ and what the program writes are
read by Python's csv module and by pandas with one field per header column; a field holding a
comma is quoted and read back whole."""

import csv
import glob
import os

import pytest

from saddle import _command

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
COMMITTED = sorted(glob.glob(os.path.join(ROOT, "data", "**", "*.csv"), recursive=True))


def _records(path):
    with open(path, newline="", encoding="utf-8") as f:
        lines = [line for line in f if not line.startswith("#")]
    return [r for r in csv.reader(lines, strict=True) if r]


def _check(path):
    rows = _records(path)
    assert rows, f"{path}: no header"
    n = len(rows[0])
    ragged = [i + 1 for i, r in enumerate(rows) if len(r) != n]
    assert not ragged, f"{path}: records {ragged[:5]} do not have {n} fields"
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(path, comment="#", keep_default_na=False, dtype=str)
    assert list(df.columns) == rows[0]
    assert len(df) == len(rows) - 1
    assert df.values.tolist() == rows[1:]  # the same fields, '#' inside quotes included


def test_there_are_committed_csvs():
    assert len(COMMITTED) >= 10


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: os.path.relpath(p, ROOT))
def test_committed_csv_is_readable(path):
    _check(path)


@pytest.mark.parametrize("args", [
    ["ridge", "--alpha", "0.5,2", "--lambda", "0.1"],
    ["validate", "slr", "--mode", "population", "--D", "8", "--seeds", "2", "--n-test", "100"],
    ["mc", "rmt", "--n", "16", "--c", "0.25", "--gamma", "0.1", "--draws", "2", "--model", "true,ridge"],
    ["rmt", "attention", "--c", "0.5", "--gamma", "0.1"],
    ["slr", "population", "--nu", "1,2", "--L", "2"],
])
def test_written_csv_is_readable(cli, tmp_path, args):
    out = tmp_path / "o.csv"
    r = cli(*args, "--out", str(out))
    assert r.returncode == 0, r.stderr
    _check(str(out))


def test_module_reader_keeps_quoted_commas(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text('# saddle 0\n# command: x\na,note,b\n1,"x, y ""z""",2\n3,"#4",5\n', encoding="utf-8")
    columns, rows, attrs = _command.read_csv(str(p))
    assert columns == ["a", "note", "b"]
    assert rows == [["1", 'x, y "z"', "2"], ["3", "#4", "5"]]
    _check(str(p))
