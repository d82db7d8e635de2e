"""A toy third-party buildbench suite: lay a row of bricks of a requested length."""
