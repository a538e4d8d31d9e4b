"""``gpuadvisor serve``: the questionnaire and the report as a local web page.

The page asks the questionnaire's own questions (:mod:`gpuadvisor.ask`, the one source
of truth) one at a time, takes the evidence files an engineer captured, makes the
decision through :func:`gpuadvisor.pipeline.advise_profile` with one shared
:class:`~gpuadvisor.decision.build.Advisor`, shows the HTML report and offers the PDF,
Markdown, HTML, JSON and the profile TOML as downloads.

- :mod:`.walk`: where one person's questionnaire stands, checking one answer, what a
  page shows of a question (all from the questions' data);
- :mod:`.tokens`: that state, signed, carried by the page itself (the server keeps
  nothing of anyone between requests);
- :mod:`.uploads`: uploads as data in a per-request private folder;
- :mod:`.guard`: Host check, body size, security headers;
- :mod:`.app`: the Starlette application; :mod:`.server`: address, warning, uvicorn.

Like ``cli/``, this is an edge of the program: it may use every layer below.
"""

from __future__ import annotations
