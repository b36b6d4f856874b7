"""The course's laboratory: what the notebooks use to *measure* the RAG ideas, in rooms by job.

=================  ==========================================================================
room               what it holds (each room imports only the rooms above it in this table)
=================  ==========================================================================
:mod:`.data`       SQuAD files, knowledge bases, question sets (CMRC 2018, DRCD)
:mod:`.systems`    named pipelines, the chapter's system and its detector, a stand-in server
:mod:`.measure`    evaluation, the statistics, the reproduced tables, the detector measured
:mod:`.show`       pictures and widgets
:mod:`.teaching`   exercises and their checks, the classroom, grading in a sandbox
=================  ==========================================================================

On top, the command line (:mod:`.cli`, its argument checks in :mod:`.cli_arguments`). Nothing
at the package root (the ideas) imports from here; ``make lint`` checks both orders.

The modules lived flat in ``lab/`` until the course's fourth library; a notebook from then
(``from course_lib.lab.datasets import load_cmrc2018_kb``) still runs: the old name loads the
same module as the new one and warns (DeprecationWarning) with the new name.

>>> from course_lib.lab.wins import win_loss        # the flat name of before
>>> win_loss.__module__
'course_lib.lab.measure.wins'
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

# Each module's room; the old flat name course_lib.lab.<module> resolves through this table.
ROOMS: dict[str, tuple[str, ...]] = {
    "data": ("squad", "datasets", "kb_document", "settings", "question_bank", "vague_queries",
             "answerability_set"),
    "systems": ("pipelines", "chapter_system", "detector", "embedding_service"),
    "measure": ("evaluation", "significance", "trec", "comparison", "folds", "wins", "claims",
                "reproduce", "stage_ablations", "rag_evaluation", "answerability_evaluation",
                "answerability_tiers", "article_tiers", "swap_reading"),
    "show": ("figures", "plots", "comparison_chart", "widgets"),
    "teaching": ("answer_keys", "answer_space", "exercise_catalog", "exercises",
                 "written_answers", "classroom", "grading", "sandbox", "try_it_checks"),
}
# The flat names of before the rooms (answerability_set and detector were never flat).
_MOVED = {f"{__name__}.{module}": f"{__name__}.{room}.{module}"
          for room, modules in ROOMS.items() for module in modules
          if module not in ("answerability_set", "detector")}


class _OldName(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``course_lib.lab.<module>`` of the flat layout: the same module object as its
    new name (one module, one state), with a warning naming the new name."""

    def find_spec(self, fullname: str, path: object, target: object = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} is now {_MOVED[spec.name]}", DeprecationWarning,
                      stacklevel=2)
        module = importlib.import_module(_MOVED[spec.name])
        spec.loader_state = module.__spec__  # the import system overwrites the module's spec
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = module.__spec__.loader_state  # back to its own (reload, pickle)


if not any(isinstance(finder, _OldName) for finder in sys.meta_path):
    sys.meta_path.append(_OldName())
