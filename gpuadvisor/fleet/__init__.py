"""``gpuadvisor fleet``: every GPU host a Prometheus already watches, judged by the same
engine as ``advise``, and one purchase plan per group of hosts.

One job per module: :mod:`.promql` (durations, selectors, expression text),
:mod:`.queries` (the PromQL asked for, and how each dcgm-exporter field is aggregated
over the window), :mod:`.client` (the HTTP API, bounded), :mod:`.collect` (asking, and
what is missing), :mod:`.readings` (answers folded per host), :mod:`.snapshot` (a host's
reading as host/v1), :mod:`.judge` (the engine over every host, in a process pool),
:mod:`.judgement` (idle and failing, from ``data/judgement.toml``), :mod:`.plan` (the
groups and totals), :mod:`.model` (``gpuadvisor/fleet/v1``), :mod:`.profiles` (the
``--profiles`` file), :mod:`.build` (one run), :mod:`.report` (md, html, pdf, json),
:mod:`.serve` (the page). None of them prints or exits: the command does
(``gpuadvisor.cli.commands_fleet``).
"""
