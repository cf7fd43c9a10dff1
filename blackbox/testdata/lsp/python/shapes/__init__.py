"""Shapes and their areas."""
