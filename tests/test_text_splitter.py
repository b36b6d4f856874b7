import pytest

from course_lib.text_splitter import SentenceSplitter, approx_gpt2_tokens, split_paragraphs

CHINESE = ("长城是中国古代修建的大型军事防御工程。现存的大部分城墙修建于明朝！"
           "修建长城的目的是什么？主要是抵御北方游牧民族，沿线设有烽火台。") * 4
ENGLISH = ("Photosynthesis turns light into chemical energy. It takes place in chloroplasts. "
           "Chlorophyll reflects green light, which is why leaves look green. ") * 4


@pytest.mark.parametrize("size,overlap", [(30, 0), (60, 10), (128, 12), (256, 25)])
def test_chunks_respect_size_and_are_substrings(size, overlap):
    chunks = SentenceSplitter(size, overlap).split_text(CHINESE)
    assert all(len(c) <= size for c in chunks)
    assert all(c in CHINESE for c in chunks)
    # Together the chunks cover every sentence of the text.
    for sentence in CHINESE.split("。"):
        assert any(sentence in c for c in chunks) or len(sentence) > size


def test_splits_at_sentence_ends_first():
    chunks = SentenceSplitter(30, 0).split_text(CHINESE)
    assert all(c[-1] in "。！？，" or c[-1] in "台程朝" for c in chunks[:-1])
    assert chunks[0] == "长城是中国古代修建的大型军事防御工程。"


def test_overlap_repeats_the_tail_of_the_previous_chunk():
    chunks = SentenceSplitter(60, 30).split_text(CHINESE)
    shared = [a for a, b in zip(chunks, chunks[1:], strict=False)
              if any(s and s in b for s in a.split("。")[-2:])]
    assert len(shared) >= len(chunks) // 2
    assert SentenceSplitter(60, 0).split_text(CHINESE) != chunks


def test_english_keeps_spaces_and_never_cuts_words():
    chunks = SentenceSplitter(40, 0).split_text(ENGLISH)
    words = set(ENGLISH.split())
    for chunk in chunks:
        assert len(chunk) <= 40
        assert chunk in ENGLISH
        assert all(w in words for w in chunk.split())
    assert "It takes place in chloroplasts." in chunks


def test_long_unbroken_run_is_cut_by_characters():
    chunks = SentenceSplitter(10, 0).split_text("长" * 35)
    assert [len(c) for c in chunks] == [10, 10, 10, 5]


def test_token_counter_changes_chunk_sizes():
    by_chars = SentenceSplitter(100, 0).split_text(CHINESE)
    by_tokens = SentenceSplitter(100, 0, length_fn=approx_gpt2_tokens).split_text(CHINESE)
    assert len(by_tokens) > len(by_chars)
    assert all(approx_gpt2_tokens(c) <= 100 for c in by_tokens)


def test_approx_gpt2_tokens():
    assert approx_gpt2_tokens("你好") == 4
    assert approx_gpt2_tokens("hello world") == 3
    assert approx_gpt2_tokens("") == 0


@pytest.mark.parametrize("size,overlap", [(0, 0), (10, 10), (10, -1), (10.5, 1), (10, 20)])
def test_bad_sizes_are_rejected(size, overlap):
    with pytest.raises(ValueError, match="chunk_"):
        SentenceSplitter(size, overlap)


def test_split_paragraphs_drops_blank_lines():
    assert split_paragraphs("a\n\n b \n") == ["a", "b"]


def test_long_sentence_is_cut_at_commas_before_characters():
    sentence = "本鱼分布于印度太平洋区，包括东非、马达加斯加、模里西斯，以及红海等海域。"
    chunks = SentenceSplitter(16, 0).split_text(sentence)
    assert "".join(chunks) == sentence
    assert all(len(c) <= 16 for c in chunks)
    assert chunks[0] == "本鱼分布于印度太平洋区，"
    assert all(c[-1] in "，、。" for c in chunks)
