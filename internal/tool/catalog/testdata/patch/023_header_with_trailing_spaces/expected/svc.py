def setup():
    pass


def run():
    step = 2
    return step
    # end of run


def stop():
    step = 1
    return step
