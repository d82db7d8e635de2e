"""SceneReVis's model judges, and the rule judges that stand in for them offline.

* :mod:`.semantic`: the judge behind the reward's semantic terms (spec §4.3: improvement,
  relevance, presence, scene scores), asked turn by turn by :mod:`..reward`;
* :mod:`.evaluation`: the evaluation judge of a final scene (spec §5.2: Ra, Spa, Ac), settled
  by :mod:`..protocols` and read by :mod:`..score`.

Every rule judge's label says that its answers are not comparable with the paper.
"""
