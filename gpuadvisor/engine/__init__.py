"""The decision engine, with no words in it: facts, conditions, rules, purchase options,
the core and its memo, and the what-would-change scan (plain data). Nothing here imports
:mod:`gpuadvisor.decision` or :mod:`gpuadvisor.render`."""
