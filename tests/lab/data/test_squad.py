"""load_squad (course_lib.lab.data.squad): malformed SQuAD files, each a clear error."""

from pathlib import Path
from typing import Any

from bad_inputs import Case, clear_error_test, squad_call

from course_lib.lab.data.datasets import DatasetFormatError, load_squad

# ==================================================================== bad inputs
# A malformed SQuAD file names the field, where it is and what was expected.

def _squad(context: object = "甲乙丙丁。", question: object = "乙？", start: object = 1,
           **paragraph: object) -> dict[str, Any]:
    """A one-question SQuAD object; any argument can be made wrong."""
    qa = {"id": "q1", "question": question, "answers": [{"text": "乙", "answer_start": start}]}
    return {"data": [{"title": "t", "paragraphs": [{"context": context, "qas": [qa],
                                                    **paragraph}]}]}


def _without(key: str) -> dict[str, Any]:
    data = _squad()
    del data["data"][0]["paragraphs"][0][key]
    return data


def _repeated_paragraph_ids() -> dict[str, Any]:
    data = _squad(id="p")
    data["data"].append(_squad(id="p")["data"][0])
    return data


def _load_missing(tmp_path: Path) -> Any:
    return load_squad(tmp_path / "none.json")


def _load_a_folder(tmp_path: Path) -> Any:
    (tmp_path / "folder.json").mkdir()
    return load_squad(tmp_path / "folder.json")


_P0 = r"s\.json: data\[0\]\.paragraphs\[0\]"
_ANSWER = _P0 + r"\.qas\[0\]\.answers\[0\]"
_BAD = DatasetFormatError


SQUAD_CASES: list[Case] = [
    Case("datasets", "paragraph-without-context", squad_call(_without("context")), _BAD,
         _P0 + r" lacks the field 'context'; expected a paragraph: \{\"context\""),
    Case("datasets", "paragraph-without-qas", squad_call(_without("qas")), _BAD,
         _P0 + r" lacks the field 'qas'; expected a paragraph: \{\"context\""),
    Case("datasets", "paragraph-not-an-object",
         squad_call({"data": [{"paragraphs": ["甲乙丙丁。"]}]}), _BAD,
         _P0 + r" must be a paragraph: \{\"context\".*; got a string"),
    Case("datasets", "numeric-question", squad_call(_squad(question=5)), _BAD,
         _P0 + r"\.qas\[0\]\.question must be a string, got 5; expected a question"),
    Case("datasets", "context-not-a-string", squad_call(_squad(context=["甲"])), _BAD,
         _P0 + r"\.context must be a string, got \['甲'\]; expected a paragraph"),
    Case("datasets", "data-is-an-object", squad_call({"data": {"title": "t"}}), _BAD,
         r"s\.json: data must be a list, got an object; expected a JSON object \{\"data\""),
    Case("datasets", "no-data-field", squad_call({"version": "1"}), _BAD,
         r"s\.json: the top level lacks the field 'data'; expected a JSON object \{\"data\""),
    Case("datasets", "answer-start-abc", squad_call(_squad(start="abc")), _BAD,
         _ANSWER + r"\.answer_start must be an integer, got 'abc'; expected an answer"),
    Case("datasets", "answer-start-true", squad_call(_squad(start=True)), _BAD,
         _ANSWER + r"\.answer_start must be an integer, got True; expected an answer"),
    Case("datasets", "answer-start-negative", squad_call(_squad(start=-2)), _BAD,
         _ANSWER + r"\.answer_start must be an integer ≥ 0 .*or -1 \(not located\), got -2"),
    Case("datasets", "escaped-lone-surrogate-in-context",
         squad_call('{"data": [{"paragraphs": [{"context": "甲\\ud800", "qas": []}]}]}'), _BAD,
         _P0 + r"\.context holds a lone surrogate '\\ud800' at character 1: .*valid Unicode"),
    Case("datasets", "escaped-lone-surrogate-in-question",
         squad_call(_squad(question="乙\ud800？")), _BAD,
         _P0 + r"\.qas\[0\]\.question holds a lone surrogate '\\ud800'.*valid Unicode"),
    Case("datasets", "top-level-list", squad_call([_squad()]), _BAD,
         r"s\.json: the top level must be a JSON object \{\"data\".*; got a list"),
    Case("datasets", "invalid-json", squad_call('{"data": ['), _BAD,
         r"s\.json is not valid JSON \(.* at line 1 column 11\); expected a JSON object"),
    Case("datasets", "empty-file", squad_call(" \n"), _BAD,
         r"s\.json is empty; expected a JSON object \{\"data\""),
    Case("datasets", "not-utf8", squad_call('{"data": ["长城"]}'.encode("gbk")), _BAD,
         r"s\.json is not UTF-8 text \(byte 0xb3 at offset 11\): save it as UTF-8"),
    Case("datasets", "repeated-paragraph-ids", squad_call(_repeated_paragraph_ids()), _BAD,
         r"s\.json: data\[1\]\.paragraphs\[0\]\.id 'p' repeats data\[0\]\.paragraphs\[0\]\.id: "
         r"paragraph ids must be unique"),
    Case("datasets", "missing-file", _load_missing, FileNotFoundError,
         r"cannot read the SQuAD file \(No such file or directory\); give the path of a "
         r"SQuAD-format JSON file: '.*none\.json'"),
    Case("datasets", "a-folder", _load_a_folder, IsADirectoryError,
         r"cannot read the SQuAD file \(Is a directory\); give the path of a SQuAD-format "
         r"JSON file: '.*folder\.json'"),
]


test_bad_input_gets_a_clear_error = clear_error_test(SQUAD_CASES)
