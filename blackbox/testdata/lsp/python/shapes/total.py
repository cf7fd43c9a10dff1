"""Sums of areas."""

from shapes.base import Shape


def total(shapes: list[Shape]) -> float:
    """Sum the areas of shapes."""
    result = 0.0
    for s in shapes:
        result += s.area()
    return result


def describe(shapes: list[Shape]) -> str:
    """Say how big the shapes are together."""
    return "%.2f" % total(shapes)
