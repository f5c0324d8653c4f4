"""moved_keywords: a keyword that left a TF signature fails naming its new spelling; the signature stays TF's."""
from __future__ import annotations

import inspect

import pytest

from torchstrategy._machinery.moved_keywords import moved_keywords


class Made:
    @moved_keywords(old="use `new` instead.")
    def __init__(self, a, b=1) -> None:
        self.values = (a, b)


def test_the_signature_is_the_wrapped_one_and_calls_pass_through():
    assert list(inspect.signature(Made).parameters) == ["a", "b"]
    assert Made(3, b=4).values == (3, 4)


def test_a_moved_keyword_names_its_new_spelling_and_others_keep_pythons_error():
    with pytest.raises(TypeError, match=r"^Made\(\) no longer takes `old` .*: use `new` instead\.$"):
        Made(1, old=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'other'"):
        Made(1, other=2)


def test_it_needs_a_spelling_for_each_keyword():
    with pytest.raises(ValueError, match="non-empty string"):
        moved_keywords(old="")
    with pytest.raises(ValueError, match="non-empty string"):
        moved_keywords()
