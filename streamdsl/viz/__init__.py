"""Pictures of a dataflow design: its graph, its token-level timeline, its roofline.

    from streamdsl import viz
    viz.write_graph(g, "out/ffn")          # out/ffn.svg (graphviz), or out/ffn.dot without it
    viz.timeline_png(g, "out/ffn_time")    # busy/stall bars per task, FIFO occupancy
    viz.roofline_png(model_design(g, "u55c"), "out/ffn_roof")

Every function takes a ``DataflowSchedule`` (``sd.schedule(fn)``) or the
``@sd.dataflow`` function itself; figures are matplotlib ``Figure`` objects
drawn without pyplot, so they neither need nor disturb a notebook's backend.
"""
from .common import VizError  # noqa: F401
from .graph import graph_dot, graph_svg, write_graph  # noqa: F401
from .roofline import kernel_ops, roofline_figure, roofline_png  # noqa: F401
from .timeline import timeline_figure, timeline_png  # noqa: F401

__all__ = ["VizError", "graph_dot", "graph_svg", "kernel_ops", "roofline_figure", "roofline_png", "timeline_figure",
           "timeline_png", "write_graph"]
