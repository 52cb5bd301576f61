"""The per-kernel cost model: cycles, initiation intervals and resources of a (scheduled) kernel's IR."""
