"""Shape-aware reduction passes over MLIR text. Pure text, no IREE: each pass proposes candidate
texts and relies on the caller to verify them (`iree-opt`) before any compile.

The structure is read with a light line-based splitter: a statement starts on a line and runs
on while brackets are open or the following lines are indented deeper (how MLIR prints
continuation lines and regions). Good enough for what `iree-opt` and frontends print; a
candidate that comes out malformed simply fails verification.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Iterator

from shapefuzz.iree.mlirinfo import split_top_level
from shapefuzz.size import shaped_dims

_SHAPED = re.compile(r"\b(tensor|memref|vector)<([^<>]*)>")
_FREE_INT = re.compile(r"(?<![\w%#@$.^\-])(\d+)(?![\w.])")
RESULTS = re.compile(r"^\s*(%[\w.$\-]+(?::\d+)?(?:\s*,\s*%[\w.$\-]+(?::\d+)?)*)\s*=")
SSA = re.compile(r"%[\w.$\-]+")
_FUNC = re.compile(r"^\s*func\.func\b")
RETURN = re.compile(r"^(\s*)(?:func\.)?return\b(.*)$")


# -- structure ----------------------------------------------------------------------------
def bracket_balance(line: str) -> int:
    depth = 0
    in_string = False
    for ch in line:
        if ch == '"':
            in_string = not in_string
        elif not in_string:
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
    return depth


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


@dataclass(frozen=True)
class Stmt:
    start: int  # first line index
    end: int  # one past the last line
    results: tuple[str, ...]  # "%name" for each result group ("%r:2" -> "%r")

    def text(self, lines: list[str]) -> str:
        return "".join(lines[self.start : self.end])


def _group(lines: list[str], lo: int, hi: int) -> list[tuple[int, int]]:
    """Statements among lines[lo:hi] (blank and comment lines are skipped)."""
    groups = []
    i = lo
    while i < hi:
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("//"):
            i += 1
            continue
        start, base, depth = i, _indent(line), bracket_balance(line)
        i += 1
        while i < hi:
            nxt = lines[i]
            if depth > 0 or (nxt.strip() and _indent(nxt) > base and not nxt.lstrip().startswith("//")):
                depth += bracket_balance(nxt)
                i += 1
            else:
                break
        groups.append((start, i))
    return groups


@dataclass(frozen=True)
class Func:
    header: tuple[int, int]  # lines of the signature, up to and including the one that opens the body
    body: tuple[int, int]  # lines strictly inside the body
    close: int  # line of the closing brace


def functions(lines: list[str]) -> list[Func]:
    """Every func.func with a body, at any nesting (inside `module {` too)."""
    out = []
    for start, end in _group(lines, 0, len(lines)):
        if _FUNC.match(lines[start]):
            out.extend(_as_func(lines, start, end))
        elif re.match(r"^\s*(?:builtin\.)?module\b", lines[start]) and end - start > 2:
            out.extend(functions_in(lines, start + 1, end - 1))
    return out


def functions_in(lines: list[str], lo: int, hi: int) -> list[Func]:
    out = []
    for start, end in _group(lines, lo, hi):
        if _FUNC.match(lines[start]):
            out.extend(_as_func(lines, start, end))
    return out


def _as_func(lines: list[str], start: int, end: int) -> list[Func]:
    depth = 0
    for i in range(start, end):
        depth += bracket_balance(lines[i])
        if lines[i].rstrip().endswith("{") and depth >= 1:
            if end - 1 > i and lines[end - 1].strip().startswith("}"):
                return [Func((start, i + 1), (i + 1, end - 1), end - 1)]
            return []
    return []  # a declaration without a body


def statements(lines: list[str], func: Func) -> list[Stmt]:
    out = []
    for start, end in _group(lines, *func.body):
        match = RESULTS.match(lines[start])
        results: tuple[str, ...] = ()
        if match:
            results = tuple(r.strip().split(":")[0] for r in match.group(1).split(","))
        out.append(Stmt(start, end, results))
    return out


def uses(text: str, name: str) -> bool:
    return re.search(re.escape(name) + r"(?![\w.$\-])", text) is not None


def _rename(text: str, old: str, new: str) -> str:
    return re.sub(re.escape(old) + r"(?![\w.$\-])", new, text)



def matching(text: str, open_index: int, pair: str = "()") -> int:
    depth = 0
    for i in range(open_index, len(text)):
        if text[i] == pair[0]:
            depth += 1
        elif text[i] == pair[1]:
            depth -= 1
            if depth == 0:
                return i
    return -1


# -- passes: structure --------------------------------------------------------------------
def strip_comments(text: str) -> Iterator[str]:
    """Drop comment lines and blank lines (the shapefuzz-case header included)."""
    lines = text.splitlines(keepends=True)
    kept = [l for l in lines if l.strip() and not l.lstrip().startswith("//")]
    if len(kept) != len(lines):
        yield "".join(kept)


def drop_unused_ops(text: str) -> Iterator[str]:
    """Delete statements none of whose results is used; first all of them at once, then one by one."""
    lines = text.splitlines(keepends=True)
    dead: list[Stmt] = []
    for func in functions(lines):
        for s in statements(lines, func):
            if not s.results:
                continue
            rest = "".join(lines[: s.start] + lines[s.end :])
            if not any(uses(rest, r) for r in s.results):
                dead.append(s)
    if len(dead) > 1:
        drop = {i for s in dead for i in range(s.start, s.end)}
        yield "".join(l for i, l in enumerate(lines) if i not in drop)
    for s in dead:
        yield "".join(lines[: s.start] + lines[s.end :])


_KEEP_RESULTLESS = re.compile(r"^\s*(?:\^|(?:func\.)?return\b|cf\.)")  # block labels, terminators


def drop_resultless_ops(text: str) -> Iterator[str]:
    """Delete statements that define no value (a store, a linalg op on memrefs, a trace), all at
    once, then one by one; terminators and block labels stay. Nothing else drops them: an op
    without results is never "unused", and has nothing to forward."""
    lines = text.splitlines(keepends=True)
    doomed = [s for func in functions(lines) for s in statements(lines, func)
              if not s.results and not _KEEP_RESULTLESS.match(lines[s.start])]
    if len(doomed) > 1:
        drop = {i for s in doomed for i in range(s.start, s.end)}
        yield "".join(l for i, l in enumerate(lines) if i not in drop)
    for s in doomed:
        yield "".join(lines[: s.start] + lines[s.end :])


def drop_blank_lines(text: str) -> Iterator[str]:
    """Drop blank lines (every comment stays: a generated file's case header among them)."""
    lines = text.splitlines(keepends=True)
    kept = [l for l in lines if l.strip()]
    if len(kept) != len(lines):
        yield "".join(kept)


def bypass_ops(text: str) -> Iterator[str]:
    """Replace a one-result op by one of its operands (or an earlier value): delete it and
    rename its uses. Candidates of the wrong type fail verification."""
    lines = text.splitlines(keepends=True)
    for func in functions(lines):
        args = SSA.findall("".join(lines[func.header[0] : func.header[1]]))
        for s in statements(lines, func):
            if len(s.results) != 1 or (m := RESULTS.match(lines[s.start])) is None or ":" in m.group(1):
                continue
            name = s.results[0]
            body = s.text(lines)
            operands = [o for o in dict.fromkeys(SSA.findall(body.split("=", 1)[1])) if o != name]
            # Region arguments (^bb0(%in: f32 ...)) are not visible outside the op.
            region_args = set(re.findall(r"(%[\w.$\-]+)\s*:", body.split("{", 1)[1])) if "^" in body else set()
            choices = [o for o in operands if o not in region_args] + [a for a in args if a not in operands]
            after = "".join(lines[s.end :])
            before = "".join(lines[: s.start])
            for o in choices:
                yield before + _rename(after, name, o)


def drop_results(text: str) -> Iterator[str]:
    """Drop one result of a function (from its signature and from its return)."""
    lines = text.splitlines(keepends=True)
    for func in functions(lines):
        header = "".join(lines[func.header[0] : func.header[1]])
        arrow = header_results(header)
        if arrow is None:
            continue
        res_start, res_end, types = arrow
        ret_line = next((i for i in range(func.close - 1, func.body[0] - 1, -1) if RETURN.match(lines[i])), None)
        if ret_line is None:
            continue
        ret = RETURN.match(lines[ret_line].rstrip("\n"))
        assert ret is not None  # the line was picked for matching it
        indent, rest = ret.groups()
        values_text, _, types_text = rest.partition(":")
        values = [v.strip() for v in split_top_level(values_text)]
        ret_types = [t.strip() for t in split_top_level(types_text)]
        if len(values) != len(types) or len(ret_types) != len(types):
            continue
        for k in range(len(types)):
            keep = [j for j in range(len(types)) if j != k]
            new_types = [types[j].strip() for j in keep]
            if not new_types:
                new_header = header[:res_start].rstrip() + " " + header[res_end:].lstrip()
                new_ret = f"{indent}return\n"
            else:
                sig = new_types[0] if len(new_types) == 1 else "(" + ", ".join(new_types) + ")"
                new_header = header[:res_start] + sig + header[res_end:]
                new_ret = f"{indent}return {', '.join(values[j] for j in keep)} : {', '.join(ret_types[j] for j in keep)}\n"
            new_header = new_header.replace("->  {", "{").replace("-> {", "{") if not new_types else new_header
            out = lines[: func.header[0]] + [new_header] + lines[func.header[1] : ret_line] + [new_ret] + lines[ret_line + 1 :]
            yield "".join(out)


def header_results(header: str) -> tuple[int, int, list[str]] | None:
    """(start, end, types) of the result list after '->' in a function header."""
    open_args = header.find("(")
    close_args = matching(header, open_args)
    if close_args < 0:
        return None
    rest = header[close_args + 1 :]
    match = re.match(r"\s*->\s*", rest)
    if not match:
        return None
    start = close_args + 1 + match.end()
    if header[start] == "(":
        end = matching(header, start) + 1
        return start, end, split_top_level(header[start + 1 : end - 1])
    # a single type runs up to ' attributes' or ' {'
    stop = re.search(r"\s+(?:attributes\b|\{)", header[start:])
    end = start + (stop.start() if stop else len(header[start:].rstrip()))
    return start, end, [header[start:end]]


def drop_unused_args(text: str) -> Iterator[str]:
    """Remove a function argument that the body never uses."""
    lines = text.splitlines(keepends=True)
    for func in functions(lines):
        header = "".join(lines[func.header[0] : func.header[1]])
        open_args = header.find("(")
        close_args = matching(header, open_args)
        if close_args < 0:
            continue
        args = split_top_level(header[open_args + 1 : close_args])
        body = "".join(lines[func.body[0] : func.body[1]])
        for k, arg in enumerate(args):
            names = SSA.findall(arg)
            if names and not uses(body, names[0]):
                new_args = ", ".join(a.strip() for j, a in enumerate(args) if j != k)
                new_header = header[: open_args + 1] + new_args + header[close_args:]
                yield "".join(lines[: func.header[0]] + [new_header] + lines[func.header[1] :])


# -- passes: shapes -----------------------------------------------------------------------
def _dim_values(text: str) -> list[int]:
    values: set[int] = set()
    for m in _SHAPED.finditer(text):
        values.update(int(d) for d in shaped_dims(m.group(2)) if d != "?")
    return sorted(values, reverse=True)


def _map_shapes(text: str, fn) -> str:
    """Apply fn(dim_token) -> token to every dim of every shaped type."""

    def fix(m: re.Match) -> str:
        body = m.group(2)
        dims = shaped_dims(body)
        rest = body.split("x")[len(dims) :]
        new_dims = [fn(d) for d in dims]
        return f"{m.group(1)}<{'x'.join(new_dims + rest)}>"

    return _SHAPED.sub(fix, text)


def _map_free_ints(text: str, fn) -> str:
    """Apply fn(int_token) -> token to integers outside shaped types, names and float literals
    (constants, output_shape, attribute arrays, pad amounts)."""
    pieces, last = [], 0
    for m in _SHAPED.finditer(text):
        pieces.append(_FREE_INT.sub(lambda n: fn(n.group(1)), text[last : m.start()]))
        pieces.append(m.group(0))
        last = m.end()
    pieces.append(_FREE_INT.sub(lambda n: fn(n.group(1)), text[last:]))
    return "".join(pieces)


def _targets(v: int) -> list[int]:
    return sorted({w for w in (1, 2, 3, v // 2, v // 2 + 1, v - 1) if 0 < w < v})


def _replace_dim(text: str, mapping: dict[str, str], free: bool) -> str:
    out = _map_shapes(text, lambda d: mapping.get(d, d))
    if free:
        out = _map_free_ints(out, lambda n: mapping.get(n, n))
    return out


def _code_and_comments(text: str) -> tuple[list[str], list[bool]]:
    lines = text.splitlines(keepends=True)
    return lines, [l.lstrip().startswith("//") for l in lines]


def _on_code(text: str, fn) -> str:
    """Apply a text transform to code lines only (comments, e.g. a case header, stay as they are)."""
    lines, comment = _code_and_comments(text)
    code = "".join(l for l, c in zip(lines, comment) if not c)
    new = fn(code).splitlines(keepends=True)
    if len(new) != len(code.splitlines(keepends=True)):
        return "".join(new)
    it = iter(new)
    return "".join(l if c else next(it) for l, c in zip(lines, comment))


def shrink_dims(text: str) -> Iterator[str]:
    """Shrink one dim size consistently: every occurrence in types, and (variant) every free
    integer with the same value (output_shape, constants, attributes); also turn it into '?'."""
    for v in _dim_values(text):
        if v <= 1:
            continue
        for w in _targets(v):
            m = {str(v): str(w)}
            yield _on_code(text, lambda t: _replace_dim(t, m, True))
            yield _on_code(text, lambda t: _replace_dim(t, m, False))
        yield _on_code(text, lambda t: _map_shapes(t, lambda d: "?" if d == str(v) else d))


def static_dims(text: str) -> Iterator[str]:
    """Turn '?' dims into static sizes: all at once, then one shaped type at a time."""
    if "?" not in text:
        return
    for w in ("1", "2", "4"):
        yield _on_code(text, lambda t: _map_shapes(t, lambda d: w if d == "?" else d))
    types = sorted({m.group(0) for m in _SHAPED.finditer(text) if "?" in shaped_dims(m.group(2))})
    for t in types:
        for w in ("1", "2"):
            new = t.replace("?", w)
            yield _on_code(text, lambda s: s.replace(t, new))


def shrink_dim_pairs(text: str) -> Iterator[str]:
    """Shrink two dim sizes together (an input extent and an output extent tied by a conv or a
    pad); for what one value alone cannot change without breaking the types."""
    all_values = _dim_values(text)[:12]
    for a, b in itertools.permutations(all_values, 2):
        if a <= 1:
            continue
        for a2 in _targets(a)[:4]:
            b_options = _targets(b)[:3] if b > 1 else []
            # keep a - s*b fixed for small strides s: in = (out - 1) * s + k
            if b > 1:
                b_options += [b - 1]
            for b2 in dict.fromkeys(b_options):
                m = {str(a): str(a2), str(b): str(b2)}
                yield _on_code(text, lambda t: _replace_dim(t, m, True))
                yield _on_code(text, lambda t: _replace_dim(t, m, False))


# -- passes: attributes and constants -----------------------------------------------------
_STRIDES = re.compile(r"\b(strides|dilations)\s*=\s*dense<([^>]*)>")
_PAD = re.compile(r"\b(low|high)\s*\[([^\]]*)\]")
_DENSE_LIST = re.compile(r"dense<\[([^<>]*)\]>")


def simplify_attrs(text: str) -> Iterator[str]:
    """Strides and dilations to 1, pad amounts to 0, one at a time and all at once."""
    for m in list(_STRIDES.finditer(text)):
        if m.group(2).strip() != "1":
            yield text[: m.start()] + f"{m.group(1)} = dense<1>" + text[m.end() :]
    for m in list(_PAD.finditer(text)):
        items = [i.strip() for i in m.group(2).split(",")]
        if any(i not in ("0", "") and not i.startswith("%") for i in items):
            zero = ", ".join("0" if not i.startswith("%") else i for i in items)
            yield text[: m.start()] + f"{m.group(1)}[{zero}]" + text[m.end() :]


def splat_constants(text: str) -> Iterator[str]:
    """A dense list constant becomes a splat of its first element."""
    for m in list(_DENSE_LIST.finditer(text)):
        first = m.group(1).replace("[", "").split(",")[0].strip()
        if first:
            yield text[: m.start()] + f"dense<{first}>" + text[m.end() :]


def shrink_ints(text: str) -> Iterator[str]:
    """Each free integer literal (not a dim of a type) toward 0 and 1, one occurrence at a time."""
    code_ints = []
    last = 0
    for m in _SHAPED.finditer(text):
        code_ints += [(n.start(1) + last, n.group(1)) for n in _FREE_INT.finditer(text[last : m.start()])]
        last = m.end()
    code_ints += [(n.start(1) + last, n.group(1)) for n in _FREE_INT.finditer(text[last:])]
    comment_spans = [(m.start(), m.end()) for m in re.finditer(r"//[^\n]*", text)]
    for pos, token in code_ints:
        if any(a <= pos < b for a, b in comment_spans):
            continue
        v = int(token)
        for w in (0, 1, v // 2):
            if w < v:
                yield text[:pos] + str(w) + text[pos + len(token) :]


TEXT_STRUCTURE = (
    ("strip_comments", strip_comments),
    ("drop_results", drop_results),
    ("drop_unused_ops", drop_unused_ops),
    ("drop_unused_args", drop_unused_args),
    ("bypass_ops", bypass_ops),
    ("drop_resultless_ops", drop_resultless_ops),
)
# What a generated file (its `// shapefuzz-case:` header) may take beside its parameter steps: steps
# that keep its computation, so the header still describes the body (its signature, its results):
# its template's dead values (an unused `arith.constant`, an unread `tensor.dim`) and blank lines.
CASE_CLEANUP = (
    ("drop_unused_ops", drop_unused_ops),
    ("drop_blank_lines", drop_blank_lines),
)
TEXT_SHAPES = (
    ("shrink_dims", shrink_dims),
    ("static_dims", static_dims),
    ("simplify_attrs", simplify_attrs),
)
TEXT_DETAIL = (
    ("shrink_dim_pairs", shrink_dim_pairs),
    ("splat_constants", splat_constants),
    ("shrink_ints", shrink_ints),
)
