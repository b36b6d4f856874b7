"""Private helpers every other part may use: argument checks (:mod:`.validation`) and
one family of remote errors, one retry policy and its one loop (:mod:`.http_json`), HTTP
under a deadline for every remote client (:mod:`.transports`), where files live
(:mod:`.places`) and the version (:mod:`.version`). Nothing here imports the rest of the
course; ``make lint`` checks it.
"""
