#include <stdio.h>
#include "shapes.h"

int main(void)
{
	struct square list[] = {{1}, {2}};
	puts(describe(list, 2));
	return 0;
}
