"""The shapes."""

import math


class Shape:
    """Anything with an area."""

    def area(self) -> float:
        raise NotImplementedError


class Circle(Shape):
    """A round shape."""

    def __init__(self, r: float):
        self.r = r

    def area(self) -> float:
        return math.pi * self.r * self.r


class Square(Shape):
    """A shape with four equal sides."""

    def __init__(self, side: float):
        self.side = side

    def area(self) -> float:
        return self.side * self.side
