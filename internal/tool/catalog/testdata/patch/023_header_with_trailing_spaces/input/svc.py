def setup():
    pass


def run():
    step = 1
    return step


def stop():
    step = 1
    return step
