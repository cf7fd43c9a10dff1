package main

import (
	"fmt"
	"os"
)

func add(a, b int) int {
	return a + b
}

func sub(a, b int) int {
	return b - a
}

func main() {
	fmt.Println(add(1, 2))
	fmt.Println(sub(3, 1))
	os.Exit(0)
}
