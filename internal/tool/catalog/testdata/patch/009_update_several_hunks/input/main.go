package main

import "fmt"

func add(a, b int) int {
	return a + b
}

func sub(a, b int) int {
	return a - b
}

func main() {
	fmt.Println(add(1, 2))
	fmt.Println(sub(3, 1))
}
