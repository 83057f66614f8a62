"""Errors raised while reading or interpreting rules data."""

from __future__ import annotations


class RulesError(Exception):
    """Base class for every rules-layer error; its message is meant for people."""


class DatapackError(RulesError):
    """A datapack (or one file of it) is malformed or uses a feature we do not interpret.

    The message always names the pack, the file inside it and, where known, the field.
    """

    def __init__(self, message: str, *, pack: str = "", file: str = "", field: str = "") -> None:
        self.pack = pack
        self.file = file
        self.field = field
        where = " ".join(
            part
            for part in (
                f"pack {pack!r}" if pack else "",
                f"file {file!r}" if file else "",
                f"field {field!r}" if field else "",
            )
            if part
        )
        super().__init__(f"{where}: {message}" if where else message)

    def located(self, *, pack: str = "", file: str = "") -> DatapackError:
        """Return a copy that also names the pack/file, keeping what is already known."""
        return DatapackError(
            self.bare_message,
            pack=self.pack or pack,
            file=self.file or file,
            field=self.field,
        )

    @property
    def bare_message(self) -> str:
        text = str(self)
        prefix_end = text.find(": ") if (self.pack or self.file or self.field) else -1
        return text[prefix_end + 2 :] if prefix_end >= 0 else text


class UnknownItemError(RulesError):
    """An item or block id that the game data does not know."""
