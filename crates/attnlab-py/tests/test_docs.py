"""The docstring examples run, and every public function is documented."""

from __future__ import annotations

import doctest
import inspect

import attnlab


def test_docstring_examples_run():
    for module in (attnlab, attnlab.rope):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__
        assert result.attempted > 0, f"{module.__name__} has no example"


def test_public_api_is_documented():
    for module in (attnlab, attnlab.rope):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                assert obj.__doc__ and obj.__doc__.strip(), f"{module.__name__}.{name}"
