"""ISV certifications a catalog entry lists, and how application names are matched."""

import re
import unicodedata

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Certification(BaseModel):
    """One ISV application whose published hardware list names the card."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    app: str = Field(min_length=2, max_length=120, description="As the vendor names it.")
    release: str = Field("", max_length=40, description="Release of the list read.")
    source: str = Field(min_length=8, description="The vendor's list (https).")
    note: str = Field("", max_length=400)

    @field_validator("source")
    @classmethod
    def _https(cls, value: str) -> str:
        if not value.startswith("https://"):
            raise ValueError("must be an https:// URL")
        return value


def app_key(name: str) -> str:
    """How an application name is matched: case, accents, spacing and punctuation aside
    ("Schrodinger glide" names "Schrödinger Glide")."""
    decomposed = unicodedata.normalize("NFKD", name)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w]+", " ", plain.casefold()).split())
