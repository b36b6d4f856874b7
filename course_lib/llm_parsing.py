"""Reading what a language model wrote: robust parsers for the course's tasks.

LazyLLM's parsers trust the model's formatting: QA lines lose their first three
characters ("Q: "), so a full-width "Q：" or a preamble line breaks the pairing, and
keywords split only on ASCII commas. Models do not follow formats reliably, so these
parsers accept the usual variations and drop what they cannot read.

>>> parse_qa_pairs("好的，以下是问答：\\nQ：长城东起哪里？\\nA：山海关"
...                "\\n2. 问：西至哪里？ 答：嘉峪关")
[('长城东起哪里？', '山海关'), ('西至哪里？', '嘉峪关')]
>>> parse_keywords("关键词：长城，山海关、嘉峪关; 明朝")
['长城', '山海关', '嘉峪关', '明朝']
>>> parse_judgement("False"), parse_judgement("是的，答案解决了问题。"), parse_judgement("嗯")
(False, True, None)
"""

from __future__ import annotations

import re

# "1. ", "2) ", "(3) ", "- ", "* ", "• ", "一、" at the start of a line.
_BULLET = re.compile(r"^\s*(?:[-*•·]|\(?\d{1,2}[.)、．]|\(\d{1,2}\)"
                     r"|[一二三四五六七八九十][、.])\s*")
_PREAMBLE = re.compile(
    r"^\s*(?:好的|当然|以下是|下面是|sure|here (?:is|are)|certainly)[^\n]*?[:：]\s*$"
    r"|^\s*(?:摘要|总结|概要|summary|keywords?|关键词|关键字|问答|rewritten query|改写)\s*[:：]\s*",
    flags=re.IGNORECASE | re.MULTILINE)
_Q = r"(?:Q|q|问题|问|Question|question)"
_A = r"(?:A|a|答案|答|Answer|answer)"
_QA = re.compile(rf"{_Q}\s*\d*\s*[:：]\s*(?P<q>.+?)\s*{_A}\s*\d*\s*[:：]\s*(?P<a>.+?)"
                 rf"(?=\s*(?:\d{{1,2}}[.)、．]\s*)?{_Q}\s*\d*\s*[:：]|\Z)", flags=re.DOTALL)
_KEYWORD_SEPARATORS = re.compile(r"[，,、;；\n|/]+")
MAX_REPLY_CHARS = 20_000


def clean_reply(text: str | None, limit: int = MAX_REPLY_CHARS) -> str:
    """Strip a reply, cut a runaway one at ``limit`` characters, drop code fences."""
    if text is None:
        return ""
    text = re.sub(r"^```\w*\n?|```$", "", str(text).strip()).strip()
    return text[:limit]


def strip_preamble(text: str) -> str:
    """Remove "Sure, here is…:" lines and labels such as "摘要：" from a reply."""
    return _PREAMBLE.sub("", clean_reply(text)).strip()


def parse_keywords(text: str, limit: int = 10) -> list[str]:
    """Keywords separated by ，,、;； or new lines, bullets and numbering removed, deduplicated."""
    words = []
    for part in _KEYWORD_SEPARATORS.split(strip_preamble(text)):
        word = _BULLET.sub("", part).strip(" \t\"'“”‘’。.：:")
        if word and word not in words and len(word) <= 30:
            words.append(word)
    return words[:limit]


def parse_numbered_list(text: str, limit: int = 3) -> list[str]:
    """Items of a (numbered or bulleted) list, one per line; preambles dropped."""
    items = []
    for line in strip_preamble(text).splitlines():
        if _PREAMBLE.fullmatch(line) or not line.strip():
            continue
        item = _BULLET.sub("", line).strip()
        if item and item not in items:
            items.append(item)
    return items[:limit]


def parse_qa_pairs(text: str) -> list[tuple[str, str]]:
    """(question, answer) pairs from "Q: … A: …" text in its many spellings:
    full- or half-width colons, 问/答, numbering, pairs on one line or two, preambles."""
    pairs = []
    for match in _QA.finditer(clean_reply(text)):
        question = " ".join(match["q"].split())
        answer = " ".join(_BULLET.sub("", match["a"]).split())
        if question and answer:
            pairs.append((question, answer))
    return pairs


_YES = re.compile(r"^\s*(?:true|yes|是|对|正确|能|可以|解决|已解决|回答了)", re.IGNORECASE)
_NO = re.compile(r"^\s*(?:false|no|not|否|不|没有|未|错误|无法)", re.IGNORECASE)


def parse_judgement(text: str) -> bool | None:
    """A judge's yes/no: ``True``, ``False``, or ``None`` when the reply says neither.

    ``bool("False")`` is ``True`` in Python — the bug in the reference chapter's
    multi-step loop. Read the words instead.
    """
    reply = strip_preamble(text)
    if _NO.match(reply):
        return False
    if _YES.match(reply):
        return True
    return None
