"""``buildbench view``: a local web viewer of stored runs, their trajectories and artefacts."""
