import sys


def greet(name):
    print("Hello,", name)
    sys.stdout.flush()
    return 0


def main():
    greet(sys.argv[1])
    return 0
