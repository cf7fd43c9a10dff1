import sys


def greet(name):
    print("Hi", name)
    return 0


def main():
    greet(sys.argv[1])
    return 0
