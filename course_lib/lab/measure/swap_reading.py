"""An annotator's reading of the swapped questions (notebook 12), kept as data.

A swapped question (:func:`~course_lib.lab.measure.answerability_tiers.swap_subject`) is built by
rule, and no rule proves it unanswerable: someone has to read a sample. This module holds
one such reading of trial's swapped tier, and summarises it only for the very sample that
was read — it computes nothing about questions nobody read.

>>> sorted(set(code[0] for code in SWAP_READING.values()))
['a', 'm', 'u']
"""

from __future__ import annotations

import random

from .answerability_tiers import TieredSet

# An AI annotator read a seeded sample of 50 swapped questions of trial (reading_sample)
# against every paragraph that mentions the new name, on 2026-12-01; three of its labels were
# checked by hand. Per question: "u" unanswerable and well formed, "m" malformed (the swap broke
# it: a name fragment or a common word swapped; still unanswerable), "a" answerable after all;
# then 1 if the subject was detected right, 0 if it was a fragment of a longer name or a
# mis-tagged word. A judgement, not a computation: kept as data.
SWAP_READING = {
    1020: "u0", 1037: "m0", 1048: "m0", 1050: "u0", 1051: "u0", 1071: "m0", 1075: "m1",
    1111: "u0", 1128: "u1", 1132: "m0", 1144: "u0", 1155: "m0", 1158: "u1", 1161: "u1",
    1169: "u1", 1181: "m0", 1183: "m0", 1197: "m0", 1207: "u1", 1215: "m0", 1222: "m0",
    1241: "m1", 1244: "m1", 1248: "a1", 1258: "m0", 1261: "u1", 1272: "u1", 1286: "u1",
    1298: "m0", 1308: "m0", 1312: "u1", 1316: "m0", 1350: "m0", 1361: "m0", 1373: "u1",
    1386: "u0", 1388: "u1", 1401: "u0", 1409: "m0", 1414: "m0", 1424: "u1", 1432: "m0",
    1435: "m0", 1455: "u1", 1456: "u1", 1460: "m0", 1461: "m0", 1464: "m0", 1465: "u1",
    1470: "m1",
}


def reading_sample(tiered: TieredSet, n: int = 50, seed: int = 0) -> list[int]:
    """A seeded sample of ``n`` swapped questions (indices into ``tiered.all``), to read."""
    return sorted(random.Random(seed).sample(tiered.tiers["swapped subject"], n))


def reading_summary(tiered: TieredSet) -> dict[str, int]:
    """The counts of :data:`SWAP_READING`, after checking that it read exactly
    :func:`reading_sample` of ``tiered`` (trial, seed 0) — a changed tier must be read
    again, not summarised from an old reading."""
    if reading_sample(tiered) != sorted(SWAP_READING):
        raise ValueError("the swapped tier is not the one that was read (trial, seed 0): "
                         "read reading_sample(tiered) again and update SWAP_READING")
    labels = [code[0] for code in SWAP_READING.values()]
    return {"read": len(labels), "unanswerable, well formed": labels.count("u"),
            "malformed (also unanswerable)": labels.count("m"),
            "answerable after all": labels.count("a"),
            "subject detected right": sum(code[1] == "1" for code in SWAP_READING.values())}
