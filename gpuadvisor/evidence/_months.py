"""Month names as kernel-log time stamps print them in other languages.

``journalctl`` (short format), syslog files and ``dmesg -T`` write the month with
``strftime``'s ``%b``, in the language of the machine's ``LC_TIME``: a Russian server's
``journalctl -k`` starts its lines with ``июл 27 14:08:03``. The names below are glibc's
abbreviated month names (``abmon``, and ``ab_alt_mon`` where a language has a second
form: Russian ``мая`` / ``май``) from its locale sources (``localedata/locales/<ll_CC>``),
for the languages servers are commonly set to. No name stands for two different months
in two languages, so one table serves them all; a trailing period (``janv.``) and case
do not matter.

Imports nothing: detection and the kernel-log parser both read it.
"""

from __future__ import annotations

from typing import Final

#: English, as the C locale prints them.
ENGLISH: Final[tuple[str, ...]] = (
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
)

#: Language -> its twelve abbreviations, January first (several where the locale has two).
_NAMES: Final[dict[str, tuple[str, ...]]] = {
    "en": ENGLISH,
    "ru": ("янв", "фев", "мар", "апр", "мая май", "июн", "июл", "авг", "сен", "окт", "ноя", "дек"),
    "uk": ("січ", "лют", "бер", "кві", "тра", "чер", "лип", "сер", "вер", "жов", "лис", "гру"),
    "be": ("сту", "лют", "сак", "кра", "мая май", "чэр", "ліп", "жні", "вер", "кас", "ліс", "сне"),
    "bg": ("яну", "фев", "мар", "апр", "май", "юни", "юли", "авг", "сеп", "окт", "ное", "дек"),
    "de": ("Jan", "Feb", "Mär", "Apr", "Mai", "Jun", "Jul", "Aug", "Sep", "Okt", "Nov", "Dez"),
    "fr": (
        "janv.",
        "févr.",
        "mars",
        "avril",
        "mai",
        "juin",
        "juil.",
        "août",
        "sept.",
        "oct.",
        "nov.",
        "déc.",
    ),
    "es": ("ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct", "nov", "dic"),
    "it": ("gen", "feb", "mar", "apr", "mag", "giu", "lug", "ago", "set", "ott", "nov", "dic"),
    "pt": ("jan", "fev", "mar", "abr", "mai", "jun", "jul", "ago", "set", "out", "nov", "dez"),
    "pl": ("sty", "lut", "mar", "kwi", "maj", "cze", "lip", "sie", "wrz", "paź", "lis", "gru"),
    "cs": ("led", "úno", "bře", "dub", "kvě", "čen", "čec", "srp", "zář", "říj", "lis", "pro"),
    "sk": ("jan", "feb", "mar", "apr", "máj", "jún", "júl", "aug", "sep", "okt", "nov", "dec"),
    "nl": ("jan", "feb", "mrt", "apr", "mei", "jun", "jul", "aug", "sep", "okt", "nov", "dec"),
    "sv da": ("jan", "feb", "mar", "apr", "maj", "jun", "jul", "aug", "sep", "okt", "nov", "dec"),
    "nb": (
        "jan.",
        "feb.",
        "mars",
        "april",
        "mai",
        "juni",
        "juli",
        "aug.",
        "sep.",
        "okt.",
        "nov.",
        "des.",
    ),
    "fi": (
        "tammi",
        "helmi",
        "maalis",
        "huhti",
        "touko",
        "kesä",
        "heinä",
        "elo",
        "syys",
        "loka",
        "marras",
        "joulu",
    ),
    "tr": ("Oca", "Şub", "Mar", "Nis", "May", "Haz", "Tem", "Ağu", "Eyl", "Eki", "Kas", "Ara"),
    "hu": ("jan", "febr", "márc", "ápr", "máj", "jún", "júl", "aug", "szept", "okt", "nov", "dec"),
    "ro": ("ian", "feb", "mar", "apr", "mai", "iun", "iul", "aug", "sep", "oct", "nov", "dec"),
    "el": (
        "Ιαν",
        "Φεβ",
        "Μαρ Μάρ",
        "Απρ",
        "Μαΐ Μάι",
        "Ιουν Ιούν",
        "Ιουλ Ιούλ",
        "Αυγ Αύγ",
        "Σεπ",
        "Οκτ",
        "Νοε Νοέ",
        "Δεκ",
    ),
}


def _key(name: str) -> str:
    return name.strip().rstrip(".").casefold()


MONTHS: Final[dict[str, int]] = {
    _key(spelling): number
    for names in _NAMES.values()
    for number, spellings in enumerate(names, start=1)
    for spelling in spellings.split()
}

#: What a month looks like in a stamp: a word of letters (``Jul``, ``июл``, ``janv.``,
#: ``maalis``), or a number with the CJK month sign (zh ``7月``, ja `` 7月``, ko `` 7월``).
MONTH_PATTERN: Final = r"(?:[^\W\d_]{3,6}\.?|\d{1,2}[月월])"


def month_number(token: str) -> int | None:
    """1-12 for a month name of any language above, or ``7月``; None for another word."""
    key = _key(token)
    if key[-1:] in ("月", "월") and key[:-1].isascii() and key[:-1].isdigit():
        number = int(key[:-1])
        return number if 1 <= number <= 12 else None
    return MONTHS.get(key)
