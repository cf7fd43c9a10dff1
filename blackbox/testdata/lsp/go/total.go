package shapes

// Total sums the areas of shapes.
func Total(shapes ...Shape) float64 {
	sum := 0.0
	for _, s := range shapes {
		sum += s.Area()
	}
	return sum
}

// Describe says how big the shapes are together.
func Describe(shapes ...Shape) string {
	return format(Total(shapes...))
}
