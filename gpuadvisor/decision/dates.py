"""The report date, ``provenance.generated_at`` (CONTRACT §6): :mod:`gpuadvisor.clock`,
which every layer shares (the engine counts card ages to the same day)."""

from __future__ import annotations

from gpuadvisor.clock import report_date

__all__ = ["report_date"]
