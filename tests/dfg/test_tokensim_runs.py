"""The token simulator against its timing model evaluated the slow way.

``simulate`` issues long runs of a task's iterations with NumPy and retries a
blocked task only once the value it waits for has moved.  The reference here
is the docstring's model written out directly: sweep every task, issue its
next iteration whenever all it depends on is known, until nothing moves.
Random graphs (bursty explicit schedules, proportional ones, fill/drain,
shallow and unbounded FIFOs, deadlocks) must give identical results.
"""
import random

import numpy as np
import pytest

from streamdsl.dfg import tokensim
from streamdsl.dfg.tokensim import DeadlockError, Edge, Task, simulate


def _writer(t, j, n):
    return t.fill + -(-((j + 1) * (t.iters - t.fill)) // n) - 1


def _reader(t, j, n):
    return (j * (t.iters - t.drain)) // n


def reference(tasks, edges, depths, starts=None):
    """(issue times per task, write and read times per edge) or None when some iteration never issues."""
    starts = starts or {}
    by = {t.name: t for t in tasks}
    wt = {e.name: [None] * e.tokens for e in edges}
    rt = {e.name: [None] * e.tokens for e in edges}
    reads = {e.name: e.reads or [_reader(by[e.dst], j, e.tokens) for j in range(e.tokens)] for e in edges}
    writes = {e.name: e.writes or [_writer(by[e.src], j, e.tokens) for j in range(e.tokens)] for e in edges}
    issue = {t.name: [] for t in tasks}
    full = {t.name: 0 for t in tasks}  # cycles waited for a free slot with the inputs there
    moved = True
    while moved:
        moved = False
        for t in tasks:
            s = issue[t.name]
            while len(s) < t.iters:
                k = len(s)
                need = [wt[e.name][j] for e in edges if e.dst == t.name for j in range(e.tokens) if reads[e.name][j] == k]
                slots = [rt[e.name][j - depths[e.name]] for e in edges if e.src == t.name and depths.get(e.name) is not None
                         for j in range(depths[e.name], e.tokens) if writes[e.name][j] == k]
                if None in need or None in slots:
                    break
                ready = max([starts.get(t.name, 0) if k == 0 else s[-1] + t.ii] + need)
                at = max([ready] + [r + 1 - t.lat for r in slots])
                full[t.name] += at - ready
                s.append(at)
                for e in edges:
                    for j in range(e.tokens):
                        if e.dst == t.name and reads[e.name][j] == k:
                            rt[e.name][j] = at
                        if e.src == t.name and writes[e.name][j] == k:
                            wt[e.name][j] = at + t.lat
                moved = True
    if any(len(issue[t.name]) < t.iters for t in tasks):
        return None
    return issue, wt, rt, full


def _bursty(rng, iters, tokens):
    """A non-decreasing schedule of ``tokens`` over ``iters`` iterations: some iterations move several, some none."""
    return tuple(sorted(rng.randrange(iters) for _ in range(tokens)))


def random_graph(seed):
    rng = random.Random(seed)
    n = rng.randint(3, 7)
    tasks = []
    for i in range(n):
        iters = rng.choice([1, 3, 40, 90, 150])
        fill = drain = rng.randint(0, iters // 3) if rng.random() < 0.2 else 0
        tasks.append(Task(f"t{i}", iters, rng.randint(1, 4), rng.randint(1, 40), fill, drain))
    edges = []
    for v in range(1, n):
        for u in rng.sample(range(v), k=min(v, rng.randint(1, 2))):
            src, dst = tasks[u], tasks[v]
            tokens = rng.choice([1, 5, min(src.iters, dst.iters), 60])
            writes = _bursty(rng, src.iters, tokens) if rng.random() < 0.4 else None
            reads = _bursty(rng, dst.iters, tokens) if rng.random() < 0.4 else None
            if rng.random() < 0.1 and writes is None:
                writes = tuple(rng.randrange(src.iters + 2) for _ in range(tokens))  # out of order, some never written
            edges.append(Edge(f"e{len(edges)}", src.name, dst.name, tokens, writes, reads))
    depths = {e.name: rng.choice([None, None, 1, 2, 3, 8, 64, 256]) if rng.random() < 0.5 else max(1, e.tokens)
              for e in edges}
    starts = {t.name: rng.randint(0, 50) for t in tasks} if rng.random() < 0.3 else None
    return tasks, edges, depths, starts


@pytest.mark.parametrize("seed", range(150))
def test_simulate_is_the_timing_model(seed):
    tasks, edges, depths, starts = random_graph(seed)
    want = reference(tasks, edges, depths, starts)
    if want is None:
        with pytest.raises(DeadlockError):
            simulate(tasks, edges, depths, starts)
        return
    issue, wt, rt, full = want
    got = simulate(tasks, edges, depths, starts, trace=True)
    assert {n: list(v.issues) for n, v in got.trace.tasks.items()} == issue
    assert got.backpressure == full
    assert got.cycles == max((issue[t.name][-1] + t.lat for t in tasks if issue[t.name]), default=0)
    assert got.stall == {t.name: sum(max(0, b - a - t.ii) for a, b in zip(issue[t.name], issue[t.name][1:])) for t in tasks}
    for e in edges:  # peak tokens in flight, counted over the token times
        w, r = np.array(wt[e.name]), np.array(rt[e.name])
        times = np.unique(np.concatenate([w, r])) if e.tokens else []
        peak = max([0] + [int((w <= c).sum() - (r < c).sum()) for c in times])
        assert got.peak[e.name] == peak


@pytest.mark.parametrize("seed", range(40))
def test_long_runs_and_step_by_step_agree(seed, monkeypatch):
    """The NumPy runs change nothing: the same simulation with every iteration issued one by one."""
    tasks, edges, depths, starts = random_graph(1000 + seed)
    monkeypatch.setattr(tokensim, "SWEEPS", 0)  # the event simulation, whose two ways of issuing are compared
    try:
        fast = simulate(tasks, edges, depths, starts)
    except DeadlockError as err:
        monkeypatch.setattr(tokensim, "VECTOR_RUN", 1 << 60)
        with pytest.raises(DeadlockError) as slow:
            simulate(tasks, edges, depths, starts)
        assert slow.value.message == err.message
        return
    monkeypatch.setattr(tokensim, "VECTOR_RUN", 1 << 60)
    slow = simulate(tasks, edges, depths, starts)
    for a in ("cycles", "busy", "stall", "peak", "starts", "backpressure"):
        assert getattr(fast, a) == getattr(slow, a), a


def test_whole_task_sweeps_are_the_timing_model():
    """A run without a trace is solved a whole task at a time (``_swept``): where it answers, every figure is the
    reference's; where it does not (a deadlock, a token never written, a cycle), the event simulation runs."""
    answered = 0
    for seed in range(150):
        tasks, edges, depths, starts = random_graph(seed)
        want = reference(tasks, edges, depths, starts)
        got = tokensim._swept(tasks, edges, depths, starts or {})
        if got is None:
            continue
        assert want is not None, seed
        answered += 1
        issue, wt, rt, full = want
        assert got.starts == {t.name: issue[t.name][0] for t in tasks}
        assert got.backpressure == full
        assert got.cycles == max(issue[t.name][-1] + t.lat for t in tasks)
        assert got.stall == {t.name: sum(max(0, b - a - t.ii) for a, b in zip(issue[t.name], issue[t.name][1:]))
                             for t in tasks}
        assert got.busy == {t.name: t.latency for t in tasks}
        for e in edges:
            w, r = np.array(wt[e.name]), np.array(rt[e.name])
            times = np.unique(np.concatenate([w, r])) if e.tokens else []
            assert got.peak[e.name] == max([0] + [int((w <= c).sum() - (r < c).sum()) for c in times])
        event = simulate(tasks, edges, depths, starts, trace=True)  # the event simulation (a trace: no sweeps)
        for a in ("cycles", "busy", "stall", "peak", "starts", "backpressure"):
            assert getattr(event, a) == getattr(got, a), (seed, a)
    assert answered >= 75  # most random graphs are solved by sweeps (the rest: deadlocks, tokens never moved)


def test_a_fixpoint_the_event_order_cannot_reach_is_a_deadlock():
    """A slow-to-land branch (B, latency 200) beside a fast one that D buffers whole at its first iteration: the
    times alone have a fixpoint (B may issue before D frees the slot its write lands in), but each waits for the
    other to be known, so the event simulation deadlocks, and so must every run."""
    tasks = [Task("A", 16, 1, 3), Task("B", 16, 1, 200), Task("C", 16, 1, 3), Task("D", 16, 1, 1)]
    first = tuple([0] * 16)
    for reads in (first, None):
        edges = [Edge("ab", "A", "B", 16), Edge("bd", "B", "D", 16), Edge("ac", "A", "C", 16),
                 Edge("cd", "C", "D", 16, None, reads)]
        depths = {"ab": 1, "bd": 2, "ac": None, "cd": None}
        want = reference(tasks, edges, depths)
        if reads is first:
            assert want is None
            assert tokensim._swept(tasks, edges, depths, {}) is None
            with pytest.raises(DeadlockError):
                simulate(tasks, edges, depths)
        else:  # the same graph reading its tokens as they come: no deadlock, the sweeps answer
            assert want is not None
            got = tokensim._swept(tasks, edges, depths, {})
            assert got is not None and got.cycles == max(want[0][t.name][-1] + t.lat for t in tasks)


@pytest.mark.parametrize("seed", range(30))
def test_diamonds_with_slow_branches(seed):
    """Reconvergent branches of very different latencies over shallow FIFOs, one input buffered whole or in
    bursts: the run without a trace is the reference's, deadlocks included."""
    rng = random.Random(seed)
    for _ in range(20):
        n = rng.choice([8, 16, 40])
        tasks = [Task("A", n, 1, rng.randint(1, 5)), Task("B", n, 1, rng.choice([1, 5, 50, 200])),
                 Task("C", n, 1, rng.randint(1, 5)), Task("D", n, 1, rng.randint(1, 5))]
        reads = rng.choice([None, tuple([0] * n), tuple(sorted(rng.randrange(n) for _ in range(n)))])
        edges = [Edge("ab", "A", "B", n), Edge("bd", "B", "D", n), Edge("ac", "A", "C", n),
                 Edge("cd", "C", "D", n, None, reads)]
        depths = {"ab": rng.choice([1, 2, 4, None]), "bd": rng.choice([1, 2, 4, None]),
                  "ac": rng.choice([1, 2, None, None]), "cd": rng.choice([1, 2, None, None])}
        want = reference(tasks, edges, depths)
        if want is None:
            with pytest.raises(DeadlockError):
                simulate(tasks, edges, depths)
            continue
        got = simulate(tasks, edges, depths)
        issue, _, _, full = want
        assert got.cycles == max(issue[t.name][-1] + t.lat for t in tasks)
        assert got.starts == {t.name: issue[t.name][0] for t in tasks}
        assert got.backpressure == full


def test_a_task_is_busy_no_longer_than_the_run():
    """busy is a task's unstalled latency (its iterations' II, the last one's latency), so start + busy + stall is
    when it finished, within the run (busy was iterations x II: a task of 3 iterations at II 185,608 was busy
    556,824 cycles of a 371,314-cycle run)."""
    from streamdsl.dfg.tokensim import Edge, Task, simulate

    tasks = [Task("p", 3, 1000, 10), Task("c", 3, 1000, 10)]
    res = simulate(tasks, [Edge("e", "p", "c", 3)], {"e": 1})
    for t in tasks:
        assert res.busy[t.name] == t.latency == 2010
        assert res.starts[t.name] + res.busy[t.name] + res.stall[t.name] <= res.cycles
