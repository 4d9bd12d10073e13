"""The SIMT machine: prepared kernels, the executor, memory, and `run_kernel`."""

from semantics.machine.executor import Effect, ExecutionError, Executor, Geometry
from semantics.machine.kernel import PreparedKernel, prepare
from semantics.machine.memory import MemoryFault
from semantics.machine.run import Coverage, LaunchResult, run_kernel

__all__ = ["Effect", "ExecutionError", "Executor", "Geometry", "PreparedKernel", "prepare",
           "MemoryFault", "Coverage", "LaunchResult", "run_kernel"]
