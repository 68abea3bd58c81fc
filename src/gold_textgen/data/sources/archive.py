"""Reading text members of a downloaded zip or tar archive (or of a folder holding the same files), with
`archive:member:line` in every error."""

from __future__ import annotations

import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from ..records import DataFormatError, decoded_lines


class Archive:
    """A zip or (compressed) tar file, read member by member; the format is detected from the content."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._zip = self._tar = None
        if self.path.is_dir():
            self.members = sorted(str(p.relative_to(self.path)) for p in self.path.rglob("*") if p.is_file())
        elif zipfile.is_zipfile(self.path):
            self._zip = zipfile.ZipFile(self.path)
            self.members = [name for name in self._zip.namelist() if not name.endswith("/")]
            self._tar = None
        elif tarfile.is_tarfile(self.path):
            self._tar = tarfile.open(self.path)  # noqa: SIM115 (closed by __exit__)
            self.members = [member.name for member in self._tar.getmembers() if member.isfile()]
            self._zip = None
        else:
            raise DataFormatError(f"{self.path}: neither a zip nor a tar archive (a failed download? delete it and rerun)")

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc) -> None:
        if self._zip or self._tar:
            (self._zip or self._tar).close()

    def named(self, basename: str) -> list[str]:
        """Every member called `basename`, in whatever folder."""
        return [name for name in self.members if name.rsplit("/", 1)[-1] == basename]

    def find(self, basename: str, under: str = "") -> str:
        """The one member called `basename`, preferring members below `under` when several match."""
        matches = self.named(basename)
        if len(matches) > 1 and under:
            matches = [name for name in matches if name.startswith(under)] or matches
        if len(matches) != 1:
            found = "none" if not matches else ", ".join(matches)
            raise DataFormatError(f"{self.path}: expected one member named {basename} (found {found}); is this the right archive?")
        return matches[0]

    def lines(self, member: str) -> Iterator[tuple[str, str]]:
        """(`archive:member:line`, text without its line break) for every line of a UTF-8 member; lines end
        as in every other reader (`records.decoded_lines`: LF, CRLF or a lone CR)."""
        with self._open(member) as handle:
            for number, text in decoded_lines(handle, f"{self.path}:{member}"):
                yield f"{self.path}:{member}:{number}", text

    def _open(self, member: str):
        if self._zip:
            return self._zip.open(member)
        return self._tar.extractfile(member) if self._tar else open(self.path / member, "rb")

    def read_lines(self, member: str) -> list[tuple[str, str]]:
        return list(self.lines(member))
