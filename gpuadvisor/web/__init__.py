"""``gpuadvisor serve``: the questionnaire and the report as a local web page.

The page asks the questionnaire's own questions (:mod:`gpuadvisor.ask`, the one source
of truth) one at a time, takes the evidence files an engineer captured, makes the
decision through :func:`gpuadvisor.pipeline.advise_profile`, shows a buyer's view of it
and offers the PDF, Markdown, HTML, JSON and the profile TOML as downloads.

- :mod:`.walk`: where one person's questionnaire stands, checking one answer, changing
  one afterwards; :mod:`.views`: what a page shows of a question and of the answers;
- :mod:`.tokens`: that state, signed, carried by the page itself;
- :mod:`.uploads`: uploads as data in a per-request private folder; :mod:`.captures`:
  an upload's captures kept, bounded, for the report page, and the warning when they
  seem to come from different machines;
- :mod:`.report_view`: the report as the page shows it, through the web wordings of
  :mod:`.wording` (``wording.toml``);
- :mod:`.guard`: Host and Origin checks, body size, security headers;
- :mod:`.pages`: the pages and the work behind them (decisions, PDFs); :mod:`.app`: the
  routes; :mod:`.server`: address, warning, uvicorn.

Like ``cli/``, this is an edge of the program: it may use every layer below.
"""

from __future__ import annotations
