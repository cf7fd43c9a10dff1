#ifndef SHAPES_H
#define SHAPES_H

struct square {
	double side;
};

double square_area(const struct square *s);
double total_area(const struct square *list, int n);
const char *describe(const struct square *list, int n);

#endif
