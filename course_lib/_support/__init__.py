"""Private helpers every other part may use: argument checks (:mod:`.validation`) and
HTTP with one retry policy and one family of errors (:mod:`.http_json`), the deadline-bounded
transport under the openai client (:mod:`.transports`), where files live (:mod:`.places`) and
the version (:mod:`.version`). Nothing here
imports the rest of the course; ``make lint`` checks it.
"""
