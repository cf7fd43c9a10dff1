// Package shapes measures shapes.
package shapes

import "math"

// Shape is anything with an area.
type Shape interface {
	Area() float64
}

// Circle is a round shape.
type Circle struct{ R float64 }

// Area returns the circle's area.
func (c Circle) Area() float64 { return math.Pi * c.R * c.R }

// Square is a shape with four equal sides.
type Square struct{ Side float64 }

// Area returns the square's area.
func (s Square) Area() float64 { return s.Side * s.Side }
