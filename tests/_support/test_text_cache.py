"""The bounded text cache (course_lib._support.text_cache.TextCache): its three bounds
(entries, characters, longest text kept), the second-use rule, kinds kept apart, what it
counts, and its bounds held when threads share it."""

import threading

import pytest

from course_lib._support.text_cache import TextCache


class Counting:
    """A compute function that records the texts it was called with."""

    def __init__(self, result=len):
        self.calls, self.result = [], result

    def __call__(self, text):
        self.calls.append(text)
        return self.result(text)


@pytest.mark.parametrize("arguments, message", [
    ((0, 10, 5), "max_entries must be an integer >= 1, got 0"),
    ((1, 0, 0), "max_chars must be an integer >= 1, got 0"),
    ((1, 10, -1), "max_text_chars must be an integer in"),
    ((1, 10, 11), "max_text_chars must be an integer in"),  # a kept text must fit max_chars
    ((True, 10, 5), "max_entries must be an integer >= 1, got True"),
    ((1, 10.0, 5), "max_chars must be an integer >= 1, got 10.0"),
])
def test_bounds_are_checked(arguments, message):
    with pytest.raises(ValueError, match=message):
        TextCache(*arguments)


def test_a_stored_text_is_computed_once_and_its_value_returned_as_is():
    compute = Counting(lambda text: [text])
    cache = TextCache(max_entries=5, max_chars=100, max_text_chars=10)
    first = cache("长城", compute)
    assert cache("长城", compute) is first  # not a copy
    assert compute.calls == ["长城"] and (cache.hits, cache.misses) == (1, 1)


def test_kinds_keep_apart_what_different_computations_made_of_one_text():
    cache = TextCache(max_entries=5, max_chars=100, max_text_chars=10)
    assert cache("abc", len, kind="length") == 3
    assert cache("abc", str.upper, kind="upper") == "ABC"
    assert cache("abc", str.upper) == "ABC" and len(cache) == 3  # the default kind is a third
    assert cache("abc", lambda t: pytest.fail("recomputed"), kind="length") == 3
    assert cache.chars == 9  # each entry costs its text's length


def test_a_text_of_exactly_max_text_chars_is_kept_one_longer_is_not():
    compute = Counting()
    cache = TextCache(max_entries=5, max_chars=100, max_text_chars=4)
    for text in ("abcd", "abcd", "abcde", "abcde"):
        cache(text, compute)
    assert compute.calls == ["abcd", "abcde", "abcde"] and len(cache) == 1
    assert (cache.hits, cache.misses) == (1, 3)  # a text too long to keep is a miss each time


def test_max_text_chars_zero_keeps_only_the_empty_text():
    compute = Counting()
    cache = TextCache(max_entries=5, max_chars=1, max_text_chars=0)
    for text in ("", "", "a", "a"):
        cache(text, compute)
    assert compute.calls == ["", "a", "a"] and len(cache) == 1 and cache.chars == 0


def test_the_character_bound_drops_as_many_old_entries_as_it_takes():
    cache = TextCache(max_entries=100, max_chars=10, max_text_chars=10)
    for text in ("aaa", "bbb", "ccc"):
        cache(text, len)
    cache("aaa", len)  # now "bbb" is the least recently used
    cache("d" * 8, len)  # 17 characters: "bbb", "ccc" and "aaa" go, in that order
    assert len(cache) == 1 and cache.chars == 8
    cache("e" * 10, len)  # a text of max_chars fills the cache alone
    assert len(cache) == 1 and cache.chars == 10
    compute = Counting()
    cache("e" * 10, compute)
    assert compute.calls == []


def test_the_entry_bound_keeps_the_most_recently_used():
    compute = Counting()
    cache = TextCache(max_entries=3, max_chars=1000, max_text_chars=10)
    for text in ("a", "b", "c", "a", "d"):  # "b" is used least recently when "d" comes
        cache(text, compute)
    compute.calls.clear()
    for text in ("a", "c", "d", "b"):
        cache(text, compute)
    assert compute.calls == ["b"] and len(cache) == 3


def test_a_value_of_none_is_stored_like_any_other():
    compute = Counting(lambda text: None)
    cache = TextCache(max_entries=3, max_chars=100, max_text_chars=10)
    assert cache("x", compute) is None and cache("x", compute) is None
    assert compute.calls == ["x"] and cache.hits == 1


def test_an_error_in_compute_stores_nothing():
    cache = TextCache(max_entries=3, max_chars=100, max_text_chars=10)

    def fails(text):
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        cache("x", fails)
    assert len(cache) == 0 and cache.chars == 0 and cache.misses == 1
    assert cache("x", len) == 1 and len(cache) == 1


# ------------------------------------------------------------------ second use
def test_second_use_stores_a_text_only_when_it_comes_again():
    compute = Counting()
    cache = TextCache(max_entries=10, max_chars=100, max_text_chars=10, second_use=True)
    for text in ("q1", "q2", "q3"):  # a stream of distinct queries keeps nothing
        cache(text, compute)
    assert len(cache) == 0 and cache.chars == 0
    cache("q2", compute)  # second use: kept from now on
    cache("q2", compute)
    assert compute.calls == ["q1", "q2", "q3", "q2"] and len(cache) == 1 and cache.hits == 1


def test_second_use_remembers_only_the_last_max_entries_new_texts():
    compute = Counting()
    cache = TextCache(max_entries=2, max_chars=100, max_text_chars=10, second_use=True)
    for text in ("a", "b", "c", "a"):  # "a" was forgotten when "c" came: a first use again
        cache(text, compute)
    assert len(cache) == 0
    cache("c", compute)  # "c" is still remembered
    assert len(cache) == 1
    cache("a", compute)  # the fourth "a" above made it remembered again
    assert len(cache) == 2


def test_second_use_counts_uses_per_kind_and_never_counts_long_texts():
    cache = TextCache(max_entries=5, max_chars=100, max_text_chars=3, second_use=True)
    cache("ab", len, kind=1)
    cache("ab", len, kind=2)  # another kind: a first use of its own
    assert len(cache) == 0
    cache("ab", len, kind=1)
    assert len(cache) == 1
    for _ in range(3):
        cache("abcd", len)
    assert len(cache) == 1


def test_clear_forgets_entries_and_the_texts_seen_once():
    cache = TextCache(max_entries=5, max_chars=100, max_text_chars=10, second_use=True)
    for text in ("a", "a", "b"):
        cache(text, len)
    assert len(cache) == 1
    cache.clear()
    assert len(cache) == 0 and cache.chars == 0
    cache("b", len)  # seen before the clear: forgotten, so a first use again
    assert len(cache) == 0


def test_repr_shows_the_fill_and_the_bounds():
    cache = TextCache(max_entries=3, max_chars=2000, max_text_chars=1500)
    cache("abc", len)
    assert repr(cache) == ("TextCache(1/3 entries, 3/2,000 characters, texts up to 1,500 "
                           "characters kept)")


# ------------------------------------------------------------------ threads
def test_threads_sharing_a_cache_get_right_answers_and_the_bounds_hold():
    cache = TextCache(max_entries=8, max_chars=40, max_text_chars=10)
    texts = [str(i) * (1 + i % 7) for i in range(30)]
    wrong, start = [], threading.Barrier(4)

    def work(offset):
        start.wait()
        for round_ in range(200):
            text = texts[(offset + round_ * 7) % len(texts)]
            if cache(text, lambda t: t[::-1]) != text[::-1]:
                wrong.append(text)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert wrong == []
    assert cache.hits + cache.misses == 800
    assert len(cache) <= 8 and 0 < cache.chars <= 40
