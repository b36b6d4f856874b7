"""What a question asks for, and whether a sentence holds something of that kind.

A question asks for a filler of some type: 哪一年 a time, 多少 a number, 谁 a person,
哪里 a place, 为什么 a reason. A paragraph can be about the right thing and still not
hold the asked-for fact; a sentence that names the question's subject *and* holds a
filler of the asked-for type is closer evidence. This module reads both sides with
rules, the same in Simplified and Traditional Chinese (each text is converted to
Simplified with OpenCC before it is read):

* :func:`asked_for` — the type, from the question's words (regular expressions);
* :func:`fillers` — the fillers of a type in a sentence: times, numbers and reasons by
  regular expressions, persons and places by jieba's part-of-speech tags (``nr``,
  ``ns``), leaving out what the question itself says.

What it does not do: questions that ask 什么 / 哪个 (about half of DRCD's) get no type
(``None``), since "what" can be anything; a year written with a reign name and one
numeral (宣統二年) is missed, and jieba's tags miss names it does not know. It reads
form, not meaning: "1890年" satisfies "哪一年" whether or not it is the year asked about.

>>> asked_for("阿森納是在哪一年成立的？"), fillers("time", "阿森納於1886年成立。")
('time', ['1886年'])
"""

from __future__ import annotations

import re

from .scripts import to_simplified
from .word_tags import tagged_words

# The first pattern that matches a question's Simplified text decides its type.
ASKED = {
    "time": re.compile(r"哪一?年|何年|年份|什么时候|何时|哪一?天|几月|几号|日期|什么时间|"
                       r"哪个(?:时期|朝代|世纪|年代|月)|什么年代|何日"),
    "number": re.compile(r"多少|几(?!乎)|多[大长高重远深宽久厚]|第几|百分之几"),
    "person": re.compile(r"谁|哪一?位|什么人|何人"),
    "place": re.compile(r"哪里|哪儿|何处|什么地方|哪[个座一]?(?:国家|城市|省|地区|地方|国)|"
                        r"位于哪|在哪"),
    "reason": re.compile(r"为什么|为何|原因|何故|怎么会|因何"),
}
KINDS = tuple(ASKED)

_TIME = re.compile(r"\d{1,4}\s*年|[〇零一二三四五六七八九十]{2,4}年|\d{1,2}\s*[月日]|"
                   r"[一二三四五六七八九十\d]+世纪|\d+年代")
_NUMBER = re.compile(r"\d+(?:\.\d+)?|[一二两三四五六七八九十百千万亿]+"
                     r"(?=[个名位座次种条部届年岁天人倍层家所只件项米公里吨元])")
_REASON = re.compile(r"因为|由于|因此|所以|导致|为了|因而|以致|使得|造成|以便")
_NAME_TAGS = {"person": "nr", "place": "ns"}


def asked_for(question: str) -> str | None:
    """The type of filler ``question`` asks for — one of :data:`KINDS` — or ``None``
    when its words do not say (a 什么 / 哪个 question).

    >>> asked_for("誰發明了電話？"), asked_for("长城有多长？"), asked_for("茶是什么？")
    ('person', 'number', None)
    """
    simplified = to_simplified(question)
    return next((kind for kind, pattern in ASKED.items() if pattern.search(simplified)), None)


def fillers(kind: str, sentence: str, question: str = "") -> list[str]:
    """The fillers of type ``kind`` in ``sentence`` (Simplified), in order, leaving out
    any that ``question`` already contains (a question that names 1890年 is not answered
    by 1890年).

    >>> fillers("person", "電話由貝爾發明。"), fillers("number", "长城长8851.8公里。")
    (['贝尔'], ['8851.8'])
    >>> fillers("time", "阿森納於1890年至1893年在恩域塔球場比賽。", "1890年至1893年時在哪個球場？")
    []
    """
    if kind not in ASKED:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    text = to_simplified(sentence)
    asked = to_simplified(question)
    if kind in _NAME_TAGS:
        found = [word for word, tag in tagged_words(text)
                 if tag.startswith(_NAME_TAGS[kind]) and len(word) >= 2]
    else:
        pattern = {"time": _TIME, "number": _NUMBER, "reason": _REASON}[kind]
        found = [match.group().replace(" ", "") for match in pattern.finditer(text)]
    return [filler for filler in dict.fromkeys(found) if filler not in asked]
