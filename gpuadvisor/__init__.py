"""gpuadvisor: which GPU purchase actually fixes this workload, with the reasons."""

__version__ = "0.1.0"
