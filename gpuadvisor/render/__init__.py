"""Report rendering, one module per output format.

:mod:`gpuadvisor.report` is the entry point; the modules here hold what differs between
formats (escaping, compiling) and what they share (the view of a Decision, the charts,
the sandboxed template environment).
"""
