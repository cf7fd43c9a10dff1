def a():
    x = 1
    return x


def b():
    x = 2
    return x
