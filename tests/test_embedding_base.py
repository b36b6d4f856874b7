"""Embedder, the base of every embedder: bad input, each a clear error."""

from bad_inputs import Case, Utf8Embedder, clear_error_test

# ==================================================================== bad inputs
# A text or query holding a lone surrogate is refused by the base class, on every backend.

EMBEDDER_CASES: list[Case] = [Case("retrieval", *c) for c in [
    ("query-lone-surrogate-embedder", lambda t: Utf8Embedder().embed_query("猫\udfff"),
     ValueError, r"query holds a lone surrogate '\\udfff' at position 1, which is not valid"),
    ("texts-lone-surrogate-embedder", lambda t: Utf8Embedder()(["猫", "狗\ud800"]),
     ValueError, r"texts\[1\] holds a lone surrogate '\\ud800' at position 1.*remove it"),
]]


test_bad_input_gets_a_clear_error = clear_error_test(EMBEDDER_CASES)
