package main

func main() {
	x := 2
	println(x)
}
