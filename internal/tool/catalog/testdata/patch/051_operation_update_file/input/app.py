def greet():
    print("Hi")


def main():
    greet()
