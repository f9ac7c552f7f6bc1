"""Progress and stops in the Python module (issue 32 "Stops and progress"): the progress counters
move point by point inside a single curve (not only when a whole chain finishes), and a stop
requested from Python (the progress callback raising, as Ctrl-C does) takes effect within a
second or two in the middle of a chain."""

import time

import pytest

import saddle
from saddle import _core


class _Seen(Exception):
    pass


def _stop_when(args, should_stop):
    """Runs the command with a progress callback that raises (as Ctrl-C does) as soon as
    should_stop(done, total) is true; returns the seconds from that request to the end of the call
    and the progress values seen."""
    seen = []
    stop_at = []

    def progress(done, total):
        seen.append((done, total))
        if should_stop(done, total):
            stop_at.append(time.monotonic())
            raise _Seen()

    with pytest.raises(_Seen):
        _core.run(args, progress, 0.02)
    return time.monotonic() - stop_at[0], seen


def test_progress_moves_within_one_chain_and_a_stop_is_prompt(tmp_path):
    # One chain (one setting, one activation) of 16 points: over 10 s on one thread, so the
    # counters are read many times while the chain is in progress.
    out = tmp_path / "p.csv"
    args = ["saddle", "slr", "erm", "--L", "2", "--nu", "2", "--lambda", "0.1", "--alpha", "0.5:8:16",
            "--activation", "softmax", "--threads", "1", "--no-progress", "--out", str(out)]
    # stop as soon as a point of the chain finished before the chain did
    latency, seen = _stop_when(args, lambda done, total: total > 0 and 0 < done < total)
    print(f"progress {seen[-1]}; stopped {latency:.2f} s after the request")
    assert seen[-1][1] == 16
    assert latency < 5.0  # promised: 1-2 s; generous for a loaded machine
    # The interrupted file holds no row of the cancelled chain and no timing line.
    text = out.read_text()
    assert "# timing:" not in text
    assert [l for l in text.splitlines() if not l.startswith("#")][1:] == []
    # The module is usable again afterwards.
    assert len(saddle.ridge(alpha=1)) == 1


def test_a_stop_inside_one_large_draw_is_prompt(tmp_path):
    # mc rmt at n = 2000, c = 2: one draw is products and one tridiagonal reduction of several
    # seconds each; they poll between blocks, so a stop requested from Python (the module never
    # ends its host: no watchdog here) takes effect well within 2 s. Before, the whole draw
    # (about 15 s) was finished first.
    out = tmp_path / "m.csv"
    args = ["saddle", "mc", "rmt", "--n", "2000", "--c", "2", "--gamma", "0.1", "--draws", "2",
            "--threads", "2", "--no-progress", "--out", str(out)]
    start = time.monotonic()
    latency, _ = _stop_when(args, lambda done, total: time.monotonic() - start > 3.0)
    print(f"mc rmt --n 2000: stopped {latency:.2f} s after the request")
    assert latency < 2.0
    assert "# timing:" not in out.read_text()
