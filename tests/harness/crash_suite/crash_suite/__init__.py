"""A test suite whose env step or scorer dies natively (segfault, abort) on chosen tasks."""
