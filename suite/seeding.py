"""Seeding (T-4): one realistic bug in a real function, and its unchanged control.

A mutation changes ONE token or line of a function (the list in `KINDS`). The function is cut out of its
file, dedented, and mutated on its own, so the line a model must name is a line of the fixture it reads. A
mutation that leaves the function's syntax tree unchanged, or does not parse, is discarded. The function's
own tests are never run: the suite never executes code from a repository. Pure apart from reading files;
`suite.seed_repo` finds the files and writes the drafts.
"""

from __future__ import annotations

import ast
import io
import random
import textwrap
import tokenize
from dataclasses import dataclass

SWAPS = {
    "==": "!=", "!=": "==", "<": "<=", "<=": "<", ">": ">=", ">=": ">",
    "and": "or", "or": "and", "True": "False", "False": "True", "break": "continue", "continue": "break",
    "+=": "-=", "-=": "+=",
}
KINDS = {
    "==": "comparison", "!=": "comparison", "<": "comparison", "<=": "comparison", ">": "comparison",
    ">=": "comparison", "and": "and/or", "or": "and/or", "True": "True/False", "False": "True/False",
    "break": "break/continue", "continue": "break/continue", "+=": "+=/-=", "-=": "+=/-=",
}
MIN_LINES, MAX_LINES = 4, 60
# Calls whose arguments can be swapped without changing what they do.
COMMUTATIVE = frozenset({"max", "min"})


@dataclass(frozen=True)
class Function:
    name: str
    source: str  # dedented, decorators included; line 1 is the fixture's first line


@dataclass(frozen=True)
class Mutation:
    kind: str
    line: int  # 1-based, in the function's source
    before: str
    after: str  # "" when the line was deleted
    source: str  # the whole mutated function

    @property
    def lines(self) -> tuple[int, ...]:
        """The lines that are right to name: a deleted line leaves its gap between two."""
        return (self.line - 1, self.line) if not self.after else (self.line,)


def functions(source: str) -> list[Function]:
    """Every function or method of a module with between `MIN_LINES` and `MAX_LINES` lines."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines(keepends=True)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if MIN_LINES <= node.end_lineno - first + 1 <= MAX_LINES:
                found.append(Function(node.name, textwrap.dedent("".join(lines[first - 1:node.end_lineno]))))
    return found


def _replace(lines: list[str], row: int, col: int, end: int, text: str) -> str:
    line = lines[row - 1]
    changed = [*lines]
    changed[row - 1] = line[:col] + text + line[end:]
    return "".join(changed)


def _token_edits(source: str) -> list[tuple[str, int, str]]:
    """(kind, line, mutated source) for every single-token edit in the list."""
    lines = source.splitlines(keepends=True)
    edits = []
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for i, tok in enumerate(tokens):
        (row, col), (end_row, end) = tok.start, tok.end
        if row != end_row:
            continue
        if tok.string in SWAPS and tok.type in (tokenize.OP, tokenize.NAME):
            edits.append((KINDS[tok.string], row, _replace(lines, row, col, end, SWAPS[tok.string])))
        elif tok.type == tokenize.NAME and tok.string == "not":
            after = tokens[i + 1] if i + 1 < len(tokens) else tok
            cut = after.start[1] if after.start[0] == row else end
            edits.append(("removed not", row, _replace(lines, row, col, cut, "")))
        elif tok.type == tokenize.NUMBER and tok.string.isdigit():
            value = int(tok.string)
            kind = "range/slice off-by-one" if _in_range_or_slice(tokens, i) else "constant ±1"
            for other in {value + 1, max(value - 1, 0)} - {value}:
                edits.append((kind, row, _replace(lines, row, col, end, str(other))))
    return edits


def _in_range_or_slice(tokens: list[tokenize.TokenInfo], i: int) -> bool:
    depth, j = 0, i - 1
    while j >= 0:
        s = tokens[j].string
        if s in ")]":
            depth += 1
        elif s in "([":
            if depth == 0:
                return s == "[" or (s == "(" and j > 0 and tokens[j - 1].string == "range")
            depth -= 1
        elif s == ":" and depth == 0 and tokens[j].type == tokenize.OP:
            return any(t.string == "[" for t in tokens[max(0, j - 8):j])
        j -= 1
    return False


def _commutative(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id in COMMUTATIVE


def _node_edits(source: str) -> list[tuple[str, int, str]]:
    """Swapped adjacent arguments, and a deleted call statement (never a block's only statement)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and not _commutative(node):
            for a, b in zip(node.args, node.args[1:], strict=False):
                if (a.lineno == b.lineno == a.end_lineno == b.end_lineno and a.end_col_offset is not None
                        and b.end_col_offset is not None):
                    left, right = ast.get_source_segment(source, a), ast.get_source_segment(source, b)
                    if left and right and left != right:
                        line = lines[a.lineno - 1]
                        swapped = (line[:a.col_offset] + right + line[a.end_col_offset:b.col_offset] + left
                                   + line[b.end_col_offset:])
                        edits.append(("swapped args", a.lineno,
                                      "".join([*lines[:a.lineno - 1], swapped, *lines[a.lineno:]])))
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and len(body) > 1:
                for stmt in body:
                    if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                            and stmt.lineno == stmt.end_lineno):
                        edits.append(("deleted call", stmt.lineno,
                                      "".join([*lines[:stmt.lineno - 1], *lines[stmt.lineno:]])))
    return edits


def mutations(function: Function) -> list[Mutation]:
    """Every mutation of the list that changes the function's syntax tree and still parses."""
    try:
        original = ast.dump(ast.parse(function.source))
        edits = _token_edits(function.source) + _node_edits(function.source)
    except (SyntaxError, tokenize.TokenError):
        return []
    before_lines = function.source.splitlines()
    found = []
    for kind, line, mutated in edits:
        try:
            if ast.dump(ast.parse(mutated)) == original:
                continue
        except SyntaxError:
            continue
        after_lines = mutated.splitlines()
        after = after_lines[line - 1] if len(after_lines) == len(before_lines) else ""
        found.append(Mutation(kind, line, before_lines[line - 1], after, mutated))
    return found


def pick(candidates: list[Mutation], rng: random.Random) -> Mutation | None:
    """One mutation, its kind drawn first so frequent tokens (numbers) do not crowd out the rest."""
    if not candidates:
        return None
    kind = rng.choice(sorted({m.kind for m in candidates}))
    return rng.choice([m for m in candidates if m.kind == kind])
