"""The README's Python example runs as printed (and the report it prints holds)."""

from __future__ import annotations

import contextlib
import io

from conftest import REPO


def test_readme_python_example_runs():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("```python\n") + len("```python\n")
    code = text[start : text.index("```", start)]
    assert len(code.strip().splitlines()) <= 5, "the README promises a five-line example"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().startswith("f(ΠH) = Π f(H): HOLDS")
