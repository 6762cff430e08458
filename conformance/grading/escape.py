"""Make text a submission controls safe to show: made visible, cut to a bounded length, then escaped.

A submission chooses its entry's file name, its exception types and messages, its sequence ids,
status names and returned values, and all of them reach the student's report (Gradescope renders
Markdown with HTML), the instructor's JUnit XML, the class summary.csv (opened in spreadsheets)
and the overview. Every such string takes one path, at the point where it is placed into a
document: `visible` shows every control character, lone surrogate and invisible format character
as an escape (`\\r`, `\\x1b`, `\\ud800`; an undecodable file-name byte as `\\xff`), so the text is
one line of valid UTF-8; `cut` bounds it; then exactly one escaper for the output's language
(`md`, `html`, `xml_text`/`xml_attr`, `csv_cell`, `json_inert`) neutralises its markup. So a
string cannot close a table, open a link, inject a tag, start a formula, break the XML, paint a
terminal, crash the UTF-8 writer, or flood a report, whatever characters it holds.
"""

from __future__ import annotations

import json
import re

TEXT_LIMIT = 300  # characters of one submission-controlled string kept in a report
RAW_LIMIT = 100_000  # characters of a string looked at at all (the rest is cut before any work)
# control characters (C0, DEL, C1), soft hyphen, bidi and zero-width format characters, line and
# paragraph separators, BOM, interlinear annotations, non-characters, lone surrogates, tag characters
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
                    "\ufff9-\ufffb\ufffe\uffff\ud800-\udfff\U000e0000-\U000e007f]")
NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]()#|~!])")  # backslash-escaped; <, >, & become entities
SCHEME = re.compile(r"(?i)\b(https?|ftp|mailto|javascript|vbscript|data|file)(:)|\b(www)(\.)")
LINE_START = re.compile(r"^(\s*)([=+\-@>]|\d+[.)])")  # would start a list, heading underline, quote
CODE_UNSAFE = re.compile(r"[`<>&\[\]()!|*\\]|://|\bjavascript:")  # kept out of a code span even though inert there
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet evaluates a cell starting with these
JSON_ITEMS = 100  # items of one list kept by visible_json
JSON_INERT = {c: f"\\u{ord(c):04x}" for c in "<>&()!`|*"}  # never structural in JSON text


def _escape_char(m: re.Match[str]) -> str:
    c = m.group(0)
    if c in NAMED:
        return NAMED[c]
    n = ord(c)
    if 0xDC80 <= n <= 0xDCFF:  # a byte that did not decode (surrogateescape): show the byte
        return f"\\x{n - 0xDC00:02x}"
    if n < 0x100:
        return f"\\x{n:02x}"
    return f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def text_of(value: object) -> str:
    """str(value), never raising: a value from the sandbox is plain data, but a str() may still fail."""
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - any failure of a foreign __str__ is shown, not raised
        return f"<unprintable {type(value).__name__}>"


def visible(value: object, keep: str = "") -> str:
    """The text with every unsafe character shown as an escape; characters in `keep` (e.g. newline) stay."""
    s = text_of(value)[:RAW_LIMIT]
    if not keep:
        return UNSAFE.sub(_escape_char, s)
    return UNSAFE.sub(lambda m: m.group(0) if m.group(0) in keep else _escape_char(m), s)


def cut(text: object, limit: int = TEXT_LIMIT) -> str:
    """The text made visible (one line, valid UTF-8), at most `limit` characters (then '…')."""
    s = visible(text)
    return s if len(s) <= limit else s[: max(limit - 1, 0)] + "…"


def one_line(text: object, limit: int = TEXT_LIMIT) -> str:
    """cut: kept for callers that say what they need (a table cell, a list item)."""
    return cut(text, limit)


def md(text: object, limit: int = TEXT_LIMIT) -> str:
    """Inline Markdown that shows the text literally: links, tags, emphasis, cells and line starts neutralised."""
    s = cut(text, limit).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = MARKDOWN_SPECIAL.sub(r"\\\1", s)
    s = SCHEME.sub(lambda m: f"{m.group(1)}\\:" if m.group(1) else f"{m.group(3)}\\.", s)
    return LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2) if not m.group(2)[0].isdigit()
                          else m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], s)


def label(text: object, limit: int = TEXT_LIMIT) -> str:
    """A name inside another format (a JUnit test suite's name) that tools may still paste into Markdown:
    cut, Markdown and tag characters backslash-escaped; the format's own escaper comes after."""
    s = re.sub(r"([\\`*_\[\]()#|~!<>])", r"\\\1", cut(text, limit))
    return SCHEME.sub(lambda m: f"{m.group(1)}\\:" if m.group(1) else f"{m.group(3)}\\.", s)


def md_cell(text: object, limit: int = TEXT_LIMIT) -> str:
    """Text of our own (a rubric item's name) in a table cell: only what would break the row is escaped."""
    return cut(text, limit).replace("|", "\\|")


def md_code(text: object, limit: int = TEXT_LIMIT) -> str:
    """Inline code for text of our own (ids, file names we chose): a fence the text cannot end."""
    s = cut(text, limit)
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def md_name(text: object, limit: int = TEXT_LIMIT) -> str:
    """A name the submission chose (a file name, `file:line`): as inline code when it holds no character
    Markdown or HTML act on, else as escaped text (md), so no markup is ever written raw, even in code."""
    s = cut(text, limit)
    return md_code(s, limit) if not CODE_UNSAFE.search(s) else md(s, limit)


def md_block(text: str, lang: str = "", limit: int = 20_000) -> str:
    """A fenced code block that the text cannot close; each line made visible, the whole bounded."""
    s = "\n".join(visible(line) for line in text_of(text)[:limit].rstrip("\n").split("\n"))
    if len(text_of(text)) > limit:
        s += "\n…"
    longest = max((len(m) for m in re.findall(r"`{3,}", s)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{lang}\n{s}\n{fence}"


def html(text: object, limit: int = TEXT_LIMIT) -> str:
    """HTML text content or attribute value: &, <, >, quotes escaped."""
    s = cut(text, limit)
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("'", "&#x27;"))


def xml_text(text: object, limit: int | None = None) -> str:
    """XML character data: only newlines and tabs kept raw (every other XML-illegal character shown), escaped."""
    s = visible(text, keep="\n\t")
    if limit is not None and len(s) > limit:
        s = s[: max(limit - 1, 0)] + "…"
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def xml_attr(text: object, limit: int = TEXT_LIMIT) -> str:
    """An XML attribute value, quotes included: one visible line, markup and quotes escaped."""
    s = xml_text(cut(text, limit))
    return '"' + s.replace('"', "&quot;") + '"'


def csv_cell(text: object, limit: int = TEXT_LIMIT) -> str:
    """A CSV field a spreadsheet shows as text: visible, bounded, and a leading formula character made inert.

    The writer must quote every field (csv.QUOTE_ALL); this only decides the characters.
    """
    s = cut(text, limit)
    return "'" + s if s.startswith(FORMULA_START) else s


def json_inert(obj: object) -> str:
    """JSON to show inside a report: every string made visible, and characters Markdown or HTML act on
    (<, >, &, (, ), !, backtick, |, *) written as \\u escapes, so the text holds no markup but decodes
    to the same value."""
    text = json.dumps(visible_json(obj), sort_keys=True, ensure_ascii=False)
    return "".join(JSON_INERT.get(c, c) for c in text)


def visible_json(obj: object, limit: int = TEXT_LIMIT) -> object:
    """A JSON value with every string (keys too) made visible and cut: for data shown to a reader."""
    if isinstance(obj, str):
        return cut(obj, limit)
    if isinstance(obj, dict):
        return {cut(k, limit): visible_json(v, limit) for k, v in obj.items()}
    if isinstance(obj, list | tuple):  # a returned value may hold thousands of items: the first JSON_ITEMS
        return [visible_json(v, limit) for v in obj[:JSON_ITEMS]] + (["…"] if len(obj) > JSON_ITEMS else [])
    if obj is None or isinstance(obj, bool | int | float):
        return obj
    return cut(obj, limit)


def utf8_json(text: str) -> str:
    """JSON text that encodes as UTF-8: each lone surrogate (only ever inside a string) as its \\u escape,
    which decodes back to the same string; a high one right before a low one (a decoder would join the
    two escapes into one character) is written as the visible text \\udXXX instead."""
    text = re.sub("[\ud800-\udbff](?=[\udc00-\udfff])", lambda m: f"\\\\u{ord(m.group(0)):04x}", text)
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group(0)):04x}", text)
