"""Progress bars: on stderr when forced (STREAMDSL_PROGRESS=1), silent when quiet, a no-op object when off."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from streamdsl import progress
from streamdsl.progress import bar, run, set_quiet


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    monkeypatch.delenv("STREAMDSL_PROGRESS", raising=False)
    monkeypatch.delenv("STREAMDSL_QUIET", raising=False)
    set_quiet(None)
    yield
    set_quiet(None)


def test_forced_bar_writes_to_stderr_only(monkeypatch, capsys):
    monkeypatch.setenv("STREAMDSL_PROGRESS", "1")
    assert list(bar(range(3), desc="layers", unit="layer")) == [0, 1, 2]
    out, err = capsys.readouterr()
    assert out == "" and "layers" in err and "3/3" in err


def test_counter_form_for_exploration(monkeypatch, capsys):
    monkeypatch.setenv("STREAMDSL_PROGRESS", "1")
    with bar(total=4, desc="explore") as b:
        for _ in range(4):
            b.update(1)
    assert "explore" in capsys.readouterr().err


@pytest.mark.parametrize("how", ["arg", "env", "set_quiet", "not a terminal"])
def test_quiet_bar_writes_nothing(how, monkeypatch, capsys):
    if how != "not a terminal":
        monkeypatch.setenv("STREAMDSL_PROGRESS", "1")  # quiet wins over forcing
    if how == "env":
        monkeypatch.setenv("STREAMDSL_QUIET", "1")
    if how == "set_quiet":
        set_quiet(True)
    b = bar(range(3), desc="layers", quiet=True if how == "arg" else None)
    assert list(b) == [0, 1, 2]
    with bar(total=2, desc="explore", quiet=True if how == "arg" else None) as c:
        c.update(1)
        c.set_postfix_str("x")
    assert capsys.readouterr() == ("", "")
    assert not progress.enabled(True if how == "arg" else None)


def test_off_bar_iterates_the_iterable_itself():
    items = [1, 2, 3]
    assert type(iter(bar(items, quiet=True))) is type(iter(items))  # no wrapper in the hot loop


def test_run_with_a_bar_returns_what_subprocess_run_returns(monkeypatch, capsys):
    monkeypatch.setenv("STREAMDSL_PROGRESS", "1")
    cmd = [sys.executable, "-c", "import sys, time; time.sleep(0.5); print('out'); print('err', file=sys.stderr); sys.exit(3)"]
    r = run(cmd, desc="g++ demo")
    assert (r.returncode, r.stdout, r.stderr) == (3, "out\n", "err\n")
    assert "g++ demo" in capsys.readouterr().err
    with pytest.raises(subprocess.TimeoutExpired):
        run([sys.executable, "-c", "import time; time.sleep(30)"], desc="slow", timeout=0.5)
    assert "slow" in capsys.readouterr().err
    r = run(cmd, desc="quiet", quiet=True)
    assert r.returncode == 3 and capsys.readouterr().err == ""


def test_generate_shows_tokens_and_layers(monkeypatch, capsys):
    from streamdsl.library.llm.config import tiny
    from streamdsl.library.llm.models import llama
    from streamdsl.library.llm.weights import random_weights

    c = tiny("llama")
    m = llama(c, max_len=8).load(random_weights(c, seed=0))
    quiet = m.generate([1, 2, 3], 2)
    assert capsys.readouterr().err == ""  # pytest's stderr is not a terminal: off
    monkeypatch.setenv("STREAMDSL_PROGRESS", "1")
    assert m.generate([1, 2, 3], 2) == quiet
    err = capsys.readouterr().err
    assert "generate" in err and "2/2" in err and "prefill" in err and "layer" in err
    assert np.asarray(quiet).shape == (2,)


def test_waiting_ticks_the_elapsed_time_of_a_silent_call(monkeypatch, capsys):
    import time

    from streamdsl.progress import waiting

    monkeypatch.setenv("STREAMDSL_PROGRESS", "1")
    with waiting("building the tokenizer", tick=0.01):
        time.sleep(0.05)
    out, err = capsys.readouterr()
    assert out == "" and "building the tokenizer: 00:00" in err
    monkeypatch.setenv("STREAMDSL_PROGRESS", "0")
    with waiting("silent"):
        pass
    assert capsys.readouterr().err == ""
