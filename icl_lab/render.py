"""Text for readers: inline MyST Markdown as HTML, Markdown tables, lists split at their top level.

A leaf module shared by the claim cards, the sliders, the command line and the reproduction page.
Inline Markdown goes through markdown-it-py (the parser under Jupyter Book's MyST) with its
dollar-math plugin: ``$...$`` becomes ``\\(...\\)`` and ``$$...$$`` becomes ``\\[...\\]``, which
MathJax typesets in the book and in JupyterLab; raw HTML in the text is escaped.
"""
from __future__ import annotations

import html

from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

_MD = MarkdownIt("commonmark", {"html": False}).use(dollarmath_plugin, allow_space=True, allow_digits=True,
                                                     double_inline=True)
_MD.add_render_rule("math_inline", lambda self, tokens, i, *_: r"\(" + html.escape(tokens[i].content) + r"\)")
_MD.add_render_rule("math_inline_double",
                    lambda self, tokens, i, *_: r"\[" + html.escape(tokens[i].content) + r"\]")


def markdown_inline(text: str | None) -> str:
    """One line of MyST Markdown (math, ``**bold**``, ``*italic*``, ```code```, links) as HTML."""
    return _MD.renderInline(text or "")


def split_top_level(text: str, sep: str = ",", quotes: str = "\"'") -> list[str]:
    """``text`` split at ``sep`` outside brackets and ``quotes``, each part stripped:
    ``"[1,2],[3,4]"`` -> ``["[1,2]", "[3,4]"]`` (a ``--grid`` list, a theorem's conditions)."""
    depth, quote, cuts = 0, None, [-len(sep)]
    for i, ch in enumerate(text):
        if quote or ch in quotes:
            quote = None if ch == quote else quote or ch
        else:
            depth += (ch in "([{") - (ch in ")]}")
            if depth == 0 and text.startswith(sep, i):
                cuts.append(i)
    return [text[a + len(sep):b].strip() for a, b in zip(cuts, [*cuts[1:], len(text)])]


def md_table(header, rows) -> str:
    """A Markdown table: one header row, then one row per sequence of cells (``|`` escaped)."""
    def line(cells):
        return "| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |"
    return "\n".join([line(header), "|" + "---|" * len(header), *map(line, rows)])
