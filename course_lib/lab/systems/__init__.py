"""Systems to measure: the named retrieval pipelines, the chapter's final system, and the
stand-in service a custom embedding endpoint talks to.

:mod:`.pipelines` (pipelines by name, so notebooks and the command line compare the same
things), :mod:`.chapter_system` (notebook 09's system with its answerability detector),
:mod:`.embedding_service` (a real HTTP embedding server on 127.0.0.1). Imports only the data.
"""
