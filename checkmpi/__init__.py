"""checkmpi: runs the native MPI benchmarks and analyses their JSON results."""

__version__ = "0.1.0"
