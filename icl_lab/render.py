"""Text for readers: inline MyST Markdown as HTML, Markdown tables, lists split at their top level.

A leaf module shared by the claim cards, the sliders, the command line and the reproduction page.
Inline Markdown goes through markdown-it-py (the parser under Jupyter Book's MyST) with its
dollar-math plugin: ``$...$`` becomes ``\\(...\\)`` and ``$$...$$`` becomes ``\\[...\\]``, which
MathJax typesets in the book and in JupyterLab; raw HTML in the text is escaped.
"""
from __future__ import annotations

import html
import math
import re

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


# -- measured values as a reader reads them: the one formatter of cards, ledger tables and exports ------

DIGITS = 3  # significant digits of a measured number
_MATH = re.compile(r"(\$\$.+?\$\$|\$[^$\n]+\$|`[^`\n]*`|\[[^\]\n]*\]\(#[^)\s]*\))", re.S)  # math, code, links: as written


def number(x, digits: int = DIGITS) -> str:
    """A number as MyST: ``digits`` significant digits (an integral value below 100,000 exactly), a
    huge or tiny one as ``$a\\times10^{b}$``, a boolean as ``yes``/``no``, infinities and NaN as words."""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if hasattr(x, "item") and getattr(x, "ndim", 1) == 0:
        return number(x.item(), digits)
    if isinstance(x, int):
        return str(x) if abs(x) < 1_000_000 else number(float(x), digits)
    x = float(x)
    if math.isnan(x):
        return "undefined"
    if math.isinf(x):
        return "larger than any float" if x > 0 else "below any float"
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 1e5 or a < 1e-3:
        mant, exp = f"{x:.{digits - 1}e}".split("e")
        mant = mant.rstrip("0").rstrip(".") if "." in mant else mant
        exp = int(exp)
        return f"${'-' if mant == '-1' else ''}10^{{{exp}}}$" if mant in ("1", "-1") else f"${mant}\\times10^{{{exp}}}$"
    if x == int(x):
        return str(int(x))
    if a >= 10 ** (digits - 1):
        return str(int(round(x, digits - 1 - int(math.floor(math.log10(a))))))
    return f"{x:.{digits}g}"


def numbers(xs, digits: int = DIGITS) -> list[str]:
    """Several numbers, with as many digits (up to 6) as it takes to show the gaps between them to within a
    third (an interval [0.9991, 0.9996] does not read [0.999, 1])."""
    xs = list(xs)
    for d in range(digits, 7):
        out = [number(x, d) for x in xs]
        if all(_resolved(xs[i], xs[j], d) for i in range(len(xs)) for j in range(i)):
            return out
    return out


def _resolved(a, b, d: int) -> bool:
    """Whether ``a`` and ``b`` rounded to ``d`` significant digits keep their gap to within a third."""
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return True
    if not (math.isfinite(a) and math.isfinite(b)) or a == b:
        return True
    r = [float(f"{x:.{d - 1}e}") for x in (a, b)]
    return abs((r[0] - r[1]) - (a - b)) <= abs(a - b) / 3


def plain_value(v) -> str:
    """Any measured value as MyST a reader reads: a number (:func:`number`), a statistic with its interval
    (its own ``str``), a sequence as its values comma-separated (each to three digits, as :func:`plain` reads them) (nested ones in parentheses), a mapping as
    ``key: value`` pairs, a string cleaned of Python reprs (:func:`plain`)."""
    if hasattr(v, "tolist") and getattr(v, "ndim", 0) > 0:
        v = v.tolist()
    if isinstance(v, (bool, int, float)) or (hasattr(v, "item") and getattr(v, "ndim", 1) == 0):
        return number(v)
    if isinstance(v, dict):
        return ", ".join(f"{plain_value(k)}: {plain_value(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            return ", ".join(number(x) for x in v)
        return ", ".join(f"({plain_value(x)})" if isinstance(x, (list, tuple)) else plain_value(x) for x in v)
    return plain(str(v))


_NUM = r"-?(?:\d+\.?\d*(?:e[+-]?\d+)?|inf|nan)"
_FLOAT = re.compile(r"(?<![\w.$^{])-?(?:\d+\.\d+(?:e[+-]?\d+)?|\d+e[+-]?\d+)(?![\w.])")
_NESTED = re.compile(r"\[\s*(\[[^\[\]]*\](?:\s*,\s*\[[^\[\]]*\])*)\s*\]")
_LIST = re.compile(r"\[([^\[\]{}]*,[^\[\]{}]*)\]")
_DICT = re.compile(r"(\s*=\s*)?\{([^{}]*:[^{}]*)\}")
_WORDS = {"True": "yes", "False": "no", "None": "none", "inf": "larger than any float", "nan": "undefined"}


def _item(s: str) -> str:
    s = s.strip()
    if re.fullmatch(r"'[^']*'|\"[^\"]*\"", s):
        return s[1:-1]
    try:
        return number(float(s)) if re.fullmatch(_NUM, s) else plain(s)
    except ValueError:
        return s


def _items(body: str) -> list[str]:
    return [_item(x) for x in split_top_level(body)]


_VALUE = re.compile(rf"\s*(?:{_NUM}|'[^']*'|\"[^\"]*\"|\([^()]*\)|True|False|None)\s*")


def _list(m) -> str:
    parts = split_top_level(m.group(1))
    if not all(_VALUE.fullmatch(x) for x in parts):  # words in brackets ("[min y, max y]"): not a repr
        return "[" + plain(m.group(1)) + "]"
    if len(parts) == 2 and all(re.fullmatch(_NUM, x.strip()) for x in parts):
        a, b = (float(x) for x in parts)
        if a <= b:  # read as an interval
            return "[" + ", ".join(numbers([a, b])) + "]"
    return ", ".join(_items(m.group(1)))


_TUPLE = r"\(((?:\s*-?\d+\.\d*(?:e[+-]?\d+)?\s*,)+\s*-?\d+\.\d*(?:e[+-]?\d+)?)\s*\)"
_WORD = r"(\s*=\s*)?(?<![\w-])(True|False|None|-?inf|nan)(?![\w-])"
_ONE = rf"=\s*\[\s*{_NUM}\s*\]"  # "K = [10]": a list of one value
# one pass, the first alternative that matches wins: nothing replaced is read again (plain(plain(t)) == plain(t))
_REPR = re.compile("|".join(f"(?P<{n}>{p})" for n, p in (
    ("nested", _NESTED.pattern), ("dict", _DICT.pattern), ("list", _LIST.pattern), ("one", _ONE), ("tuple", _TUPLE),
    ("word", _WORD), ("float", _FLOAT.pattern))))


def _one_repr(m) -> str:
    kind, g = m.lastgroup, m.group(m.lastgroup)
    if kind == "nested":
        return ", ".join("(" + ", ".join(_items(x)) + ")" for x in re.findall(r"\[([^\[\]]*)\]", g[1:-1]))
    if kind == "dict":
        body = _DICT.fullmatch(g)
        return (": " if body.group(1) else "") + ", ".join(
            f"{_item(k)} → {_item(v)}" for k, _, v in (p.partition(":") for p in split_top_level(body.group(2))))
    if kind == "list":
        return _list(_LIST.fullmatch(g))
    if kind == "one":
        return "= " + _item(g[g.index("[") + 1:-1])
    if kind == "tuple":
        return "(" + ", ".join(_items(g.strip()[1:-1])) + ")"
    if kind == "word":
        w = re.search(r"(True|False|None|-?inf|nan)", g).group(1)
        return (": " if "=" in g[:g.index(w)] else " " if g[0].isspace() else "") + (
            "below any float" if w == "-inf" else _WORDS[w])
    return _float(g)


def _plain_prose(t: str) -> str:
    return _REPR.sub(_one_repr, t)


def _float(s: str) -> str:
    """A float literal of free text, rounded; one that is short already stays as written."""
    if re.fullmatch(r"-?\d+\.0", s):
        return s[:-2]
    if "e" not in s and len(s.lstrip("-").replace(".", "").lstrip("0")) <= DIGITS:
        return s
    return number(float(s))


def plain(text) -> str:
    """Free text (a measured line, a criterion, a caveat) with every Python repr in it put in words,
    outside its math and code: lists as their values comma-separated (two ascending numbers stay an
    interval ``[a, b]``), nested lists as groups in parentheses, dicts as ``key → value``, booleans as
    yes/no, infinities and NaN as words, floats to three significant digits (huge or tiny ones as
    ``$a\\times10^{b}$``)."""
    if text is None:
        return ""
    parts = _MATH.split(str(text))
    return "".join(p if i % 2 else _plain_prose(p) for i, p in enumerate(parts))


#: what reads as a Python repr in text a reader sees (outside math and code)
REPRS = [
    (re.compile(r"\[\s*\["), "a nested list"),
    (re.compile(r"\{[^{}$]*?:[^{}$]*\}"), "a dict"),
    (re.compile(r"(?<![\w-])(?:True|False|None)(?![\w-])"), "a Python boolean or None"),
    (re.compile(r"(?<![\w\\-])(?:inf|nan)(?![\w-])"), "inf or nan"),
    (re.compile(r"\d(?:\.\d+)?e(?:\+\d|-0\d)"), "a float written like 1e+200"),
    (re.compile(r"\[(?:\s*-?[\d.]+(?:e[+-]?\d+)?\s*,){2,}"), "a list of numbers"),
    (re.compile(r"[\[(]\s*-?\d+\.0\s*,|,\s*-?\d+\.0\s*[\])]"), "a float repr (x.0) in a list"),
]


def reprs(text: str) -> list[str]:
    """The Python reprs a reader would see in ``text`` (outside ``$...$`` math and code), as
    ``"a dict: {0.4: 3575}"``; [] where there are none."""
    prose = " ".join(p for i, p in enumerate(_MATH.split(text or "")) if not i % 2)
    return [f"{what}: {m.group(0)[:40]}" for pat, what in REPRS for m in pat.finditer(prose)]


_TEX_WORDS = re.compile(r"\\(?:text[a-z]*|mathrm|operatorname\*?|mbox|rm|mathit|mathsf|mathtt|mathbf|textbf)\s*"
                        r"\{[^{}]*\}|\{\\(?:rm|mathrm|text)\s[^{}]*\}|\\[A-Za-z]+")


def prose_in_math(text: str) -> list[str]:
    """Words of four or more letters inside ``$...$`` math that are not typeset as text
    (``\\text{...}``, ``\\mathrm{...}``) or a command (``\\log``): prose that MathJax would run together
    in italics ("readN", "LemmaC.5"); [] where there are none."""
    out = []
    for m in re.finditer(r"\$\$(.+?)\$\$|\$([^$\n]+)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", text or "", re.S):
        body = next(g for g in m.groups() if g is not None)
        out += re.findall(r"(?<![A-Za-z\\])[A-Za-z]{4,}", _TEX_WORDS.sub(" ", body))
    return out
