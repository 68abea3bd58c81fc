"""The dataset contract and the loaders for users' own files.

Every task, whatever its source, ends up as `results/<experiment>/data/{task}/{split}.jsonl`, one JSON object per
line with at least `id`, `source` and `target` (extra fields are kept). The loaders below read the three
local formats a researcher is likely to have and stop at the first bad record with `file:line: problem`.

The same rules in every format: a line ends at LF, CRLF or a lone CR; a UTF-8 byte-order mark is
dropped; blank lines at the end of a file are ignored; a file with no record, a repeated id or a null id
is an error naming the file (and line). A source or target of white space, control and format characters
only (a zero-width space) is empty; a lone surrogate (JSON's `\\ud800`) is an error, not text. Blank lines
inside a file are skipped in JSONL and TSV, but are an error in parallel files, where line i of one file
must pair with line i of the other. A TSV header line is read only when the config says `header: true`; a
first line that looks like one (`source<TAB>target`) is an error otherwise.
"""

from __future__ import annotations

import io
import json
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ..runtime.errors import StepError

SPLITS = ("train", "valid", "test")


class DataFormatError(StepError, ValueError):
    """A record in an input file breaks the contract; the message starts with `path:line:`. A step that
    meets one stops with the message alone (a reason, not a bug: runtime.logs)."""


def _where(path: Path, line_number: int) -> str:
    return f"{path}:{line_number}"


def decoded_lines(handle: IO[bytes], label: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, text without its line break) of a binary UTF-8 stream, naming `label:line` of
    any non-UTF-8 bytes. A line ends at `\\n`, `\\r\\n` or a lone `\\r` (classic Mac files and some spreadsheet
    exports end lines with CR only; read byte-wise, such a file would be one long line), as Python's
    universal newlines and `str.splitlines` read them. The file's first line break sets its style: a lone
    `\\r` in a file of `\\n` lines (or the reverse) is a stray character inside a line, an error, since
    reading it as a break would split that line and shift every pair after it in parallel files."""
    text = io.TextIOWrapper(handle, encoding="utf-8", errors="surrogateescape", newline="")
    mac_style = None
    for line_number, raw in enumerate(text, start=1):
        line = raw.removesuffix("\n").removesuffix("\r")
        ending = raw[len(line) :]
        if ending and mac_style is None:
            mac_style = ending == "\r"
        elif ending and (ending == "\r") != mac_style:
            first, other = ("\\r", "\\n") if mac_style else ("\\n", "\\r")
            raise DataFormatError(
                f"{label}:{line_number}: a stray {other} ends this line, while the file's lines end with {first}; "
                f"remove it (read as a line break it would split the line and misalign every later pair)"
            )
        try:
            line.encode("utf-8")
        except UnicodeEncodeError as error:
            offset = len(line[: error.start].encode("utf-8", "surrogateescape"))
            byte = line[error.start].encode("utf-8", "surrogateescape")
            raise DataFormatError(f"{label}:{line_number}: not valid UTF-8 (byte {offset}: {byte!r})") from None
        yield line_number, line


def _decoded_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The lines of a local file (see `decoded_lines`), a UTF-8 byte-order mark dropped."""
    with open(path, "rb") as handle:
        for line_number, text in decoded_lines(handle, str(path)):
            yield line_number, text.removeprefix("\ufeff") if line_number == 1 else text


def _lines_without_trailing_blanks(path: Path) -> list[tuple[int, str]]:
    lines = list(_decoded_lines(path))
    while lines and not lines[-1][1].strip():
        lines.pop()
    return lines


def _content_lines(path: Path) -> Iterator[tuple[str, int, str]]:
    """(`file:line`, line number, text) of every non-blank line."""
    for line_number, text in _lines_without_trailing_blanks(path):
        if text.strip():
            yield _where(path, line_number), line_number, text


def _checked(records: list[dict], path: Path, lines: list[int]) -> list[dict]:
    """The records of one file, after the checks every format shares: not empty, ids unique."""
    if not records:
        raise DataFormatError(f"{path}: no records")
    first_line: dict[str, int] = {}
    for record, line_number in zip(records, lines, strict=True):
        if record["id"] in first_line:
            raise DataFormatError(f"{_where(path, line_number)}: duplicate id '{record['id']}' (first at line {first_line[record['id']]})")
        first_line[record["id"]] = line_number
    return records


# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt): characters a renderer shows
# as nothing (variation selectors, the combining grapheme joiner, the Hangul fillers, ...), beside the
# control and format characters; and U+2800, the blank Braille pattern, which shows as a space.
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)  # fmt: skip
BLANK_LOOKING = {0x2800}


def invisible(character: str) -> bool:
    """Whether `character` shows nothing: white space, a control or format character, a default-ignorable
    code point or a blank filler."""
    code = ord(character)
    if character.isspace() or unicodedata.category(character) in ("Cc", "Cf") or code in BLANK_LOOKING:
        return True
    return any(first <= code <= last for first, last in DEFAULT_IGNORABLE)


def is_blank(text: str) -> bool:
    """Whether `text` shows nothing: invisible characters only (a zero-width space, a word joiner, a
    byte-order mark, a variation selector, a Hangul filler, ...)."""
    return all(invisible(character) for character in text)


def blank_problem(text: str, name: str) -> str:
    invisible = sorted({f"U+{ord(character):04X}" for character in text if not character.isspace()})
    return f"empty {name}" + (f" (only invisible characters: {', '.join(invisible)})" if invisible else "")


def lone_surrogate(text: str) -> int | None:
    """The index of the first lone surrogate in `text` (JSON's `\\ud800` escapes can make one; no UTF-8 file
    can hold it), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start
    return None


def make_record(record_id: str, source: object, target: object, where: str, extra: dict | None = None) -> dict:
    """Check one source/target pair and return it in the contract's shape."""
    if record_id is None or isinstance(record_id, bool) or not isinstance(record_id, str | int):
        raise DataFormatError(f"{where}: field 'id' must be a string or an integer, got {json.dumps(record_id)}")
    fields = {"id": str(record_id), "source": source, "target": target}
    fields |= {name: json.dumps(value, ensure_ascii=False, default=str) for name, value in (extra or {}).items()}
    for name, value in fields.items():
        if isinstance(value, str) and (index := lone_surrogate(value)) is not None:
            raise DataFormatError(
                f"{where}: field '{name}' holds a lone surrogate (character {index} of its text), which is not text: fix its \\u escape"
            )
    for name, value in (("source", source), ("target", target)):
        if not isinstance(value, str):
            raise DataFormatError(f"{where}: field '{name}' must be a string, got {type(value).__name__}")
        if is_blank(value):
            raise DataFormatError(f"{where}: {blank_problem(value, name)}")
    record = {"id": str(record_id), "source": source.strip(), "target": target.strip()}
    record.update(extra or {})
    return record


def _json_objects(path: Path) -> Iterator[tuple[str, int, dict]]:
    """(where, line number, object) of each non-blank line of a JSON lines file, each line one object."""
    for where, line_number, text in _content_lines(path):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as error:
            raise DataFormatError(f"{where}: invalid JSON ({error.msg})") from None
        if not isinstance(obj, dict):
            raise DataFormatError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        yield where, line_number, obj


def load_jsonl(path: str | Path, source_field: str = "source", target_field: str = "target", id_field: str = "id") -> list[dict]:
    """JSON lines, one object per line; blank lines are skipped. Fields other than the three are kept."""
    path = Path(path)
    records, lines = [], []
    for where, line_number, obj in _json_objects(path):
        lines.append(line_number)
        for field in (source_field, target_field):
            if field not in obj:
                raise DataFormatError(f"{where}: missing field '{field}'")
        extra = {k: v for k, v in obj.items() if k not in (source_field, target_field, id_field)}
        record_id = obj.get(id_field, f"{path.stem}-{line_number}")
        records.append(make_record(record_id, obj[source_field], obj[target_field], where, extra))
    return _checked(records, path, lines)


CHAT_ROLES = ("system", "user", "assistant", "tool")


def load_chat(path: str | Path, messages_field: str = "messages", id_field: str = "id") -> list[dict]:
    """Conversations, one JSON object per line with a list of `{"role", "content"}` turns under
    `messages_field`: the last turn, the assistant's, is the target; the turns before it are the prompt,
    kept as the record's `messages` (a decoder-only model reads them through its tokenizer's chat
    template: data/seq2seq_batches.py) and shown as `role: content` lines as its source."""
    path = Path(path)
    records, lines = [], []
    for where, line_number, obj in _json_objects(path):
        lines.append(line_number)
        turns = obj.get(messages_field)
        if not isinstance(turns, list) or len(turns) < 2:
            raise DataFormatError(f"{where}: expected an object whose '{messages_field}' lists two turns or more")
        for number, turn in enumerate(turns):
            if not isinstance(turn, dict) or turn.get("role") not in CHAT_ROLES or not isinstance(turn.get("content"), str):
                roles = ", ".join(CHAT_ROLES)
                raise DataFormatError(f"{where}: turn {number} of '{messages_field}' is not a {{role ({roles}), content}} pair")
        if turns[-1]["role"] != "assistant":
            raise DataFormatError(f"{where}: the last turn is the {turns[-1]['role']}'s; the assistant's last turn is the target")
        prompt = [{"role": turn["role"], "content": turn["content"]} for turn in turns[:-1]]
        source = "\n".join(f"{turn['role']}: {turn['content']}" for turn in prompt)
        record_id = obj.get(id_field, f"{path.stem}-{line_number}")
        records.append(make_record(record_id, source, turns[-1]["content"], where, {"messages": prompt}))
    return _checked(records, path, lines)


HEADER_NAMES = {"source", "target", "src", "tgt", "input", "output"}


def load_tsv(path: str | Path, header: bool = False) -> list[dict]:
    """Tab-separated `source<TAB>target`, no quoting (text may contain quote characters); with `header`,
    the first line names the columns and is skipped."""
    path = Path(path)
    records, lines = [], []
    for index, (where, line_number, text) in enumerate(_content_lines(path)):
        fields = text.split("\t")  # no quoting, and no field size limit (csv's is 131,072 characters)
        if index == 0 and header:
            continue
        if index == 0 and len(fields) == 2 and {f.strip().lower() for f in fields} <= HEADER_NAMES:
            raise DataFormatError(f"{where}: looks like a header line ({text!r}); set `header: true` for this source, or remove the line")
        if len(fields) != 2:
            raise DataFormatError(f"{where}: expected 2 tab-separated fields (source, target), found {len(fields)}")
        records.append(make_record(f"{path.stem}-{line_number}", fields[0], fields[1], where))
        lines.append(line_number)
    return _checked(records, path, lines)


def load_parallel(source_path: str | Path, target_path: str | Path) -> list[dict]:
    """Two line-aligned files (e.g. `train.src` / `train.tgt`): line i of one is paired with line i of the other."""
    source_path, target_path = Path(source_path), Path(target_path)
    sources = _lines_without_trailing_blanks(source_path)
    targets = _lines_without_trailing_blanks(target_path)
    if len(sources) != len(targets):
        shorter = source_path if len(sources) < len(targets) else target_path
        raise DataFormatError(
            f"{_where(shorter, min(len(sources), len(targets)) + 1)}: {source_path} has {len(sources)} lines "
            f"but {target_path} has {len(targets)}; parallel files must be line-aligned"
        )
    records = []
    for (line_number, source), (_, target) in zip(sources, targets, strict=True):
        if is_blank(source):
            raise DataFormatError(f"{_where(source_path, line_number)}: {blank_problem(source, 'source')}")
        records.append(make_record(f"{source_path.stem}-{line_number}", source, target, _where(target_path, line_number)))
    return _checked(records, source_path, [line_number for line_number, _ in sources])


def load_local_split(spec: dict, split: str, base_dir: str | Path = ".") -> list[dict]:
    """Read one split of a `local` task as configured (`format`, and a path or path prefix per split)."""
    base_dir = Path(base_dir)
    fmt = spec["format"]
    location = base_dir / spec[split]
    if fmt == "jsonl":
        return load_jsonl(location, spec.get("source_field", "source"), spec.get("target_field", "target"))
    if fmt == "chat":
        return load_chat(location, spec.get("messages_field", "messages"))
    if fmt == "tsv":
        return load_tsv(location, spec.get("header", False))
    if fmt == "parallel":
        suffixes = spec.get("suffixes", [".src", ".tgt"])
        return load_parallel(f"{location}{suffixes[0]}", f"{location}{suffixes[1]}")
    raise ValueError(f"unknown local data format '{fmt}' (expected jsonl, chat, tsv or parallel)")


def check_unique_ids(records: list[dict], label: str) -> None:
    seen: set[str] = set()
    for record in records:
        if record["id"] in seen:
            raise DataFormatError(f"{label}: duplicate id '{record['id']}'")
        seen.add(record["id"])
