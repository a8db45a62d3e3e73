"""Streaming a huge JSON document member by member: tiny chunks, arrays, nesting, errors."""

from __future__ import annotations

import io
import json

import pytest

from workbench.core.providers.json_stream import members

DOC = {"formatVersion": "v1.0", "big": {"skip": [1, 2, {"deep": "x" * 50}]},
       "products": {"A": {"sku": "A", "n": 1.5e3}, "B": {"sku": "B", "s": "a \"quoted\" } ] , string"}},
       "terms": {"OnDemand": {"A": {"t": [True, False, None]}}, "Reserved": {}},
       "list": [{"i": 0}, {"i": 1}, 7, -2.5e-3], "tail": 12345}


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize("indent", [None, 2])
def test_members_of_the_wanted_containers_only(chunk, indent):
    text = json.dumps(DOC, indent=indent).replace('": ', '" : ')
    got = list(members(io.BytesIO(text.encode()), {("products",), ("terms", "OnDemand"), ("terms", "Reserved"),
                                                    ("list",)}, chunk=chunk))
    assert got == [(("products",), "A", DOC["products"]["A"]), (("products",), "B", DOC["products"]["B"]),
                   (("terms", "OnDemand"), "A", DOC["terms"]["OnDemand"]["A"]),
                   (("list",), 0, {"i": 0}), (("list",), 1, {"i": 1}), (("list",), 2, 7), (("list",), 3, -2.5e-3)]


def test_text_streams_and_unicode_split_across_chunks():
    doc = {"products": {"ü": "Ω" * 10, "k": 1}}
    raw = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    assert dict((k, v) for _, k, v in members(io.BytesIO(raw), {("products",)}, chunk=1)) == doc["products"]
    assert [k for _, k, _ in members(io.StringIO(json.dumps(doc)), {("products",)}, chunk=2)] == ["ü", "k"]


@pytest.mark.parametrize("text, words", [
    ('{"products": {"A": {"x": 1}', "expected ','"),
    ('{"products": {"A": {"x": 1', "not JSON"),
    ('{"products": {"A" 1}}', "expected ':'"),
    ('{"products": {"A": 1} "x": 2}', "expected ','"),
    ('"just a string"', "expected an object"),
    ('{"a": 1} trailing', "unexpected data"),
    ('{"products": {"A": "' + "x" * 200, "larger than"),
])
def test_bad_documents_name_the_offset(text, words):
    with pytest.raises(ValueError, match=words):
        list(members(io.BytesIO(text.encode()), {("products",)}, chunk=16, max_value_bytes=100))
