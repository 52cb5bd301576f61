"""The kernel-to-task mapping of the token simulator (dataflow/timing.py), against hand arithmetic."""
from streamdsl.dfg.timing import spread


def test_iterations_spread_over_the_kernels_own_cycles():
    # 3094 cycles, a 30-deep pipeline, 1028 stream iterations: (3094 - 30) / 1027 = 2.98 -> II 3, and the
    # latency that makes the task 3094 cycles: 3094 - 1027 * 3 = 13 (II rounded up to 4 made it 4138)
    t = spread("proj", 3094, 30, 1028)
    assert (t.ii, t.lat, t.latency) == (3, 13, 3094)
    # 1445 cycles over 55 iterations, 276 deep: 21.6 -> II 22, lat 257
    t = spread("attn", 1445, 276, 55)
    assert (t.ii, t.lat, t.latency) == (22, 257, 1445)


def test_an_ii_rounded_up_past_the_kernels_cycles_is_rounded_down():
    # 1607 cycles over 1046 iterations, 39 deep: (1607 - 39) / 1045 = 1.5004 -> II 2 would take 2091 cycles
    # (the latency cannot go below a cycle): II 1 and the rest in the latency, 1607 cycles
    t = spread("fc2", 1607, 39, 1046)
    assert (t.ii, t.lat, t.latency) == (1, 562, 1607)


def test_a_fifo_moves_at_most_a_token_a_cycle():
    # 4100 weight rows in a kernel of 3012 cycles: a row a cycle is the stream's limit, 4100 cycles
    t = spread("fc", 3012, 30, 4100)
    assert (t.ii, t.latency) == (1, 4100)


def test_one_iteration_takes_the_whole_kernel():
    t = spread("k", 500, 20, 1)
    assert (t.iters, t.latency) == (1, 500)


def test_a_dma_token_is_there_when_its_last_word_is():
    # a 1024-float vector as one token (4 KiB), alone in its region, gets the U55C's HBM channels that shorten
    # it (14.375 GB/s each, 57.5 B a cycle at 250 MHz); its first beat comes DMA_LATENCY cycles after the request
    # and the token is whole when its last word arrives
    import streamdsl as sd
    from streamdsl import f32
    from streamdsl.dfg.channels import DMA_LATENCY, dma_timing

    @sd.kernel
    def neg(x: f32[1, 1024]) -> f32[1, 1024]:
        y: f32[1, 1024] = 0.0
        for j in range(1024):
            y[0, j] = -x[0, j]
        return y

    @sd.dataflow
    def one(x: f32[1, 1024]) -> f32[1, 1024]:
        y = neg(x)
        return y

    g = sd.schedule(one)
    timing = g.timing("u55c")
    (d,) = [d for d in timing.dmas if d.direction == "load"]
    task = timing["load_x"]
    per_cycle = d.gbs * 1e9 / 250e6
    assert d.token_bytes == 4096 and d.gbs == d.channels * 14.375
    assert (task.iters, task.ii, task.lat) == (1, *dma_timing(1, 4096, per_cycle))
    assert task.lat == DMA_LATENCY - 1 + -(-4096 // per_cycle)  # the last word, not the first
