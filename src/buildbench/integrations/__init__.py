"""Pieces shared by the bridges to other toolkits (``buildbench.gym``, ``buildbench.inspect_tasks``):
choosing a task, turning model text into an action, and making env data plain JSON."""
