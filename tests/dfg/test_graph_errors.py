"""Every misuse of a dataflow function or schedule is a located error at the user's line."""
import linecache

import numpy as np
import pytest

from df_kernels import bypass, ffn, gemm8, relu8
from streamdsl import f32
from streamdsl.dfg import DataflowSchedule, DeadlockError, dataflow
from streamdsl.errors import KernelSyntaxError, KernelTypeError, ScheduleError


def at(err, snippet: str) -> str:
    """The error points into this file, at a line containing ``snippet``; returns the rendered error."""
    loc = err.value.loc
    assert loc is not None and loc.file == __file__, loc
    assert snippet in linecache.getline(loc.file, loc.line), (loc, linecache.getline(loc.file, loc.line))
    return str(err.value)


@pytest.fixture
def g():
    return DataflowSchedule(ffn)


# ------------------------------------------------------------ the body
def test_loop_in_body_is_a_syntax_error():
    @dataflow
    def looped(x: f32[8, 8]) -> f32[8, 8]:
        y = relu8(x)
        for i in range(2):  # LOOP
            pass
        return y

    with pytest.raises(KernelSyntaxError) as err:
        looped.ir
    assert "cannot contain a 'for' statement" in at(err, "# LOOP")


def test_local_tensor_in_body_is_a_syntax_error():
    @dataflow
    def alloc(x: f32[8, 8]) -> f32[8, 8]:
        t: f32[8, 8] = 0.0  # ALLOC
        y = relu8(x)
        return y

    with pytest.raises(KernelSyntaxError) as err:
        alloc.ir
    at(err, "# ALLOC")


def test_non_kernel_call_is_a_syntax_error():
    @dataflow
    def numpy_call(x: f32[8, 8]) -> f32[8, 8]:
        y = np.maximum(x, 0)  # NUMPY
        return y

    with pytest.raises(KernelSyntaxError) as err:
        numpy_call.ir
    at(err, "# NUMPY")


def test_unused_result_is_reported():
    @dataflow
    def dangling(x: f32[8, 8]) -> f32[8, 8]:
        y = relu8(x)
        z = relu8(x)  # DANGLING
        return y

    with pytest.raises(KernelSyntaxError) as err:
        dangling.ir
    assert "result 'z' of 'relu' is never used" in at(err, "# DANGLING")


def test_returning_an_input_is_reported():
    @dataflow
    def passthrough(x: f32[8, 8]) -> f32[8, 8]:
        return x  # PASS

    with pytest.raises(KernelSyntaxError) as err:
        passthrough.ir
    at(err, "# PASS")


def test_nested_dataflow_is_reported():
    @dataflow
    def outer(x: f32[8, 8], w: f32[8, 8]) -> f32[8, 8]:
        y = ffn(x, w, w)  # NESTED
        return y

    with pytest.raises(KernelSyntaxError) as err:
        outer.ir
    at(err, "# NESTED")


def test_wrong_argument_count_when_called():
    with pytest.raises(KernelTypeError) as err:
        ffn(np.zeros((8, 8), np.float32))  # CALL
    at(err, "# CALL")


# ------------------------------------------------------------ the schedule
def test_schedule_of_a_kernel_is_refused():
    with pytest.raises(ScheduleError) as err:
        DataflowSchedule(gemm8)  # KERNEL
    assert "@sd.dataflow" in at(err, "# KERNEL")


def test_unknown_edge_lists_the_edges(g):
    with pytest.raises(ScheduleError) as err:
        g.edge("z")  # EDGE
    assert "x, w1, w2, h, r, y" in at(err, "# EDGE")


def test_unknown_task_lists_the_tasks(g):
    with pytest.raises(ScheduleError) as err:
        g.task("softmax")  # TASK
    assert "gemm_1, relu, gemm_2" in at(err, "# TASK")


def test_strings_are_not_handles(g):
    with pytest.raises(ScheduleError) as err:
        g.stream("h", tile=(2, 2))  # STRING
    assert 'g.edge("h")' in at(err, "# STRING")
    with pytest.raises(ScheduleError) as err:
        g.schedule("relu")  # STRTASK
    assert 'g.task("relu")' in at(err, "# STRTASK")


def test_tile_must_divide_the_shape(g):
    with pytest.raises(ScheduleError) as err:
        g.stream(g.edge("h"), tile=(3, 2))  # DIVIDE
    text = at(err, "# DIVIDE")
    assert "does not divide" in text and "dim 0 can be tiled by 1, 2, 4, 8" in text


def test_tile_rank_and_order_are_checked(g):
    with pytest.raises(ScheduleError) as err:
        g.stream(g.edge("h"), tile=(2,))  # RANK
    at(err, "# RANK")
    with pytest.raises(ScheduleError) as err:
        g.stream(g.edge("h"), tile=(2, 2), order=(0, 0))  # ORDER
    assert "not a permutation" in at(err, "# ORDER")


def test_tile_or_itensor_exactly_one(g):
    with pytest.raises(ScheduleError) as err:
        g.stream(g.edge("h"))  # NEITHER
    at(err, "# NEITHER")
    with pytest.raises(ScheduleError) as err:
        g.stream(g.edge("h"), itensor="itensor<4x2xf32, [4,2]*[2,4], (d0,d1)->(d1,d0)>", order=(1, 0))  # BOTH
    at(err, "# BOTH")


def test_itensor_of_another_tensor_is_refused(g):
    with pytest.raises(ScheduleError) as err:
        g.stream(g.edge("h"), itensor="itensor<4x2xf32, [2,2]*[2,4], (d0,d1)->(d1,d0)>")  # SHAPE
    assert "covers a tensor of shape (8, 4)" in at(err, "# SHAPE")
    with pytest.raises(ScheduleError) as err:
        g.stream(g.edge("h"), itensor="itensor<4x2xi8, [4,2]*[2,4], (d0,d1)->(d1,d0)>")  # DTYPE
    at(err, "# DTYPE")
    with pytest.raises(ScheduleError) as err:
        g.stream(g.edge("h"), itensor="tensor<8x8>")  # PARSE
    at(err, "# PARSE")


def test_stream_sides_are_checked(g):
    with pytest.raises(ScheduleError) as err:
        g.stream(g.edge("x"), tile=(2, 2), side="producer")  # INPUT
    assert "graph input" in at(err, "# INPUT")
    with pytest.raises(ScheduleError) as err:
        g.stream(g.edge("y"), tile=(2, 2), side="consumer")  # OUTPUT
    at(err, "# OUTPUT")
    with pytest.raises(ScheduleError) as err:
        g.stream(g.edge("h"), tile=(2, 2), side=g.task("gemm_2"))  # NOTREADER
    assert "does not read edge 'h'" in at(err, "# NOTREADER")
    with pytest.raises(ScheduleError) as err:
        g.stream(g.edge("h"), tile=(2, 2), side="both")  # SIDE
    at(err, "# SIDE")


def test_fuse_needs_tasks_and_a_convex_region():
    g = DataflowSchedule(ffn)
    with pytest.raises(ScheduleError) as err:
        g.fuse()  # EMPTY
    at(err, "# EMPTY")
    with pytest.raises(ScheduleError) as err:
        g.fuse(g.task("gemm_1"), g.task("gemm_2"))  # CONVEX
    text = at(err, "# CONVEX")
    assert "without relu" in text and "fuse relu as well" in text
    with pytest.raises(ScheduleError) as err:
        g.fuse(g.task("relu"), g.task("relu"))  # TWICE
    at(err, "# TWICE")


def test_handles_of_another_schedule_are_refused(g):
    other = DataflowSchedule(ffn)
    with pytest.raises(ScheduleError) as err:
        g.fifo(other.edge("h"), depth=4)  # OTHER
    assert "another dataflow schedule" in at(err, "# OTHER")


def test_fifo_depth_is_checked(g):
    for bad in (0, -1, 2.5, "big", True):
        with pytest.raises(ScheduleError) as err:
            g.fifo(g.edge("h"), depth=bad)  # DEPTH
        at(err, "# DEPTH")
    with pytest.raises(ScheduleError) as err:
        g.fifo(g.edge("h"), depth=2, consumer=g.task("gemm_1"))  # CONSUMER
    at(err, "# CONSUMER")


def test_sizing_mode_and_fusion_cap_are_checked(g):
    with pytest.raises(ScheduleError) as err:
        g.size_fifos(mode="fast")  # MODE
    assert 'mode="conservative"' in at(err, "# MODE")
    with pytest.raises(ScheduleError) as err:
        g.auto_fuse(max_bytes=0)  # CAP
    at(err, "# CAP")


def test_stale_fifo_handle_is_refused():
    g = DataflowSchedule(bypass)
    old = next(f for f in g.fifos() if f.name == "a:store_a")  # unfused: a goes through DRAM
    g.fuse(*g.tasks())
    with pytest.raises(ScheduleError) as err:
        g.fifo(old, depth=3)  # STALE
    assert "no longer exists" in at(err, "# STALE")


def test_deadlock_is_located_and_names_fifos_and_tasks():
    g = DataflowSchedule(bypass)
    g.fuse(*g.tasks())
    for e in "xabc":
        g.stream(g.edge(e), tile=(2, 8))
    g.stream(g.edge("a"), tile=(8, 8), side=g.task("relu_2"))
    g.fifo(g.edge("a"), depth=1, consumer=g.task("add"))
    with pytest.raises(DeadlockError) as err:
        g.simulate()  # DEADLOCK
    text = at(err, "# DEADLOCK")
    assert "'a:add' (full at depth 1)" in text and "fork_a" in text and "relu_2" in text


def test_a_task_returning_its_input_points_at_that_kernel():
    import streamdsl as sd
    from streamdsl.errors import ShapeError

    @sd.kernel
    def passthrough(X: f32[8, 8]) -> f32[8, 8]:  # PASS
        return X

    @dataflow
    def two(x: f32[8, 8]) -> f32[8, 8]:
        a = passthrough(x)
        b = relu8(a)
        return b

    g = DataflowSchedule(two)
    with pytest.raises(ShapeError) as err:
        g.simulate()
    assert "returns an input" in at(err, "# PASS") and "copy into a local" in str(err.value)
