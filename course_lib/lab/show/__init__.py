"""Showing: the course's pictures (plotly, drawn as PNG so an untrusted notebook shows them)
and its widgets.

:mod:`.figures` (how a picture is shown and laid out), :mod:`.plots` (the course's charts),
:mod:`.comparison_chart` (one notebook's results as a chart), :mod:`.widgets` (a chat panel
and the static views it shows). Imports the measuring rooms below it, never the teaching.
"""
