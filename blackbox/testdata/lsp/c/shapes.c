#include <stdio.h>
#include "shapes.h"

double square_area(const struct square *s)
{
	return s->side * s->side;
}

double total_area(const struct square *list, int n)
{
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += square_area(&list[i]);
	return sum;
}

const char *describe(const struct square *list, int n)
{
	static char buf[32];
	snprintf(buf, sizeof buf, "%.2f", total_area(list, n));
	return buf;
}
