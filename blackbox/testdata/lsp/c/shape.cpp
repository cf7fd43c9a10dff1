// A C++ corner of the project: an interface and its implementations.
struct Shape {
	virtual double area() const = 0;
	virtual ~Shape() {}
};

struct Circle : Shape {
	double r;
	double area() const override { return 3.14159 * r * r; }
};

struct Rect : Shape {
	double w, h;
	double area() const override { return w * h; }
};

double twice(const Shape &s)
{
	return 2 * s.area();
}
