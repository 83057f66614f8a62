"""Text cells that a spreadsheet would run as formulas, written so that it shows them.

A CSV cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read
by Excel, LibreOffice and Google Sheets as a formula ("CSV injection"). Records hold text
that neither MirrorCraft nor the researcher wrote: an agent's error message, a plugin's
name, a model's name. Such a cell gets a leading apostrophe, which the spreadsheets show
as text and hide; a cell that reads as a number (``-0.25``, ``+3``) is left alone, so
negative figures stay numbers. JSON and Parquet exports are never changed.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def formula_safe(value: object) -> object:
    """``value`` with a leading apostrophe if it is text a spreadsheet would run as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _is_number(value):
        return "'" + value
    return value
