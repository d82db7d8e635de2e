"""LEGO-Eval: tool-augmented evaluation of 3D indoor scenes against fine-grained instructions.

The evaluator is the agent: it reads an instruction with its constraints and a house, calls
the 21 tools of :mod:`.tools`, and submits a verdict per constraint; the suite scores the
verdicts against labels (Table 1 of the paper). See ``README.md`` in this folder.
"""
