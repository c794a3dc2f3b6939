"""SGF syntax (FF[4]): the main line of a game tree as nodes of properties. Hex records
(HexGui's and ours) are SGF; GTP ``loadsgf`` and the arena's records read them."""

from __future__ import annotations

import re

_SGF_PROP = re.compile(r"([A-Za-z]+)((?:\s*\[(?:\\.|[^\]\\])*\])+)", re.S)
_SGF_VALUE = re.compile(r"\[((?:\\.|[^\]\\])*)\]", re.S)


def sgf_main_line(text: str) -> list[list[tuple[str, str]]]:
    """The main line of an SGF game tree as nodes of (property, value) pairs. The main line
    runs through the first variation at every branching, so it ends at the first ``)``."""
    start = text.find("(")
    if start < 0:
        raise ValueError("SGF: no game tree")
    chunks: list[str] = []
    current: str | None = None
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == "[":
            m = _SGF_VALUE.match(text, i)
            if not m:
                raise ValueError("SGF: unterminated property value")
            if current is not None:
                current += m.group(0)
            i = m.end()
            continue
        if c == ")":
            break
        if c == ";":
            if current is not None:
                chunks.append(current)
            current = ""
        elif c != "(" and current is not None:
            current += c
        i += 1
    if current is not None:
        chunks.append(current)
    nodes: list[list[tuple[str, str]]] = []
    for chunk in chunks:
        props = []
        for m in _SGF_PROP.finditer(chunk):
            for v in _SGF_VALUE.finditer(m.group(2)):
                value = re.sub(r"\\(.)", r"\1", v.group(1), flags=re.S)
                props.append((m.group(1).upper(), value))
        nodes.append(props)
    return nodes
